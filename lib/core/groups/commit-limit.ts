/**
 * Partitions one offset commit may name: DynamoDB's 100 items per transaction, one of them the guard
 * that fences the committer. A commit is one transaction, so it is all-or-nothing as Kafka's
 * OffsetCommit is (one append to __consumer_offsets). A leaf module: the edge and the SDK import it.
 */
export const OFFSETS_PER_COMMIT = 99;
