/**
 * Replica assignment, after Kafka's rack-unaware assignor: partition p of a topic leads on store
 * (start + p) mod n and its followers take the next stores, so replicas of one partition are always on
 * distinct stores and leaders are spread evenly. The start derives from the topic id, so the partition
 * 0 leaders of many topics do not all land on the first store. A replication factor above the store
 * count is refused by the catalog before this runs.
 */
import { createHash } from 'node:crypto';

export const assignReplicas = (
  storeIds: readonly string[],
  topicId: string,
  partition: number,
  replicationFactor: number,
): string[] => {
  const n = storeIds.length;
  if (replicationFactor > n) throw new RangeError(`replication factor ${replicationFactor} > ${n} stores`);
  const start = createHash('sha256').update(topicId).digest().readUInt32BE(0) % n;
  return Array.from({ length: replicationFactor }, (_, i) => storeIds[(start + partition + i) % n]!);
};
