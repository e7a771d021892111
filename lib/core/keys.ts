/**
 * The single-table layout. Every item Sluice writes is keyed here, so the layout can be read in one place.
 * Offsets in sort keys are zero-padded so lexical order is numeric order.
 */
export const pad = (n: number, width = 20): string => String(n).padStart(width, '0');

export const keys = {
  /** One registry item per topic name, listed by querying the `TOPICS` partition. */
  topic: (name: string) => ({ pk: 'TOPICS', sk: name }),
  topicsPk: 'TOPICS',
  /** A deleted topic's id, kept until maintenance has purged its data. */
  deletedTopic: (topicId: string) => ({ pk: 'DELETED_TOPICS', sk: topicId }),
  deletedTopicsPk: 'DELETED_TOPICS',
  partitionPk: (topicId: string, partition: number) => `P#${topicId}#${partition}`,
  /**
   * A consumer connection waiting on a partition (lib/core/log/waiters.ts): all of a partition's
   * waiters under one key, so the notifier finds them with one Query.
   */
  waiter: (topicId: string, partition: number, connectionId: string) => ({
    pk: `W#${topicId}#${partition}`,
    sk: `C#${connectionId}`,
  }),
  waitersPk: (topicId: string, partition: number) => `W#${topicId}#${partition}`,
  /** A waiting connection's current registration (which partitions, which generation) and its caller. */
  waitingConnection: (connectionId: string) => ({ pk: `WC#${connectionId}`, sk: 'WAIT' }),
  connectionCaller: (connectionId: string) => ({ pk: `WC#${connectionId}`, sk: 'CALLER' }),
  /** Leader epoch, replicas, ISR, next offset, log start, the recent tail of commits, producer state. */
  partitionState: (topicId: string, partition: number) => ({
    pk: keys.partitionPk(topicId, partition),
    sk: 'STATE',
  }),
  /** Batch index page: a pass's entries, by the first one's base offset (see log/batch-index.ts). */
  batch: (topicId: string, partition: number, baseOffset: number) => ({
    pk: keys.partitionPk(topicId, partition),
    sk: `B#${pad(baseOffset)}`,
  }),
  batchPrefix: 'B#',
  /**
   * Segment index item: a rolled segment's chunks, by the segment's base offset (see
   * log/segments/segment-index.ts). Beside the batch index, not in it, so the pages a roll replaces stay
   * in place as the local tier's copy until local retention retires them.
   */
  segment: (topicId: string, partition: number, baseOffset: number) => ({
    pk: keys.partitionPk(topicId, partition),
    sk: `G#${pad(baseOffset)}`,
  }),
  segmentPrefix: 'G#',
  /**
   * Sparse time index: a run of batches in which the partition's running max timestamp rose to `ts`,
   * first rising at `baseOffset` (see log/time-index.ts).
   */
  timeIndex: (topicId: string, partition: number, ts: number, baseOffset: number) => ({
    pk: keys.partitionPk(topicId, partition),
    sk: `T#${pad(ts, 15)}#${pad(baseOffset)}`,
  }),
  timePrefix: 'T#',
  /** A JSON produce's Idempotency-Key once it has left the partition item's recent list. */
  idempotencyKey: (topicId: string, partition: number, hash: string) => ({
    pk: keys.partitionPk(topicId, partition),
    sk: `K#${hash}`,
  }),
  /**
   * An idempotent producer epoch's batches in one materialization pass, keyed by the offset where the
   * pass ends (see log/producer-history.ts), so a retried duplicate finds its offset without the hot
   * partition item carrying every producer's history (expires with the producer).
   */
  producerBatches: (
    topicId: string,
    partition: number,
    producerId: number,
    epoch: number,
    passEnd: number,
  ) => ({
    pk: keys.partitionPk(topicId, partition),
    sk: `${keys.producerBatchesPrefix(producerId, epoch)}${pad(passEnd)}`,
  }),
  producerBatchesPrefix: (producerId: number, epoch: number) => `S#${producerId}#${epoch}#`,
  /**
   * An aborted transaction (Kafka's AbortedTxn), keyed by its ABORT marker's offset, once the marker has
   * left the partition item's tail (see transactions/lso.ts).
   */
  abortedTransaction: (topicId: string, partition: number, markerOffset: number) => ({
    pk: keys.partitionPk(topicId, partition),
    sk: `A#${pad(markerOffset)}`,
  }),
  abortedPrefix: 'A#',
  /** A transactional.id's coordinator state, one item each, spread over a few keys for listing. */
  transaction: (transactionalId: string, shard: number) => ({ pk: `TXN#${shard}`, sk: transactionalId }),
  transactionPk: (shard: number) => `TXN#${shard}`,
  /** Which transactional.id a producer id belongs to (written once, when the id is allocated). */
  transactionalProducer: (producerId: number) => ({ pk: 'TXN_PRODUCERS', sk: String(producerId) }),
  /** Producer id allocation (InitProducerId). */
  producerIds: { pk: 'PRODUCER_IDS', sk: 'COUNTER' },
  /** When maintenance last scanned for orphan objects (orphanScanIntervalMs). */
  orphanScan: { pk: 'MAINTENANCE', sk: 'ORPHAN_SCAN' },
} as const;

/**
 * Object keys of a topic's data: under one prefix per topic (purge and orphan collection list it),
 * fanned out by the id's first characters so no single folder grows without bound.
 */
export const dataObjectKey = (topicId: string, id: string): string =>
  `${dataObjectPrefix(topicId)}${id.slice(0, 2)}/${id}`;
export const dataObjectPrefix = (topicId: string): string => `d/${topicId}/`;

/**
 * Segment objects live in the segment store under one prefix per topic, with the partition and base
 * offset in the key (readable in a bucket listing) and a fresh id: a segment is never overwritten, not
 * even by a second roll of the same range.
 */
export const segmentObjectKey = (
  topicId: string,
  partition: number,
  baseOffset: number,
  id: string,
): string => `${segmentObjectPrefix(topicId)}${partition}/${pad(baseOffset)}-${id}`;
export const segmentObjectPrefix = (topicId: string): string => `g/${topicId}/`;
export const isSegmentObjectKey = (key: string): boolean => key.startsWith('g/');

export const offsetFromBatchSk = (sk: string): number => Number(sk.slice(2));
