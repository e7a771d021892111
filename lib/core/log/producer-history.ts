/**
 * Idempotent producers' batches once they have left the partition item's tail: each materialization
 * pass writes one item per producer id and epoch listing that producer's batches in the pass, so a
 * retried duplicate still gets its original offsets without the hot item carrying every producer's
 * history, and without a write per batch.
 *
 * Items are keyed by the offset where their pass ends, not by sequence. A producer that expired and
 * starts again at sequence 0 under the same epoch reuses every sequence, and a materializer that stalled
 * writes a shorter list for a pass another one completed: keyed by sequence, either could shadow or
 * overwrite the list that holds a batch. By pass end, a lookup walks the producer's passes from the
 * newest back to the first one that reaches down to the batch's sequence, which holds the batch if any
 * pass does (sequences rise with offsets, and every pass covers all the producer's batches in its range).
 *
 * An item: `b`, the batches as `firstSequence|lastSequence|baseOffset`; `t`, each batch's largest
 * timestamp in the same order (its tail entry's `maxTimestamp`: on a LogAppendTime topic, the time it was
 * appended, which a retry is answered with as Kafka answers a duplicate); `expiresAt`, DynamoDB's TTL.
 */
import type { Item, MetadataStore } from '../../ports/metadata-store.js';
import { keys } from '../keys.js';
import type { TailEntry } from './partition-state.js';

export interface ProducerBatch {
  firstSequence: number;
  lastSequence: number;
  baseOffset: number;
  /** The batch's largest timestamp (its append time on a LogAppendTime topic). */
  maxTimestamp: number;
}

/** Pages of the backwards walk start small: a retry is almost always of one of the newest batches. */
const FIRST_PAGE = 4;
const MAX_PAGE = 1000;

/**
 * The history items of one pass: entries (with their base offsets, in offset order) grouped by producer
 * id and epoch; `passEnd` is the offset after the pass's last entry.
 */
export const producerHistoryItems = (
  topicId: string,
  partition: number,
  moved: readonly { baseOffset: number; entry: TailEntry }[],
  passEnd: number,
  expiresAt: number,
): Item[] => {
  const lists = new Map<
    string,
    { producerId: number; epoch: number; batches: string[]; timestamps: number[] }
  >();
  for (const { baseOffset, entry } of moved) {
    // A transaction marker carries its producer but no sequence: nothing a retry could match.
    if (entry.producerId === undefined || entry.controlType !== undefined) continue;
    const id = `${entry.producerId}#${entry.producerEpoch!}`;
    let list = lists.get(id);
    if (!list)
      lists.set(
        id,
        (list = { producerId: entry.producerId, epoch: entry.producerEpoch!, batches: [], timestamps: [] }),
      );
    list.batches.push(`${entry.baseSequence!}|${entry.lastSequence!}|${baseOffset}`);
    list.timestamps.push(entry.maxTimestamp);
  }
  return [...lists.values()].map(({ producerId, epoch, batches, timestamps }) => ({
    ...keys.producerBatches(topicId, partition, producerId, epoch, passEnd),
    b: batches,
    t: timestamps,
    expiresAt,
  }));
};

const batchesOf = (item: Item): ProducerBatch[] => {
  const list = item['b'];
  if (!Array.isArray(list)) return [];
  const times = item['t'] as number[];
  return list.map((s, i) => {
    const [firstSequence, lastSequence, baseOffset] = String(s).split('|').map(Number);
    return {
      firstSequence: firstSequence!,
      lastSequence: lastSequence!,
      baseOffset: baseOffset!,
      maxTimestamp: times[i]!,
    };
  });
};

/** The batch of a producer epoch with exactly these sequences, if one was materialized. */
export const findMaterializedBatch = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  batch: { producerId: number; producerEpoch: number; firstSequence: number; lastSequence: number },
): Promise<ProducerBatch | undefined> => {
  const prefix = keys.producerBatchesPrefix(batch.producerId, batch.producerEpoch);
  let cursor: string | undefined;
  let limit = FIRST_PAGE;
  do {
    const page = await store.query({
      pk: keys.partitionPk(topicId, partition),
      sk: { beginsWith: prefix },
      reverse: true,
      limit,
      consistent: true,
      ...(cursor ? { cursor } : {}),
    });
    for (const item of page.items) {
      const batches = batchesOf(item);
      if (batches.length === 0 || batches[0]!.firstSequence > batch.firstSequence) continue;
      return batches.find(
        (b) => b.firstSequence === batch.firstSequence && b.lastSequence === batch.lastSequence,
      );
    }
    cursor = page.cursor;
    limit = Math.min(limit * 8, MAX_PAGE);
  } while (cursor);
  return undefined;
};
