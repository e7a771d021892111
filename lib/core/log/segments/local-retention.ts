/**
 * Local retention (KIP-405's `local.retention.ms` / `local.retention.bytes`): how long rolled data also
 * stays in the replica stores. Only batch pages wholly below the partition's `segEnd` go (the segment
 * index holds their offsets, and readers go there), oldest first, each replaced by a retired marker
 * conditioned on the page being as read. The marker lists the page's objects and when it was retired,
 * so the orphan collector keeps them for its grace period: a fetch that read the page just before
 * still finds its objects.
 */
import type { Item, MetadataStore } from '../../../ports/metadata-store.js';
import { ConditionFailedError } from '../../../ports/metadata-store.js';
import { keys } from '../../keys.js';
import { queryAll, queryPages } from '../../../ports/query-all.js';
import type { TopicConfig } from '../../topics/configs.js';
import { isRetired, pageEnd, pageEntries, retiredPageItem } from '../batch-index.js';
import { asPartitionState } from '../partition-state.js';
import { segmentEndOf } from './segment-index.js';

export type LocalRetentionConfig = Pick<
  TopicConfig,
  'retention.ms' | 'retention.bytes' | 'local.retention.ms' | 'local.retention.bytes'
>;

/** Kafka's -2: the local limit is the topic's total limit. */
export const localLimits = (config: LocalRetentionConfig): { ms: number; bytes: number } => ({
  ms: config['local.retention.ms'] === -2 ? config['retention.ms'] : config['local.retention.ms'],
  bytes: config['local.retention.bytes'] === -2 ? config['retention.bytes'] : config['local.retention.bytes'],
});

/** A marker that also keeps the retired page's objects from the collector until its grace has passed. */
export const locallyRetiredPageItem = (page: Item, now: number): Item => ({
  ...retiredPageItem(page, now),
  retiredAt: now,
  objs: [...new Set(pageEntries(page).map((x) => x.entry.o))],
});

/** Retires the rolled batch pages local retention no longer keeps; returns how many. */
export const retireLocalCopies = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  config: LocalRetentionConfig,
  now: number,
): Promise<number> => {
  const item = await store.get(keys.partitionState(topicId, partition), { consistent: true });
  if (!item) return 0;
  const state = asPartitionState(item);
  const segmentEnd = segmentEndOf(state);
  const limits = localLimits(config);
  if (segmentEnd === 0 || (limits.ms < 0 && limits.bytes < 0)) return 0;
  const query = {
    pk: keys.partitionPk(topicId, partition),
    sk: { beginsWith: keys.batchPrefix },
    consistent: true,
  };
  const bytesOf = (page: Item) => pageEntries(page).reduce((sum, x) => sum + x.entry.l, 0);
  // By time alone only the oldest pages can go: read them page by page and stop at the first kept.
  // local.retention.bytes needs the bytes held, so every page is read.
  const pages: AsyncIterable<Item> | Item[] =
    limits.bytes < 0
      ? queryPages(store, { ...query, limit: 4 })
      : (await queryAll(store, query)).filter((page) => !isRetired(page));
  let remaining = Array.isArray(pages)
    ? pages.reduce((sum, page) => sum + bytesOf(page), 0) + state.tail.reduce((s, e) => s + e.l, 0)
    : 0;
  let retired = 0;
  for await (const page of pages) {
    if (isRetired(page)) continue;
    if (pageEnd(page) > segmentEnd) break;
    const entries = pageEntries(page);
    const newest = Math.max(-1, ...entries.map((x) => x.entry.t));
    const bytes = bytesOf(page);
    const expired = limits.ms >= 0 && newest < now - limits.ms;
    const oversize = limits.bytes >= 0 && remaining - bytes >= limits.bytes;
    if (!expired && !oversize) break;
    try {
      await store.put(locallyRetiredPageItem(page, now), {
        condition: { path: 'e', op: '=', value: page['e']! },
      });
      retired++;
    } catch (error) {
      // Changed since read (a compaction swap or a retention run): the next run looks again.
      if (!(error instanceof ConditionFailedError)) throw error;
      break;
    }
    remaining -= bytes;
  }
  return retired;
};
