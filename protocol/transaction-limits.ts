/**
 * How much one transaction may span. Part of the protocol a client must keep to, so it lives in
 * protocol/ (as commit-limit.ts does): the transaction coordinator (lib/core/transactions) enforces
 * these, and the Kafka gateway answers a request past them the way Kafka would before calling it.
 */
export const MAX_PARTITIONS_PER_TRANSACTION = 1_000;
export const MAX_GROUPS_PER_TRANSACTION = 16;
export const MAX_OFFSETS_PER_TRANSACTION = 1_000;
