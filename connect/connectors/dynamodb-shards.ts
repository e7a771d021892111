/**
 * Which shards of a table's change streams may be read now, after the KCL's rule: a shard's records
 * follow its parent's (a split or a roll moves an item's later changes to a child), so a child is read
 * only once its parent has been read to its end. A parent that is no longer listed (trimmed after 24
 * hours) counts as read. Across streams of one table (each disabling and re-enabling of the stream
 * makes a new one), every shard of an older stream comes before any shard of a newer one.
 */
import type { StreamShard } from '../../lib/ports/change-streams.js';

export interface ShardRef extends StreamShard {
  tableName: string;
  streamArn: string;
  streamLabel: string;
}

export const shardKey = (shard: { streamArn: string; shardId: string }): string =>
  `${shard.streamArn}\u0000${shard.shardId}`;

/** Sequence numbers are decimal strings of up to 40 digits: compare them as integers. */
export const compareSequenceNumbers = (a: string, b: string): number => {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
};

/**
 * The shards that are not finished and whose predecessors all are, ordered by table, stream and
 * shard id (AWS's shard ids begin with their creation time).
 */
export const readableShards = (
  shards: readonly ShardRef[],
  finished: (shard: ShardRef) => boolean,
): ShardRef[] => {
  const listed = new Map(shards.map((s) => [shardKey(s), s]));
  const unfinishedStreams = new Map<string, string[]>();
  for (const s of shards) {
    if (finished(s)) continue;
    const labels = unfinishedStreams.get(s.tableName) ?? [];
    labels.push(s.streamLabel);
    unfinishedStreams.set(s.tableName, labels);
  }
  return shards
    .filter((s) => {
      if (finished(s)) return false;
      const parent =
        s.parentShardId === undefined
          ? undefined
          : listed.get(shardKey({ streamArn: s.streamArn, shardId: s.parentShardId }));
      if (parent !== undefined && !finished(parent)) return false;
      return (unfinishedStreams.get(s.tableName) ?? []).every((label) => label >= s.streamLabel);
    })
    .sort(
      (a, b) =>
        cmp(a.tableName, b.tableName) || cmp(a.streamLabel, b.streamLabel) || cmp(a.shardId, b.shardId),
    );
};

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
