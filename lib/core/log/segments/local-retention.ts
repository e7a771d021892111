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
import { bytesOf, FIRST_LOCAL_ATTR, noCleanerSwapSince } from '../log-size.js';
import type { PartitionState } from '../partition-state.js';
import { asPartitionState } from '../partition-state.js';
import { logEntries, segmentEndOf } from './segment-index.js';

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

/**
 * Retires the rolled batch pages local retention no longer keeps; returns how many. `read`: the
 * partition item as a consistent read just returned it (else it is read).
 *
 * Only the oldest pages can go, so the walk reads from the first live page and stops at the first it
 * keeps, and remembers that page in the partition item (`lk`: where it starts and ends, its newest
 * timestamp and bytes, and the log's bytes below it), so a run with nothing due reads the item alone.
 * The local tier's bytes are the log's total (log-size.ts) less the log's bytes below the first local
 * page; those are counted once, when the first local page is found, and move with each page retired.
 * Retention and compaction swaps, which change the log below that page, drop the record.
 */
export const retireLocalCopies = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  config: LocalRetentionConfig,
  now: number,
  read?: PartitionState,
): Promise<number> => {
  let state = read;
  if (!state) {
    const item = await store.get(keys.partitionState(topicId, partition), { consistent: true });
    if (!item) return 0;
    state = asPartitionState(item);
  }
  const segmentEnd = segmentEndOf(state);
  const limits = localLimits(config);
  if (segmentEnd === 0 || (limits.ms < 0 && limits.bytes < 0)) return 0;
  const size = state.logSizeBytes;
  if (limits.bytes >= 0 && size === undefined)
    return countingAll(store, topicId, partition, state, limits, now);
  const known = firstLocalOf(state);
  if (known && !localDue(known, segmentEnd, size ?? 0, limits, now)) return 0;

  const pk = keys.partitionPk(topicId, partition);
  const counted = (from: number, to: number) =>
    limits.bytes >= 0 ? logBytes(store, topicId, partition, segmentEnd, from, to) : Promise.resolve(0);
  // The log's bytes below the page being judged: from the log start (or the remembered first page) on,
  // carried from page to page as they go.
  let carry = known ? { from: known.from, below: known.below } : { from: state.logStartOffset, below: 0 };
  let first: FirstLocal | undefined;
  let retired = 0;
  let seenEnd = carry.from;
  for await (const page of queryPages(store, {
    pk,
    sk: {
      between: [
        known ? keys.batch(topicId, partition, known.from).sk : keys.batchPrefix,
        `${keys.batchPrefix}~`,
      ],
    },
    consistent: true,
    limit: 4,
  })) {
    seenEnd = Math.max(seenEnd, pageEnd(page));
    if (isRetired(page)) continue;
    const base = pageEntries(page)[0]?.baseOffset ?? pageEnd(page);
    const below = carry.below + (await counted(carry.from, base));
    const candidate = firstLocal(page, state.logStartOffset, below);
    if (!localDue(candidate, segmentEnd, size ?? 0, limits, now)) {
      first = candidate;
      break;
    }
    try {
      await store.put(locallyRetiredPageItem(page, now), {
        condition: { path: 'e', op: '=', value: page['e']! },
      });
      retired++;
    } catch (error) {
      // Changed since read (a compaction swap or a retention run): the next run looks again.
      if (!(error instanceof ConditionFailedError)) throw error;
      return retired;
    }
    carry = { from: candidate.end, below: below + candidate.sizeInBytes };
  }
  if (!first) {
    // No live page left: the next one starts past the last one read and the tail's base.
    const from = Math.max(seenEnd, state.tailBase, carry.from);
    first = { from, below: carry.below + (await counted(carry.from, from)) };
  }
  if (!sameFirstLocal(first, known)) await rememberFirstLocal(store, topicId, partition, state, first);
  return retired;
};

/**
 * The first live local page as the last walk found it: where it starts and ends, its newest timestamp,
 * its bytes at or past the log start, and the log's bytes between the log start and it. Without `end`,
 * no live page was left, and the next one starts at `from`.
 */
interface FirstLocal {
  from: number;
  end?: number;
  maxTimestamp?: number;
  sizeInBytes?: number;
  below: number;
}

const firstLocal = (page: Item, logStartOffset: number, below: number): Required<FirstLocal> => {
  const entries = pageEntries(page);
  return {
    from: entries[0]?.baseOffset ?? pageEnd(page),
    end: pageEnd(page),
    maxTimestamp: Math.max(-1, ...entries.map((x) => x.entry.t)),
    sizeInBytes: bytesOf(entries.filter((x) => x.baseOffset >= logStartOffset).map((x) => x.entry)),
    below,
  };
};

/** A page goes once the segment index holds it whole, and it is too old or the rest is enough. */
const localDue = (
  first: FirstLocal,
  segmentEnd: number,
  size: number,
  limits: { ms: number; bytes: number },
  now: number,
): boolean => {
  if (first.end === undefined) return segmentEnd > first.from;
  if (first.end > segmentEnd) return false;
  const local = size - first.below;
  return (
    (limits.ms >= 0 && first.maxTimestamp! < now - limits.ms) ||
    (limits.bytes >= 0 && local - first.sizeInBytes! >= limits.bytes)
  );
};

const firstLocalOf = (state: object): FirstLocal | undefined => {
  const lk = (state as Record<string, unknown>)[FIRST_LOCAL_ATTR];
  if (!Array.isArray(lk) || !lk.every((x) => typeof x === 'number')) return undefined;
  const [from, below, end, maxTimestamp, sizeInBytes] = lk as number[];
  if (from === undefined || below === undefined) return undefined;
  return end === undefined ? { from, below } : { from, below, end, maxTimestamp, sizeInBytes };
};

const sameFirstLocal = (a: FirstLocal, b: FirstLocal | undefined): boolean =>
  b !== undefined &&
  a.from === b.from &&
  a.below === b.below &&
  a.end === b.end &&
  a.maxTimestamp === b.maxTimestamp &&
  a.sizeInBytes === b.sizeInBytes;

/** Recorded only while nothing below it changed since the walk's read. */
const rememberFirstLocal = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  state: PartitionState,
  first: FirstLocal,
): Promise<void> => {
  const value =
    first.end === undefined
      ? [first.from, first.below]
      : [first.from, first.below, first.end, first.maxTimestamp!, first.sizeInBytes!];
  try {
    await store.update(keys.partitionState(topicId, partition), [{ set: FIRST_LOCAL_ATTR, value }], {
      condition: {
        and: [{ path: 'logStartOffset', op: '=', value: state.logStartOffset }, noCleanerSwapSince(state)],
      },
    });
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
  }
};

/** The log's bytes in [from, to), each offset in the tier that indexes it. */
const logBytes = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  segmentEnd: number,
  from: number,
  to: number,
): Promise<number> => {
  let bytes = 0;
  if (to <= from) return 0;
  for await (const { baseOffset, entry } of logEntries(store, topicId, partition, segmentEnd, from, to))
    if (baseOffset >= from) bytes += entry.l;
  return bytes;
};

/**
 * An item that does not know the log's byte total (written before it was kept), with
 * local.retention.bytes set: every page is read to total the local tier, as before the total was kept.
 */
const countingAll = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  state: PartitionState,
  limits: { ms: number; bytes: number },
  now: number,
): Promise<number> => {
  const segmentEnd = segmentEndOf(state);
  const pages = (
    await queryAll(store, {
      pk: keys.partitionPk(topicId, partition),
      sk: { beginsWith: keys.batchPrefix },
      consistent: true,
    })
  ).filter((page) => !isRetired(page));
  const pageBytes = (page: Item) => bytesOf(pageEntries(page).map((x) => x.entry));
  let remaining = pages.reduce((sum, page) => sum + pageBytes(page), 0) + bytesOf(state.tail);
  let retired = 0;
  for (const page of pages) {
    if (pageEnd(page) > segmentEnd) break;
    const bytes = pageBytes(page);
    const newest = Math.max(-1, ...pageEntries(page).map((x) => x.entry.t));
    const expired = limits.ms >= 0 && newest < now - limits.ms;
    if (!expired && remaining - bytes < limits.bytes) break;
    try {
      await store.put(locallyRetiredPageItem(page, now), {
        condition: { path: 'e', op: '=', value: page['e']! },
      });
      retired++;
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
      break;
    }
    remaining -= bytes;
  }
  return retired;
};
