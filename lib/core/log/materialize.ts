/**
 * Moves committed tail entries out of the partition item into the batch index (one page per pass), the
 * time index (one mark per pass) and the idempotent producers' history (one item per producer epoch per
 * pass), so the hot item stays small. Everything is written before the trim, which is one update
 * conditioned on `tailBase`, so concurrent materializers cannot trim twice and commits that append
 * meanwhile are untouched (they only ever add to the end of the list).
 */
import type { Condition, Item, MetadataStore, UpdateAction } from '../../ports/metadata-store.js';
import { ConditionFailedError } from '../../ports/metadata-store.js';
import { keys } from '../keys.js';
import { markHash } from './idempotency.js';
import { isRetired, pageEnd, pageEntries, pageItem } from './batch-index.js';
import type { PartitionState, TailEntry } from './partition-state.js';
import { asPartitionState, tailOffsets } from './partition-state.js';
import { producersToExpire } from './producer-bounds.js';
import { producerHistoryItems } from './producer-history.js';
import { timeMarkItem, timeMarks } from './time-index.js';
import { abortedIndexItem } from '../transactions/lso.js';

/** How long an Idempotency-Key keeps answering with the original offsets (API.md: at least 10 minutes). */
export const IDEMPOTENCY_WINDOW_MS = 15 * 60_000;
const MAX_ENTRIES_PER_PASS = 64;

export interface MaterializeOptions {
  now: number;
  /** Producers idle longer than this lose their state (Kafka's producer.id.expiration.ms). */
  producerExpirationMs: number;
  /** Beyond this many, the least recently active producers lose their state (producer-bounds.ts). */
  maxProducers?: number;
  /**
   * The partition item as a consistent read would return it now (a commit's new image); without it
   * the item is read.
   */
  state?: PartitionState;
  /** Called with the partition item as the trim left it (its new image, no extra read). */
  trimmed?: (state: PartitionState) => void;
}

/** Returns the number of entries moved (0 when there was nothing to do or another materializer won). */
export const materializeTail = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  options: MaterializeOptions,
): Promise<number> => {
  const key = keys.partitionState(topicId, partition);
  let state = options.state;
  if (!state) {
    const item = await store.get(key, { consistent: true });
    if (!item) return 0;
    state = asPartitionState(item);
  }
  // Only committed entries (below the HW) leave the tail: a leader election may still truncate the
  // rest, and it can only do that in the partition item.
  const offsets = tailOffsets(state);
  const committed = state.tail.filter((e, i) => offsets[i]! + e.n <= state.hw).length;
  const count = Math.min(committed, MAX_ENTRIES_PER_PASS);
  const expired = producersToExpire(state, options.now, options.producerExpirationMs, options.maxProducers);
  if (count === 0 && expired.length === 0) return 0;

  const moved: Located[] = state.tail.slice(0, count).map((entry, i) => ({ baseOffset: offsets[i]!, entry }));
  let covered = moved;
  let tsMax = state.tsMax;
  if (count > 0) {
    const pass = await indexPass(store, topicId, partition, state, moved, options);
    if (!pass) return 0;
    covered = [...moved, ...pass.extras];
    tsMax = pass.runningMax;
  }

  const keyCount = covered.filter((x) => x.entry.k !== undefined).length;
  const actions: UpdateAction[] = [];
  if (covered.length > 0) {
    actions.push(
      { removeHead: 'tail', count: covered.length },
      { set: 'tailBase', value: endOf(covered) },
      { set: 'tsMax', value: tsMax },
    );
  }
  // The keys of the entries this pass moves stay in `ik` until the next pass that changes it: a keyed
  // commit that read generation g then holds at g + 1 (lib/core/log/commit.ts), since the keys g + 1
  // removes were in their K# items before g was read. Only a commit whose check spans two such passes
  // has to check again, where before every pass in between sent it back.
  const done = state.ikDone ?? 0;
  if (done > 0 || keyCount > 0) {
    if (done > 0) actions.push({ removeHead: 'ik', count: done });
    actions.push({ set: 'ikDone', value: keyCount }, { set: 'ikGen', add: 1 });
  }
  for (const pid of expired) {
    actions.push({ remove: ['pr', pid] });
    if (state.mk?.[pid] !== undefined) actions.push({ remove: ['mk', pid] });
  }
  try {
    // An expired producer that wrote meanwhile keeps its state: the trim then fails and runs again later.
    const unchanged: Condition[] = [
      { path: 'tailBase', op: '=', value: state.tailBase },
      { path: 'ikGen', op: '=', value: state.ikGen },
      ...expired.map((pid): Condition => ({ path: ['pr', pid, 't'], op: '=', value: state.pr[pid]!.t })),
    ];
    const after = await store.update(key, actions, {
      condition: { and: unchanged },
      ...(options.trimmed ? { returnValues: 'allNew' as const } : {}),
    });
    if (after && options.trimmed) options.trimmed(asPartitionState(after));
  } catch (error) {
    if (error instanceof ConditionFailedError) return 0;
    throw error;
  }
  return covered.length;
};

type Located = { baseOffset: number; entry: TailEntry };

/**
 * Writes the pass's page, and what the pass adds to the time index, the Idempotency-Keys and the
 * producers' history. When a page already starts there (a materializer racing this one wrote it from
 * a shorter or longer tail), follows the pages until they cover the pass, writing the rest as a page of
 * its own: pages stay a tiling. Entries past the pass that those pages hold are returned, their facts
 * written too, for the trim to take; undefined when the page was retired (this pass is long stale).
 */
const indexPass = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  state: PartitionState,
  moved: readonly Located[],
  options: MaterializeOptions,
): Promise<{ extras: Located[]; runningMax: number } | undefined> => {
  const end = endOf(moved);
  const own = recordFacts(store, topicId, partition, moved, state.tsMax, end, options);
  const [taken] = await Promise.all([
    putPage(store, pageItem(topicId, partition, state.tailBase, entriesOf(moved))),
    own.written,
  ]);
  const extras: Located[] = [];
  for (let page = taken; page;) {
    if (isRetired(page)) return undefined;
    extras.push(...pageEntries(page).filter((x) => x.baseOffset >= end));
    const next = pageEnd(page);
    if (next >= end) break;
    const rest = moved.filter((x) => x.baseOffset >= next);
    if (rest[0]?.baseOffset !== next)
      throw new Error(`batch index page ${page.sk} ends at ${next}, inside a tail entry`);
    page = await putPage(store, pageItem(topicId, partition, next, entriesOf(rest)));
  }
  if (extras.length === 0) return { extras, runningMax: own.runningMax };
  const theirs = recordFacts(store, topicId, partition, extras, own.runningMax, endOf(extras), options);
  await theirs.written;
  return { extras, runningMax: theirs.runningMax };
};

/** Only-if-absent; returns the page that was there instead, if one was. */
const putPage = (store: MetadataStore, page: Item): Promise<Item | undefined> =>
  store.put(page, { condition: { notExists: 'pk' } }).then(
    () => undefined,
    (error: unknown) => {
      if (error instanceof ConditionFailedError && error.current) return error.current;
      throw error;
    },
  );

/** Time-index marks, Idempotency-Keys and producer history for entries of a pass ending at `end`. */
const recordFacts = (
  store: MetadataStore,
  topicId: string,
  partition: number,
  entries: readonly Located[],
  runningMax: number,
  end: number,
  options: MaterializeOptions,
): { written: Promise<unknown>; runningMax: number } => {
  const time = timeMarks(
    entries.map(({ baseOffset, entry }) => ({ baseOffset, t: entry.t })),
    runningMax,
  );
  const remembered: Item[] = [];
  for (const { baseOffset, entry } of entries) {
    // An ABORT marker leaving the tail goes to the aborted-transactions index, which read_committed
    // fetches consult for everything below the tail.
    if (entry.x === 'a' && entry.p !== undefined && entry.xf !== undefined)
      remembered.push(abortedIndexItem(topicId, partition, baseOffset, entry));
    if (entry.k === undefined) continue;
    remembered.push({
      ...keys.idempotencyKey(topicId, partition, markHash(entry.k)),
      o: baseOffset,
      n: entry.n,
      t: entry.t,
      // The whole mark (fingerprint, request time): a retry after the entry left the tail is checked
      // and answered from it exactly as from the tail.
      m: entry.k,
      expiresAt: Math.ceil((options.now + IDEMPOTENCY_WINDOW_MS) / 1000),
    });
  }
  remembered.push(
    ...producerHistoryItems(
      topicId,
      partition,
      entries,
      end,
      Math.ceil((options.now + options.producerExpirationMs) / 1000),
    ),
  );
  const written = Promise.all([
    // Only-if-absent: a materializer that stalled must not put back a mark that compaction or retention
    // has since replaced or removed.
    ...time.marks.map((mark) =>
      store
        .put(timeMarkItem(topicId, partition, mark), { condition: { notExists: 'pk' } })
        .catch((error: unknown) => {
          if (!(error instanceof ConditionFailedError)) throw error;
        }),
    ),
    // Idempotency-Keys and producer history hold only facts about committed batches, so rewriting them
    // is harmless: unconditional, they go in as few requests as the store allows.
    remembered.length > 0 ? store.batchWrite({ puts: remembered }) : undefined,
  ]);
  return { written, runningMax: time.runningMax };
};

const entriesOf = (located: readonly Located[]): TailEntry[] => located.map((x) => x.entry);

const endOf = (located: readonly Located[]): number => {
  const last = located.at(-1)!;
  return last.baseOffset + last.entry.n;
};

export type { PartitionState };
