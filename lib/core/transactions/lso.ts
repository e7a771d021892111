/**
 * The read side of transactions: the last stable offset and the aborted transactions a read_committed
 * fetch returns (Kafka's FetchResponse.abortedTransactions). The filter that drops aborted records, as
 * Kafka's consumers do, is protocol's (the SDK's consumer applies the same one).
 */
import type { AbortedTransaction } from '../../../protocol/record-batch/index.js';
import { AbortedFilter } from '../../../protocol/record-batch/index.js';
import type { MetadataStore } from '../../ports/metadata-store.js';
import { keys, pad } from '../keys.js';
import type { PartitionState, TailEntry } from '../log/partition-state.js';
import { tailOffsets } from '../log/partition-state.js';
import { highWatermarkOf } from '../replication/replica-state.js';

export type IsolationLevel = 'read_uncommitted' | 'read_committed';

export type { AbortedTransaction };
export { AbortedFilter };

/**
 * Kafka's LSO: the first offset of the earliest open transaction, or the high watermark. A transaction
 * opens at the log end (at or past the HW), so the LSO never moves back.
 */
export const lastStableOffset = (
  state: Pick<PartitionState, 'highWatermark' | 'ongoingTransactions'>,
): number => {
  let lso = highWatermarkOf(state);
  for (const first of Object.values(state.ongoingTransactions)) lso = Math.min(lso, first);
  return lso;
};

/** The aborted-transaction index item of an ABORT marker, keyed by the marker's offset (Kafka's lastOffset). */
export const abortedIndexItem = (
  topicId: string,
  partition: number,
  markerOffset: number,
  entry: Pick<TailEntry, 'producerId' | 'transactionFirstOffset'>,
) => ({
  ...keys.abortedTransaction(topicId, partition, markerOffset),
  p: entry.producerId!,
  f: entry.transactionFirstOffset!,
});

/**
 * Retention's part: the aborted-index items whose ABORT marker is below the new log start. No read
 * starts below the log start, and a read from `from` needs only markers at or after it, so they are
 * never asked for again (Kafka deletes a segment's .txnindex with the segment).
 */
export const dropAbortedBelow = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  logStartOffset: number,
): Promise<number> => {
  if (logStartOffset <= 0) return 0;
  let dropped = 0;
  let cursor: string | undefined;
  do {
    const page = await store.query({
      pk: keys.partitionPk(topicId, partition),
      sk: {
        between: [
          keys.abortedTransaction(topicId, partition, 0).sk,
          keys.abortedTransaction(topicId, partition, logStartOffset - 1).sk,
        ],
      },
      consistent: true,
      ...(cursor === undefined ? {} : { cursor }),
    });
    if (page.items.length > 0) {
      await store.batchWrite({ deletes: page.items.map(({ pk, sk }) => ({ pk, sk })) });
      dropped += page.items.length;
    }
    cursor = page.cursor;
  } while (cursor !== undefined);
  return dropped;
};

/**
 * The aborted transactions overlapping [from, to): those whose ABORT marker is at or after `from` and
 * whose first offset is before `to`, by first offset. From the tail (markers not yet materialized) and
 * the index items (those that were).
 */
export const abortedTransactions = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  state: PartitionState,
  from: number,
  to: number,
): Promise<AbortedTransaction[]> => {
  const found = new Map<string, AbortedTransaction>();
  const add = (producerId: number, firstOffset: number, markerOffset: number) => {
    if (markerOffset >= from && firstOffset < to)
      found.set(`${producerId}#${firstOffset}`, { producerId, firstOffset });
  };
  if (from < state.tailBase) {
    let cursor: string | undefined;
    do {
      const page = await store.query({
        pk: keys.partitionPk(topicId, partition),
        sk: {
          between: [
            keys.abortedTransaction(topicId, partition, from).sk,
            `${keys.abortedPrefix}${pad(state.tailBase)}`,
          ],
        },
        consistent: true,
        ...(cursor === undefined ? {} : { cursor }),
      });
      for (const item of page.items) {
        const markerOffset = Number(item.sk.slice(keys.abortedPrefix.length));
        add(item['p'] as number, item['f'] as number, markerOffset);
      }
      cursor = page.cursor;
    } while (cursor !== undefined);
  }
  const offsets = tailOffsets(state);
  state.tail.forEach((e, i) => {
    if (e.controlType === 'ABORT' && e.producerId !== undefined && e.transactionFirstOffset !== undefined)
      add(e.producerId, e.transactionFirstOffset, offsets[i]!);
  });
  return [...found.values()].sort((a, b) => a.firstOffset - b.firstOffset || a.producerId - b.producerId);
};
