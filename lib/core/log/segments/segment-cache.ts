/**
 * Segment index items a fetch process has read lately, so a consumer streaming through a segment pays
 * one index query per segment rather than one per fetch (KIP-405's brokers cache remote segment
 * metadata the same way). Safe because a segment's bytes never change: its object is immutable, the
 * fetch still reads the partition item first (high watermark and log start are always fresh), and an
 * entry is used only while the partition's compaction state is the one it was cached under and for at
 * most `ttlMs`. A cached item whose object a collector has since deleted fails the read; the fetch then
 * forgets the partition and reads the index again.
 */
import type { Item } from '../../../ports/metadata-store.js';
import { offsetFromBatchSk } from '../../keys.js';
import { isRetired, pageEnd } from '../batch-index.js';

interface Cached {
  item: Item;
  base: number;
  end: number;
  at: number;
  /** The partition's `cleanedThrough` when cached: a later compaction pass may have rewritten the item. */
  generation: number;
}

export class SegmentItemCache {
  private readonly partitions = new Map<string, Cached[]>();

  constructor(
    private readonly ttlMs = 30_000,
    private readonly perPartition = 4,
    private readonly maxPartitions = 4096,
  ) {}

  /** The cached live item holding `offset`, if still usable. */
  holding(partition: string, offset: number, generation: number, now: number): Item | undefined {
    const list = this.partitions.get(partition);
    const hit = list?.find((c) => c.base <= offset && offset < c.end);
    if (!hit) return undefined;
    if (now - hit.at > this.ttlMs || hit.generation !== generation) {
      this.forget(partition);
      return undefined;
    }
    return hit.item;
  }

  remember(partition: string, item: Item, generation: number, now: number): void {
    if (isRetired(item)) return;
    const list = (this.partitions.get(partition) ?? []).filter((c) => c.item.sk !== item.sk);
    list.push({ item, base: offsetFromBatchSk(item.sk), end: pageEnd(item), at: now, generation });
    while (list.length > this.perPartition) list.shift();
    this.partitions.delete(partition);
    this.partitions.set(partition, list);
    // Least recently used partitions go first (Map keeps insertion order).
    for (const oldest of this.partitions.keys()) {
      if (this.partitions.size <= this.maxPartitions) break;
      this.partitions.delete(oldest);
    }
  }

  forget(partition: string): void {
    this.partitions.delete(partition);
  }
}
