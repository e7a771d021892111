export { TransactionCoordinator, DEFAULT_MAX_TIMEOUT_MS } from './coordinator.js';
export { transactionVerifier, verifyPartition } from './verify.js';
export type { ProducerIdAndEpoch, TransactionGroups, TxnOffsetCommitRequest } from './coordinator.js';
export type { TransactionMetadata, TransactionState, TransactionVersion, PendingOffset } from './state.js';
export { lastStableOffset, abortedTransactions, AbortedFilter } from './lso.js';
export type { AbortedTransaction, IsolationLevel } from './lso.js';
export type { TopicPartition } from './markers.js';
