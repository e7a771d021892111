/** How much idempotent-producer state one partition item may hold. */
import type { PartitionState } from './partition-state.js';

/** Producer states one partition item keeps (about 40 bytes each: ~40 KB of the 400 KB item). */
export const MAX_PRODUCERS_PER_PARTITION = 1000;

/**
 * Idempotent producers whose state leaves the partition item: those idle past producer.id.expiration.ms
 * and, beyond MAX_PRODUCERS_PER_PARTITION, the least recently active, so that no number of producers
 * can push the item toward DynamoDB's 400 KB limit and make the partition unwritable. A producer that
 * loses its state this way is treated as an expired one (its next batch must start a new sequence).
 * Producers with batches still in the tail, or a transaction open, keep theirs.
 */
export const producersToExpire = (
  state: Pick<PartitionState, 'producers' | 'tail' | 'ongoingTransactions'>,
  now: number,
  expirationMs: number,
  maxProducers = MAX_PRODUCERS_PER_PARTITION,
): string[] => {
  // A producer with a transaction open here keeps its epoch: it is what fences the transaction's zombies.
  const inTail = new Set([
    ...state.tail.map((e) => e.producerId),
    ...Object.keys(state.ongoingTransactions).map(Number),
  ]);
  const candidates = Object.entries(state.producers).filter(([pid]) => !inTail.has(Number(pid)));
  const idle = candidates.filter(([, p]) => now - p.lastTimestamp > expirationMs).map(([pid]) => pid);
  const excess = Object.keys(state.producers).length - idle.length - maxProducers;
  if (excess <= 0) return idle;
  const idleSet = new Set(idle);
  const oldest = candidates
    .filter(([pid]) => !idleSet.has(pid))
    .sort(([a, x], [b, y]) => x.lastTimestamp - y.lastTimestamp || Number(a) - Number(b))
    .slice(0, excess)
    .map(([pid]) => pid);
  return [...idle, ...oldest];
};
