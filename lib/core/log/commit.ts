/**
 * The commit: one conditional UpdateItem on the partition state item, with no read before it. The
 * update's operands are evaluated against the item before the update, so `nextOffset + n` and the
 * returned new image give this batch's base offset atomically, in the same order as the tail list.
 * The condition fences stale leaders (leader epoch and ISR, lib/core/replication/commit-clauses.ts),
 * and deleted topics (`deleted`, set by a topic delete), moves replica LEOs and the high watermark,
 * enforces idempotent-producer sequences and Idempotency-Keys; on failure the store hands back the
 * current item, which tells us why — a duplicate is answered from it with the original offset and no
 * second read.
 */
import type { Condition, MetadataStore, UpdateAction } from '../../ports/metadata-store.js';
import { ConditionFailedError } from '../../ports/metadata-store.js';
import { SluiceError } from '../../../protocol/errors.js';
import { keys } from '../keys.js';
import { TopicGoneError } from './context.js';
import { markHash } from './idempotency.js';
import { logSizeChange } from './log-size.js';
import type { PartitionState, TailEntry } from './partition-state.js';
import { asPartitionState, encodeTailEntry, tailOffsets } from './partition-state.js';
import { findMaterializedBatch } from './producer-history.js';
import type { ReplicaWrite } from '../replication/commit-clauses.js';
import { explainReplicaFailure, replicaCommitClauses } from '../replication/commit-clauses.js';

export interface ProducerBatchInfo {
  producerId: number;
  producerEpoch: number;
  firstSequence: number;
  lastSequence: number;
}

export interface CommitInput {
  topicId: string;
  topic: string;
  partition: number;
  /** Who wrote the data where: leader epoch, ISR, acks (the commit is fenced on them). */
  replica: Omit<ReplicaWrite, 'span' | 'now'>;
  entry: TailEntry;
  producer?: ProducerBatchInfo;
  /**
   * A transactional batch (KIP-98): records the transaction's first offset here (`tx`), which holds the
   * last stable offset back. `verified`: the coordinator confirmed this partition is in the producer's
   * open transaction (KIP-890); without that the commit holds only while the transaction is already
   * open here, and answers `unverified` otherwise.
   */
  transactional?: { verified: false } | { verified: true; transactionNumber: number };
  /** Idempotency-Key hash and the ikGen read with the duplicate check (before its K# read). */
  idempotency?: { hash: string; generation: number };
  now: number;
}

/**
 * OUT_OF_ORDER_SEQUENCE_NUMBER for a batch ahead of the producer's next sequence: earlier batches of
 * the same epoch are not committed, perhaps not yet (they may be in flight beside this one).
 */
export class SequenceGapError extends SluiceError {
  constructor(message: string) {
    super('OUT_OF_ORDER_SEQUENCE_NUMBER', message);
    this.name = 'SequenceGapError';
  }
}

export type CommitOutcome =
  /** `state`: the partition item right after this commit (its new image). */
  | { kind: 'committed'; baseOffset: number; logStartOffset: number; state: PartitionState }
  /**
   * `entry`: the original's tail entry while it is in the tail; `maxTimestamp`: the original's largest
   * timestamp (its append time on a LogAppendTime topic), from the entry or the producer history;
   * undefined only from a history item written before the history kept it.
   */
  | {
      kind: 'duplicate';
      baseOffset: number;
      entry: TailEntry | undefined;
      maxTimestamp: number | undefined;
      logStartOffset: number;
    }
  /** The Idempotency-Key list was trimmed twice since it was read, or holds the key: check again. */
  | { kind: 'retry' }
  /** The producer's transaction is not open in this partition yet: verify with its coordinator, retry. */
  | { kind: 'unverified' }
  /** An ISR store's LEO is behind the leader's (acks=1 data not replicated yet): catch it up, retry. */
  | { kind: 'lagging' };

export const commitBatch = async (store: MetadataStore, input: CommitInput): Promise<CommitOutcome> => {
  const { entry, producer, idempotency } = input;
  const replica = replicaCommitClauses({ ...input.replica, span: entry.n, now: input.now });
  // `deleted` fences writers whose cached topic id outlived a delete (and a re-create of the name).
  const conditions: Condition[] = [...replica.conditions, { notExists: 'deleted' }];
  const actions: UpdateAction[] = [
    { set: 'nextOffset', add: entry.n },
    { set: 'tail', append: [encodeTailEntry(entry, input.topicId)] },
    logSizeChange(entry.l),
    ...replica.actions,
  ];
  if (producer) {
    const pid = String(producer.producerId);
    conditions.push(producerSequenceCondition(pid, producer));
    actions.push({
      set: ['pr', pid],
      value: { e: producer.producerEpoch, s: producer.lastSequence, t: input.now },
    });
  }
  if (producer && input.transactional) {
    const pid = String(producer.producerId);
    // Items from before transactions lack the map: the producer adds it first (ensureTransactionMap).
    conditions.push({ exists: 'tx' });
    if (!input.transactional.verified) conditions.push({ exists: ['tx', pid] });
    // Verified for an open transaction: not once the partition holds that transaction's marker (a late
    // batch of an ended transaction would otherwise open a transaction here that nothing ever closes).
    else
      conditions.push({
        or: [
          { notExists: ['mk', pid] },
          { path: ['mk', pid], op: '<', value: input.transactional.transactionNumber },
        ],
      });
    actions.push({ set: ['tx', pid], copyOf: 'nextOffset', keepExisting: true });
  }
  if (idempotency) {
    // At most one pass past the check's generation: the keys that pass removed were found by the check
    // in their K# items (lib/core/log/materialize.ts keeps them in `ik` one pass longer).
    conditions.push({ path: 'ikGen', op: '<=', value: idempotency.generation + 1 });
    conditions.push({ not: { path: 'ik', contains: idempotency.hash } });
    actions.push({ set: 'ik', append: [idempotency.hash] });
  }
  try {
    // The new image: the update is atomic, so this batch's base offset is the new nextOffset less its
    // span, and the image lets the committer materialize the tail without reading the item again.
    const updated = await store.update(keys.partitionState(input.topicId, input.partition), actions, {
      condition: { and: conditions },
      returnValues: 'allNew',
    });
    const state = asPartitionState(updated!);
    return {
      kind: 'committed',
      baseOffset: state.nextOffset - entry.n,
      logStartOffset: state.logStartOffset,
      state,
    };
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
    return explainFailure(store, input, error.current ? asPartitionState(error.current) : undefined);
  }
};

/**
 * Kafka's rule: the next batch of a known producer epoch continues the sequence; a new producer or a
 * bumped epoch starts at sequence 0.
 */
const producerSequenceCondition = (pid: string, p: ProducerBatchInfo): Condition => {
  const continues: Condition = {
    and: [
      { path: ['pr', pid, 'e'], op: '=', value: p.producerEpoch },
      { path: ['pr', pid, 's'], op: '=', value: p.firstSequence - 1 },
    ],
  };
  if (p.firstSequence !== 0) return continues;
  return {
    or: [continues, { notExists: ['pr', pid] }, { path: ['pr', pid, 'e'], op: '<', value: p.producerEpoch }],
  };
};

const explainFailure = async (
  store: MetadataStore,
  input: CommitInput,
  state: PartitionState | undefined,
): Promise<CommitOutcome> => {
  const where = `${input.topic}-${input.partition}`;
  if (!state || state.deleted === true) {
    throw new TopicGoneError(input.topic, input.partition);
  }
  const replicaFailure = explainReplicaFailure(input.replica, state);
  if (replicaFailure === 'fenced-epoch') {
    throw new SluiceError(
      'FENCED_LEADER_EPOCH',
      `partition ${where} is at leader epoch ${state.leaderEpoch}, this write started under ${input.replica.leaderEpoch}`,
    );
  }
  if (replicaFailure === 'fenced-isr') {
    throw new SluiceError(
      'FENCED_LEADER_EPOCH',
      `partition ${where} changed its ISR to [${state.isr.join(', ')}] since this write went to [${input.replica.isr.join(', ')}]`,
    );
  }
  if (replicaFailure === 'lagging') return { kind: 'lagging' };
  if (replicaFailure === 'leader-diverged') {
    throw new SluiceError(
      'KAFKA_STORAGE_ERROR',
      `the leader ${state.leader} of ${where} has LEO ${state.leo[state.leader] ?? 'none'} but the log ends at ${state.nextOffset}`,
    );
  }
  if (input.producer) {
    const p = input.producer;
    const current = state.pr[String(p.producerId)];
    if (current && current.e > p.producerEpoch) {
      throw new SluiceError(
        'INVALID_PRODUCER_EPOCH',
        `producer ${p.producerId} epoch ${p.producerEpoch} is fenced by epoch ${current.e} on ${where}`,
      );
    }
    const marked = state.mk?.[String(p.producerId)];
    if (
      input.transactional?.verified &&
      marked !== undefined &&
      marked >= input.transactional.transactionNumber
    ) {
      throw new SluiceError(
        'INVALID_TXN_STATE',
        `producer ${p.producerId}'s transaction ended on ${where} before this batch arrived`,
      );
    }
    if (
      input.transactional &&
      !input.transactional.verified &&
      state.tx?.[String(p.producerId)] === undefined &&
      (!current || current.e <= p.producerEpoch)
    )
      return { kind: 'unverified' };
    if (current && current.e === p.producerEpoch && p.firstSequence <= current.s) {
      const found = await findProducerBatch(store, input, state, p);
      if (found) return { kind: 'duplicate', ...found, logStartOffset: state.logStartOffset };
    }
    const expected = current && current.e === p.producerEpoch ? current.s + 1 : 0;
    const message = `producer ${p.producerId} epoch ${p.producerEpoch} sent sequence ${p.firstSequence} on ${where}; expected ${expected}`;
    // Ahead of the expected sequence: the batches between may still be on their way (a producer with
    // several requests in flight), unlike a sequence already passed.
    if (p.firstSequence > expected) throw new SequenceGapError(message);
    if (p.firstSequence < expected) throw new SluiceError('OUT_OF_ORDER_SEQUENCE_NUMBER', message);
    // The sequence continues: another condition failed (the Idempotency-Key's, below).
  }
  if (input.idempotency) {
    if (state.ik.includes(input.idempotency.hash)) {
      const offsets = tailOffsets(state);
      const i = state.tail.findIndex((e) => e.k !== undefined && markHash(e.k) === input.idempotency!.hash);
      if (i >= 0)
        return {
          kind: 'duplicate',
          baseOffset: offsets[i]!,
          entry: state.tail[i],
          maxTimestamp: state.tail[i]!.t,
          logStartOffset: state.logStartOffset,
        };
      // Committed meanwhile and already moved out of the tail: its K# item answers (check again).
      return { kind: 'retry' };
    }
    if (state.ikGen > input.idempotency.generation + 1) return { kind: 'retry' };
  }
  throw new SluiceError(
    'UNKNOWN_SERVER_ERROR',
    `commit on ${where} failed a condition that should have held`,
    {
      retriable: true,
    },
  );
};

/** A retried batch of the producer: in the tail, or in the producer's history once it left the tail. */
const findProducerBatch = async (
  store: MetadataStore,
  input: CommitInput,
  state: PartitionState,
  p: ProducerBatchInfo,
): Promise<
  { baseOffset: number; entry: TailEntry | undefined; maxTimestamp: number | undefined } | undefined
> => {
  const offsets = tailOffsets(state);
  const i = state.tail.findIndex(
    (e) =>
      e.p === p.producerId && e.e === p.producerEpoch && e.q === p.firstSequence && e.z === p.lastSequence,
  );
  if (i >= 0) return { baseOffset: offsets[i]!, entry: state.tail[i], maxTimestamp: state.tail[i]!.t };
  // Not in the tail of the image we hold, so it left before that image: its pass's item is written.
  const old = await findMaterializedBatch(store, input.topicId, input.partition, p);
  return old && { baseOffset: old.baseOffset, entry: undefined, maxTimestamp: old.maxTimestamp };
};
