import { SluiceError } from './errors.js';

/**
 * How records without an explicit partition pick one, matching Kafka's Java producer so that a key
 * lands on the same partition whichever client produced it.
 */

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** Kafka's Utils.murmur2 (MurmurHash2, seed 0x9747b28c): the signed 32-bit result Java returns. */
export function murmur2(bytes: Uint8Array): number {
  const length = bytes.length;
  let h = SEED ^ length;
  const whole = length & ~3;
  // Math.imul and `| 0` give Java's wrapping int arithmetic.
  for (let i = 0; i < whole; i += 4) {
    let k = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const rest = length & 3;
  if (rest > 0) {
    if (rest === 3) h ^= bytes[whole + 2]! << 16;
    if (rest >= 2) h ^= bytes[whole + 1]! << 8;
    h ^= bytes[whole]!;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

function checkPartitionCount(numPartitions: number): void {
  if (!Number.isInteger(numPartitions) || numPartitions < 1 || numPartitions > 0x7fffffff) {
    throw new SluiceError(
      'INVALID_PARTITIONS',
      `numPartitions must be a positive integer, got ${numPartitions}`,
    );
  }
}

/** The Java client's partition for a keyed record: toPositive(murmur2(key)) % numPartitions. */
export function partitionForKey(key: Uint8Array, numPartitions: number): number {
  checkPartitionCount(numPartitions);
  // Kafka's toPositive masks the sign bit rather than taking Math.abs (which overflows for MIN_VALUE).
  return (murmur2(key) & 0x7fffffff) % numPartitions;
}

/**
 * Spreads records without a key over partitions in turn, like Kafka's RoundRobinPartitioner.
 *
 * Round robin per record rather than Kafka's newer "sticky" batching: a Sluice produce request is
 * already one batch per partition, so stickiness would buy nothing here, while turn-taking spreads a
 * single request's keyless records evenly. The counter starts at a random point by default because
 * Lambda builds a fresh partitioner per execution environment: starting all of them at 0 would pile
 * every cold start's first record onto partition 0.
 */
export class RoundRobinPartitioner {
  private counter: number;

  /** `start` fixes the first partition (mod numPartitions), for tests and deterministic replays. */
  constructor(options: { start?: number } = {}) {
    const start = options.start ?? Math.floor(Math.random() * 0x7fffffff);
    if (!Number.isSafeInteger(start) || start < 0) {
      throw new RangeError(`start must be a non-negative integer`);
    }
    this.counter = start;
  }

  next(numPartitions: number): number {
    checkPartitionCount(numPartitions);
    const partition = this.counter % numPartitions;
    this.counter++; // starts below 2^31: a process would need 2^53 records to lose precision
    return partition;
  }
}
