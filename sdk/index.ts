/** Sluice's TypeScript client: `new SluiceClient({ url })`, then `.admin()`, `.producer()`, `.consumer()`. */
export { SluiceClient } from './client.js';
export type { SluiceClientOptions } from './client.js';
export { Admin } from './admin.js';
export type { CreateTopicOptions, PartitionOffsets } from './admin.js';
export { Producer, RECORD_BATCH_MEDIA_TYPE } from './producer.js';
export type { ProducerOptions } from './producer.js';
export { RecordAccumulator } from './record-accumulator.js';
export type { BatchOutcome, BatchSender, RecordAccumulatorOptions } from './record-accumulator.js';
export { Consumer } from './consumer.js';
export { TransactionManager, isFatalTransactionError } from './transaction-manager.js';
export type { ConsumerGroupMetadata, TransactionOffset, TransactionState } from './transaction-manager.js';
export { FOLLOW_WAIT_MS, readPartition, readPartitions } from './partition-reader.js';
export type { PartitionReadOptions, PartitionsReadOptions } from './partition-reader.js';
export { ConnectAdmin } from './connect.js';
export type {
  ConfigInfos,
  ConnectorInfo,
  ConnectorOffset,
  ConnectorPluginInfo,
  ConnectorStatus,
  ConnectorType,
  ExpandedConnectors,
  InitialState,
} from './connect.js';
export { GroupMember } from './group-member.js';
export { StreamsQueries } from './streams.js';
export type { StoreRangeOptions } from './streams.js';
export type { GroupMemberOptions, HeartbeatOutcome } from './group-member.js';
export type { ConsumerOptions, FetchedBatch, RunHandlers } from './consumer.js';
export { SluiceError, isSluiceError } from './errors.js';
export { createRetrier, isRetriable } from './retry.js';
export type { Bail, Retrier, RetryDeps, RetryOptions } from './retry.js';
export type { FetchLike } from './transport.js';
export { nodeHttpFetch } from './node-http.js';
export { createSigner, sigV4Fetch } from './sigv4.js';
export { kafkaToken } from './kafka-token.js';
export type { KafkaToken, KafkaTokenOptions } from './kafka-token.js';
export type { AwsCredentials, AwsCredentialsProvider, SigV4Options } from './sigv4.js';
export type { NodeHttpFetchOptions } from './node-http.js';
export type * from './types.js';
