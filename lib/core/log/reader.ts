/**
 * Finds the committed batches covering an offset (the batch index, then the partition item's tail)
 * and reads their bytes with ranged GETs, verifying every CRC: a corrupt or missing object is an
 * error, never silently skipped data.
 */
import type { MetadataStore } from '../../ports/metadata-store.js';
import type { ObjectStore } from '../../ports/object-store.js';
import { SluiceError, isSluiceError } from '../../../protocol/errors.js';
import type { BatchHeader } from '../../../protocol/record-batch/index.js';
import { splitBatches, withBaseOffset } from '../../../protocol/record-batch/index.js';
import type { LocatedEntry } from './batch-index.js';
import type { PartitionState } from './partition-state.js';
import { tailOffsets } from './partition-state.js';
import type { SegmentLookup, StoreResolver } from './segments/segment-index.js';
import { logEntries, segmentEndOf } from './segments/segment-index.js';

export interface StoredBatch {
  baseOffset: number;
  header: BatchHeader;
  /** The batch with its true base offset written in. */
  bytes: Uint8Array;
}

/**
 * Entries from the one containing `offset` up to the high watermark, stopping once their stored size
 * reaches `maxBytes` (at least one entry).
 */
export const locateEntries = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  state: PartitionState,
  offset: number,
  maxBytes: number,
  cache?: SegmentLookup,
): Promise<LocatedEntry[]> => {
  const out: LocatedEntry[] = [];
  let bytes = 0;
  const full = () => out.length > 0 && bytes >= maxBytes;
  if (offset < state.tailBase) {
    const segmentEnd = segmentEndOf(state);
    const entries = logEntries(store, topicId, partition, segmentEnd, offset, state.tailBase, cache);
    for await (const located of entries) {
      out.push(located);
      // A segment chunk holds the offset somewhere inside: its bytes before it are not the fetch's.
      if (located.baseOffset >= offset) bytes += located.entry.sizeInBytes;
      if (full()) return out;
    }
  }
  const offsets = tailOffsets(state);
  state.tail.forEach((entry, i) => {
    const baseOffset = offsets[i]!;
    if (full() || baseOffset + entry.offsetCount <= offset) return;
    out.push({ baseOffset, entry });
    bytes += entry.sizeInBytes;
  });
  return out;
};

/**
 * Reads and verifies the batches of the given entries, coalescing adjacent ranges of one object (the
 * chunks of a segment become one ranged GET). Objects are read from `stores`, or from the store each
 * key resolves to (segments live in the segment store). An entry that cannot be read or verified
 * throws, unless `partial` is set: then it ends the answer there and the batches before it are
 * returned (a fetch of good records is never failed by a bad neighbour after them; only a read that
 * starts at the bad entry gets the error). Maintenance (roll, compaction) must never take a partial
 * read for the whole range, so partial is for client reads only.
 */
export const readBatches = async (
  stores: ObjectStore | StoreResolver,
  entries: readonly LocatedEntry[],
  { partial = false }: { partial?: boolean } = {},
): Promise<StoredBatch[]> => {
  const storeOf = typeof stores === 'function' ? stores : () => stores;
  const runs: { key: string; start: number; end: number; entries: LocatedEntry[] }[] = [];
  for (const located of entries) {
    const last = runs.at(-1);
    const { objectKey, position, sizeInBytes } = located.entry;
    if (last && last.key === objectKey && last.end === position) {
      last.end = position + sizeInBytes;
      last.entries.push(located);
    } else runs.push({ key: objectKey, start: position, end: position + sizeInBytes, entries: [located] });
  }
  const bodies = await Promise.allSettled(
    runs.map((run) => storeOf(run.key).get(run.key, { start: run.start, end: run.end })),
  );
  const out: StoredBatch[] = [];
  for (const [r, run] of runs.entries()) {
    const settled = bodies[r]!;
    if (settled.status === 'rejected') {
      if (partial && out.length > 0) return out;
      throw storedDataError(`object ${run.key} could not be read`, settled.reason);
    }
    for (const located of run.entries) {
      try {
        out.push(...verifyEntry(settled.value, run, located));
      } catch (error) {
        if (partial && out.length > 0) return out;
        throw error;
      }
    }
  }
  return out;
};

const verifyEntry = (
  body: Uint8Array,
  run: { key: string; start: number },
  located: LocatedEntry,
): StoredBatch[] => {
  const from = located.entry.position - run.start;
  const bytes = body.subarray(from, from + located.entry.sizeInBytes);
  if (bytes.length !== located.entry.sizeInBytes) {
    throw storedDataError(
      `object ${run.key} is shorter than its index entry at offset ${located.baseOffset}`,
    );
  }
  let parts;
  try {
    parts = splitBatches(bytes);
  } catch (error) {
    throw storedDataError(
      `stored batch at offset ${located.baseOffset} in ${run.key} failed verification`,
      error,
    );
  }
  const out: StoredBatch[] = [];
  let next = located.baseOffset;
  for (const { start, end, header } of parts) {
    out.push({
      baseOffset: next,
      header: { ...header, baseOffset: next },
      bytes: withBaseOffset(bytes.subarray(start, end), next),
    });
    next += header.lastOffsetDelta + 1;
  }
  return out;
};

export const storedDataError = (message: string, cause?: unknown): SluiceError =>
  new SluiceError('KAFKA_STORAGE_ERROR', `${message}${isSluiceError(cause) ? `: ${cause.message}` : ''}`, {
    cause,
    retriable: false,
  });
