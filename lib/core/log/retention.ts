/**
 * Retention for `cleanup.policy=delete`: drops the oldest committed batches past `retention.ms` or
 * beyond `retention.bytes`, Kafka's way (whole batches from the start of the log, never the newest
 * ones still in the partition item's tail). `logStartOffset` advances first, monotonically, with a
 * conditional update; then the index and time-index items go. Objects are left to the orphan
 * collector, which deletes them once nothing references them and readers in flight are done.
 */
import type { Item, MetadataStore } from '../../ports/metadata-store.js';
import { ConditionFailedError } from '../../ports/metadata-store.js';
import { keys, offsetFromBatchSk } from '../keys.js';
import { queryAll } from '../query-all.js';
import type { TopicConfig } from '../topics/configs.js';
import { asPartitionState } from './partition-state.js';
import { timeMarkItem, timeMarks } from './time-index.js';

export interface RetentionResult {
  logStartOffset: number;
  batchesDeleted: number;
}

export const applyRetention = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  config: Pick<TopicConfig, 'cleanup.policy' | 'retention.ms' | 'retention.bytes'>,
  now: number,
): Promise<RetentionResult> => {
  const key = keys.partitionState(topicId, partition);
  const item = await store.get(key, { consistent: true });
  if (!item) return { logStartOffset: 0, batchesDeleted: 0 };
  const state = asPartitionState(item);
  const none = { logStartOffset: state.logStartOffset, batchesDeleted: 0 };
  const retentionMs = config['retention.ms'];
  const retentionBytes = config['retention.bytes'];
  if (!config['cleanup.policy'].includes('delete') || (retentionMs < 0 && retentionBytes < 0)) return none;

  // Index items below the log start are leftovers of a run whose deletes failed after it moved the
  // start: finish them now (else their objects are never collected), and do not count their bytes.
  const below = (b: Item) => offsetFromBatchSk(b.sk) + (b['n'] as number) <= state.logStartOffset;
  const indexed = await indexItems(store, topicId, partition, keys.batchPrefix);
  const leftovers = indexed.filter(below);
  if (leftovers.length > 0) await store.batchWrite({ deletes: leftovers.map(({ pk, sk }) => ({ pk, sk })) });
  const batches = indexed.filter((b) => !below(b));
  const tailBytes = state.tail.reduce((sum, e) => sum + e.l, 0);
  let remaining = batches.reduce((sum, b) => sum + (b['l'] as number), 0) + tailBytes;
  const doomed: Item[] = [];
  for (const batch of batches) {
    const expired = retentionMs >= 0 && (batch['t'] as number) < now - retentionMs;
    const oversize = retentionBytes >= 0 && remaining - (batch['l'] as number) >= retentionBytes;
    if (!expired && !oversize) break;
    doomed.push(batch);
    remaining -= batch['l'] as number;
  }
  const last = doomed.at(-1);
  if (!last) return none;
  const logStartOffset = offsetFromBatchSk(last.sk) + (last['n'] as number);
  if (logStartOffset <= state.logStartOffset) return none;
  try {
    await store.update(key, [{ set: 'logStartOffset', value: logStartOffset }], {
      condition: {
        and: [
          { path: 'logStartOffset', op: '<', value: logStartOffset },
          { path: 'tailBase', op: '>=', value: logStartOffset },
        ],
      },
    });
  } catch (error) {
    if (error instanceof ConditionFailedError) return none;
    throw error;
  }
  await store.batchWrite({ deletes: doomed.map(({ pk, sk }) => ({ pk, sk })) });
  await repairTimeIndex(store, topicId, partition, logStartOffset);
  return { logStartOffset, batchesDeleted: doomed.length };
};

/**
 * The time index records where the running max timestamp rose (see time-index.ts), a max that ran from
 * offset 0. Once the log starts later, the marks before the first surviving one are recomputed from the
 * new start so ListOffsets by timestamp stays exact; when none survives, the partition's running max
 * (which the materializer continues from) is reset too, conditioned on the tail not having moved.
 */
const repairTimeIndex = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  logStartOffset: number,
) => {
  for (let attempt = 0; attempt < 3; attempt++) {
    const item = await store.get(keys.partitionState(topicId, partition), { consistent: true });
    if (!item) return;
    const { tailBase } = asPartitionState(item);
    const marks = await indexItems(store, topicId, partition, keys.timePrefix);
    const firstKept = marks.find((m) => (m['o'] as number) >= logStartOffset);
    const survivors = (await indexItems(store, topicId, partition, keys.batchPrefix))
      .map((batch) => ({ baseOffset: offsetFromBatchSk(batch.sk), t: batch['t'] as number }))
      .filter(
        (b) => b.baseOffset >= logStartOffset && (!firstKept || b.baseOffset < (firstKept['o'] as number)),
      );
    const { marks: repaired, runningMax } = timeMarks(survivors, -1);
    const puts = repaired.map((mark) => timeMarkItem(topicId, partition, mark));
    const keep = new Set(puts.map((p) => p.sk));
    const stale = marks.filter((m) => (m['o'] as number) < logStartOffset && !keep.has(m.sk));
    await store.batchWrite({ puts, deletes: stale.map(({ pk, sk }) => ({ pk, sk })) });
    if (firstKept) return;
    try {
      await store.update(keys.partitionState(topicId, partition), [{ set: 'tsMax', value: runningMax }], {
        condition: { path: 'tailBase', op: '=', value: tailBase },
      });
      return;
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
    }
  }
};

const indexItems = (
  store: MetadataStore,
  topicId: string,
  partition: number,
  prefix: string,
): Promise<Item[]> =>
  queryAll(store, { pk: keys.partitionPk(topicId, partition), sk: { beginsWith: prefix }, consistent: true });
