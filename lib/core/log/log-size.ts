/**
 * The log's byte total in the partition item (`logSizeBytes`, stored `sz`): the stored bytes of every
 * batch in [logStartOffset, nextOffset), each offset counted once in the tier that indexes it (the
 * segment index below its end, the batch index and the tail past it). Retention by `retention.bytes`
 * reads it instead of totalling the whole index, so a run reads from the log start only as far as the
 * first unit it keeps.
 *
 * Every writer that changes those bytes adds its difference in the same conditional write that makes
 * the change: a commit or a transaction marker adds its batch, a truncation subtracts the entries it
 * drops, retention the units below the new log start, a compaction swap what cleaning removed. Only
 * differences are ever written, so concurrent writers compose. An item from before the total was kept
 * has none: a difference then lands on `UNKNOWN_LOG_SIZE` (far below any real total), the total reads
 * as unknown, and retention counts the log once and adds the correction (see retention.ts).
 *
 * Beside it, what retention learnt on its last walk (`oldestRetained`, stored `rk`): the largest
 * timestamp and bytes of the first unit it kept, so a run can tell from the item alone that nothing
 * is due. A roll only ever merges that unit into a larger, newer segment, so the facts stay a lower
 * bound of the real first unit's and "nothing due" stays true; a compaction swap can shrink it, so each
 * swap removes them and bumps `cleanerSwaps` (stored `cg`), on which retention's own write is
 * conditioned (the bytes it subtracts are those it read).
 */
import type { Condition, UpdateAction } from '../../ports/metadata-store.js';

/** Stored attribute names (the item is billed per KiB on every commit). */
export const LOG_SIZE_ATTR = 'sz';
export const OLDEST_RETAINED_ATTR = 'rk';
export const CLEANER_SWAPS_ATTR = 'cg';
/** Local retention's record of the first local page (segments/local-retention.ts). */
export const FIRST_LOCAL_ATTR = 'lk';

/** Dropped by whatever changes the log's bytes below the first local page (retention, compaction swaps). */
export const forgetFirstLocal: UpdateAction = { remove: FIRST_LOCAL_ATTR };

/** Where differences written to an item without a total start from: 2^52 bytes below zero. */
export const UNKNOWN_LOG_SIZE = -(2 ** 52);

/** Adds `delta` bytes to the log's total (kept unknown on an item that has none). */
export const logSizeChange = (delta: number): UpdateAction => ({
  set: LOG_SIZE_ATTR,
  add: delta,
  initial: UNKNOWN_LOG_SIZE,
});

/** The stored total as written (undefined when absent): what a correction is computed against. */
export const storedLogSize = (item: object): number | undefined => {
  const sz = (item as Record<string, unknown>)[LOG_SIZE_ATTR];
  return typeof sz === 'number' ? sz : undefined;
};

/** The log's byte total, or undefined when the item does not know it. */
export const logSizeOf = (item: object): number | undefined => {
  const sz = storedLogSize(item);
  return sz !== undefined && sz >= 0 ? sz : undefined;
};

/** The first unit retention kept on its last walk (Kafka ages a segment by its largest timestamp). */
export interface OldestRetained {
  maxTimestamp: number;
  sizeInBytes: number;
}

export const oldestRetainedOf = (item: object): OldestRetained | undefined => {
  const rk = (item as Record<string, unknown>)[OLDEST_RETAINED_ATTR];
  if (!Array.isArray(rk) || typeof rk[0] !== 'number' || typeof rk[1] !== 'number') return undefined;
  return { maxTimestamp: rk[0], sizeInBytes: rk[1] };
};

export const oldestRetainedAction = (unit: OldestRetained | undefined): UpdateAction =>
  unit === undefined
    ? { remove: OLDEST_RETAINED_ATTR }
    : { set: OLDEST_RETAINED_ATTR, value: [unit.maxTimestamp, unit.sizeInBytes] };

export const sameOldestRetained = (a: OldestRetained | undefined, b: OldestRetained | undefined): boolean =>
  a?.maxTimestamp === b?.maxTimestamp && a?.sizeInBytes === b?.sizeInBytes;

export const cleanerSwapsOf = (item: object): number | undefined => {
  const cg = (item as Record<string, unknown>)[CLEANER_SWAPS_ATTR];
  return typeof cg === 'number' ? cg : undefined;
};

/** Holds while no compaction swap happened since `read` was read. */
export const noCleanerSwapSince = (read: object): Condition => {
  const swaps = cleanerSwapsOf(read);
  return swaps === undefined
    ? { notExists: CLEANER_SWAPS_ATTR }
    : { path: CLEANER_SWAPS_ATTR, op: '=', value: swaps };
};

/** What a compaction swap writes to the partition item beside its pages. */
export const cleanerSwapActions = (delta: number): UpdateAction[] => [
  logSizeChange(delta),
  { set: CLEANER_SWAPS_ATTR, add: 1, initial: 0 },
  { remove: OLDEST_RETAINED_ATTR },
  forgetFirstLocal,
];

/** Stored bytes of entries. */
export const bytesOf = (entries: readonly { l: number }[]): number =>
  entries.reduce((sum, e) => sum + e.l, 0);
