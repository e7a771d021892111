/**
 * Partitions one offset commit may name: DynamoDB's 100 items per transaction, one of them the guard
 * that fences the committer. A commit is one transaction, so it is all-or-nothing as Kafka's
 * OffsetCommit is (one append to __consumer_offsets). Part of the protocol a client must keep to, so
 * it lives in protocol/: the core enforces it, the edge (lib/http/limits.ts) checks it, the SDK and the
 * Kafka gateway split commits by it.
 */
export const OFFSETS_PER_COMMIT = 99;
