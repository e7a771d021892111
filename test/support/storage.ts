/**
 * Invariant checks on what the in-memory stores hold after a simulation (DESIGN "Invariants"):
 * - 2: a partition's index and tail entries tile [logStartOffset, nextOffset) with no hole or overlap;
 * - 6: every entry points at an object that exists in each in-sync store, covers its byte range, and
 *   decodes with matching CRCs into exactly the offsets it claims; and, once maintenance has run past
 *   the grace period, no unreferenced object is left;
 * - the partition item's byte total (`logSizeBytes`, lib/core/log/log-size.ts) is the bytes of the
 *   entries that tile [logStartOffset, nextOffset), each offset counted in the tier that indexes it.
 */
import type { MemoryMetadataStore } from '../../lib/adapters/memory/metadata-store.js';
import type { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { dataObjectPrefix, isSegmentObjectKey, keys, segmentObjectPrefix } from '../../lib/core/keys.js';
import { pageEnd, pageEntries } from '../../lib/core/log/batch-index.js';
import type { PartitionState, TailEntry } from '../../lib/core/log/partition-state.js';
import { asPartitionState, tailOffsets } from '../../lib/core/log/partition-state.js';
import { splitBatches } from '../../protocol/record-batch/index.js';

export interface StorageReport {
  partitions: number;
  entries: number;
  objects: number;
  /** Entries whose object is missing from an in-sync store, or shorter than the entry's range. */
  dangling: string[];
  /** Entries that do not decode, fail a CRC, or span other than the offsets they claim. */
  corrupt: string[];
  /** Offset ranges no entry covers, or covered twice. */
  holes: string[];
  overlaps: string[];
  /** Objects of the topic that no entry references. */
  unreferenced: string[];
  /** Partitions whose byte total is not the bytes of their live entries. */
  sizes: string[];
}

type Entry = Pick<TailEntry, 'o' | 'b' | 'l' | 'n' | 'c'>;

export const checkStorage = async (
  store: MemoryMetadataStore,
  objectStores: readonly MemoryObjectStore[],
  topicId: string,
  partitions: number,
  segmentStore?: MemoryObjectStore,
): Promise<StorageReport> => {
  const report: StorageReport = {
    partitions,
    entries: 0,
    objects: 0,
    dangling: [],
    corrupt: [],
    holes: [],
    overlaps: [],
    unreferenced: [],
    sizes: [],
  };
  const items = store.dump();
  const byId = new Map(objectStores.map((s) => [s.id, s]));
  if (segmentStore) byId.set(segmentStore.id, segmentStore);
  const referenced = new Set<string>();
  for (let p = 0; p < partitions; p++) {
    const pk = keys.partitionPk(topicId, p);
    const stateItem = items.find((i) => i.pk === pk && i.sk === 'STATE');
    if (!stateItem) {
      report.holes.push(`partition ${p} has no state item`);
      continue;
    }
    const state = asPartitionState(stateItem);
    const entries = new Map<number, Entry>();
    // Live segment items tile [first, segmentsEnd); batch pages below segmentsEnd are the replica
    // stores' copies of the same offsets (checked for their objects, not for tiling).
    let segmentsEnd = state.logStartOffset;
    const segments = items
      .filter((i) => i.pk === pk && i.sk.startsWith(keys.segmentPrefix) && pageEntries(i).length > 0)
      .filter((i) => pageEnd(i) > state.logStartOffset);
    for (const item of segments) {
      for (const { baseOffset, entry } of pageEntries(item)) {
        if (entries.has(baseOffset)) report.overlaps.push(`p${p}@${baseOffset}: held by two segment items`);
        entries.set(baseOffset, entry);
      }
      segmentsEnd = Math.max(segmentsEnd, pageEnd(item));
    }
    for (const item of items) {
      if (item.pk !== pk || !item.sk.startsWith(keys.batchPrefix)) continue;
      for (const { baseOffset, entry } of pageEntries(item)) {
        if (baseOffset < segmentsEnd && segments.length > 0) {
          if (baseOffset + entry.n > state.logStartOffset) {
            referenced.add(entry.o);
            await checkEntry(report, byId, state, p, baseOffset, entry);
          }
          continue;
        }
        // Pages tile the log: two that hold the same offset overlap, whatever they say.
        if (entries.has(baseOffset)) report.overlaps.push(`p${p}@${baseOffset}: held by two index pages`);
        entries.set(baseOffset, entry);
      }
    }
    const offsets = tailOffsets(state);
    state.tail.forEach((entry, i) => {
      const base = offsets[i]!;
      const indexed = entries.get(base);
      // An index item written by a materializer whose trim did not land yet must match the tail entry.
      if (indexed && !sameEntry(indexed, entry))
        report.overlaps.push(`p${p}@${base}: index item and tail entry differ`);
      entries.set(base, entry);
    });
    const sorted = [...entries.entries()].sort((a, b) => a[0] - b[0]);
    let next = state.logStartOffset;
    let bytes = 0;
    for (const [base, entry] of sorted) {
      if (base + entry.n <= state.logStartOffset) continue;
      if (base > next) report.holes.push(`p${p}: offsets ${next}..${base - 1} have no entry`);
      if (base < next) report.overlaps.push(`p${p}: entry at ${base} overlaps offsets below ${next}`);
      next = Math.max(next, base + entry.n);
      bytes += entry.l;
      report.entries++;
      referenced.add(entry.o);
      await checkEntry(report, byId, state, p, base, entry);
    }
    if (next < state.nextOffset)
      report.holes.push(`p${p}: offsets ${next}..${state.nextOffset - 1} have no entry`);
    if (next > state.nextOffset)
      report.overlaps.push(`p${p}: entries reach ${next}, past nextOffset ${state.nextOffset}`);
    if (state.logSizeBytes !== bytes)
      report.sizes.push(
        `p${p}: the partition item counts ${state.logSizeBytes ?? 'unknown'} bytes, its entries hold ${bytes}`,
      );
  }
  for (const s of objectStores) {
    for (const key of s.keys()) {
      if (!key.startsWith(dataObjectPrefix(topicId))) continue;
      report.objects++;
      if (!referenced.has(key)) report.unreferenced.push(`${s.id}:${key}`);
    }
  }
  for (const key of segmentStore?.keys() ?? []) {
    if (!key.startsWith(segmentObjectPrefix(topicId))) continue;
    report.objects++;
    if (!referenced.has(key)) report.unreferenced.push(`${segmentStore!.id}:${key}`);
  }
  return report;
};

const checkEntry = async (
  report: StorageReport,
  stores: Map<string, MemoryObjectStore>,
  state: PartitionState,
  partition: number,
  base: number,
  entry: Entry,
): Promise<void> => {
  const where = `p${partition}@${base} (${entry.o} [${entry.b}, ${entry.b + entry.l}))`;
  // A segment lives once, in the segment store; other objects in every in-sync replica store.
  const holders = isSegmentObjectKey(entry.o) ? ['segments'] : state.isr;
  for (const id of holders) {
    const store = stores.get(id);
    if (!store || !store.keys().includes(entry.o)) {
      report.dangling.push(`${where}: missing from ${id}`);
      continue;
    }
    const bytes = await store.get(entry.o, { start: entry.b, end: entry.b + entry.l });
    if (bytes.length !== entry.l) {
      report.dangling.push(`${where}: ${id} holds only ${bytes.length} of ${entry.l} bytes`);
      continue;
    }
    try {
      const parts = splitBatches(bytes);
      const span = parts.reduce((n, part) => n + part.header.lastOffsetDelta + 1, 0);
      const records = parts.reduce((n, part) => n + part.header.recordCount, 0);
      if (span !== entry.n || records !== entry.c) {
        report.corrupt.push(
          `${where}: holds ${span} offsets / ${records} records, the entry says ${entry.n} / ${entry.c}`,
        );
      }
    } catch (error) {
      report.corrupt.push(`${where}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
};

const sameEntry = (a: Entry, b: Entry): boolean => a.o === b.o && a.b === b.b && a.l === b.l && a.n === b.n;

/** Violations only (unreferenced objects are reported apart: they are fine until the grace period passes). */
export const storageViolations = (report: StorageReport): string[] => [
  ...report.dangling,
  ...report.corrupt,
  ...report.holes,
  ...report.overlaps,
  ...report.sizes,
];
