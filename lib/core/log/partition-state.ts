/**
 * The partition state item: the one item every commit updates. It holds the leader epoch that fences
 * writers, the next offset (assigned atomically by the commit's update expression), the log start, the
 * recent tail of committed batches (not yet in the batch index), and idempotent-producer state.
 * Fields carry Kafka's names; the stored attribute names are short (partition-codec.ts).
 */
import type { ControlType } from '../../../protocol/record-batch/index.js';

/** A committed batch (one or more RecordBatches stored contiguously in one object). */
export interface TailEntry {
  /** The object holding the batches, and their byte range in it. */
  objectKey: string;
  position: number;
  sizeInBytes: number;
  /** Offsets the entry spans (sum of each batch's lastOffsetDelta + 1). */
  offsetCount: number;
  /** Records in the entry (may be fewer than offsetCount after compaction). */
  recordCount: number;
  /** Max and first record timestamps. */
  maxTimestamp: number;
  firstTimestamp: number;
  /** Idempotent producer id, epoch, first and last sequence (absent for a non-idempotent entry). */
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
  lastSequence?: number;
  /** Idempotency-Key mark of a JSON produce: hash, request fingerprint, request time (idempotency.ts). */
  idempotencyMark?: string;
  /** A transaction marker (control batch) and its type (lib/core/transactions/markers.ts). */
  controlType?: ControlType;
  /** An ABORT marker's transaction: its first offset in this partition (Kafka's AbortedTxn.firstOffset). */
  transactionFirstOffset?: number;
}

export interface ProducerState {
  producerEpoch: number;
  lastSequence: number;
  /** When it last appended here (Kafka's lastTimestamp: producer.id.expiration.ms counts from it). */
  lastTimestamp: number;
}

export interface PartitionState {
  topic: string;
  partition: number;
  leader: string;
  leaderEpoch: number;
  replicas: string[];
  isr: string[];
  nextOffset: number;
  logStartOffset: number;
  /** Offset of the first tail entry. */
  tailBase: number;
  tail: TailEntry[];
  /** Producer id → state. */
  producers: Record<string, ProducerState>;
  /**
   * Idempotency-Key hashes of tail entries, for the commit condition, in commit order; the first
   * `idempotencyKeysMoved` of them belong to entries that already left the tail (their K# items are written).
   */
  idempotencyKeys: string[];
  /**
   * Bumped by every pass that changes `idempotencyKeys` (lib/core/log/materialize.ts) and by truncations: a keyed
   * commit holds while it is at most one past the generation its duplicate check read.
   */
  idempotencyKeysGeneration: number;
  /**
   * How many hashes at the head of `idempotencyKeys` the last pass moved out of the tail: the next pass removes them
   * (absent: 0). One pass late, so a check that read generation g saw every key removed by g + 1.
   */
  idempotencyKeysMoved?: number;
  /** Running max timestamp of everything in the batch index (for the sparse time index). */
  maxTimestampSoFar: number;
  /** High watermark: the smallest LEO in the ISR, owned by lib/core/replication (never moves back). */
  highWatermark: number;
  /** Log end offset per replica store: it holds every committed batch below this offset. */
  logEndOffsets: Record<string, number>;
  /** When each replica last held everything up to the leader's LEO (Kafka's lastCaughtUpTimeMs). */
  lastCaughtUpTimeMs: Record<string, number>;
  /**
   * Open transactions: producer id → the offset of its first transactional batch here (Kafka's
   * ProducerStateManager.ongoingTxns; see lib/core/transactions/lso.ts). The last stable offset is the
   * smallest of these and the high watermark.
   */
  ongoingTransactions: Record<string, number>;
  /**
   * Producer id → the number of its last transaction whose marker this partition holds, for transactions
   * that end without an epoch bump (transaction version 1; lib/core/transactions/markers.ts).
   */
  lastMarkedTransactions: Record<string, number>;
  /** Set when the topic is deleted, before maintenance purges the item: every commit tests it. */
  deleted?: boolean;
  /** Stored bytes of [logStartOffset, nextOffset) (stored `sz`; log-size.ts); undefined when unknown. */
  logSizeBytes?: number;
}

/** A new partition: empty at offset 0, the first replica leading, every replica in sync and caught up now. */
export const newPartitionState = (
  topic: string,
  partition: number,
  replicas: string[],
  now = 0,
): PartitionState => ({
  topic,
  partition,
  leader: replicas[0] ?? 's0',
  leaderEpoch: 0,
  replicas,
  isr: [...replicas],
  nextOffset: 0,
  logStartOffset: 0,
  tailBase: 0,
  tail: [],
  producers: {},
  idempotencyKeys: [],
  idempotencyKeysGeneration: 0,
  maxTimestampSoFar: -1,
  highWatermark: 0,
  logEndOffsets: Object.fromEntries(replicas.map((r) => [r, 0])),
  lastCaughtUpTimeMs: Object.fromEntries(replicas.map((r) => [r, now])),
  ongoingTransactions: {},
  lastMarkedTransactions: {},
  logSizeBytes: 0,
});

/** Base offsets of the tail entries, from tailBase and each entry's span. */
export const tailOffsets = (state: Pick<PartitionState, 'tailBase' | 'tail'>): number[] => {
  const out: number[] = [];
  let next = state.tailBase;
  for (const entry of state.tail) {
    out.push(next);
    next += entry.offsetCount;
  }
  return out;
};
