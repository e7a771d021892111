/**
 * Kafka's API names for the HTTP routes (the API dimension of RequestLatencyMs and ErrorsPerSec), by
 * the route's OpenAPI operationId. Routes with no Kafka API of their own share one name per family
 * (Connect's REST API, interactive queries), which keeps the dimension to a few dozen values.
 */
const KAFKA_APIS: Readonly<Record<string, string>> = {
  health: 'Health',
  describeCluster: 'DescribeCluster',
  createTopic: 'CreateTopics',
  listTopics: 'Metadata',
  describeTopic: 'DescribeTopicPartitions',
  alterTopic: 'IncrementalAlterConfigs',
  deleteTopic: 'DeleteTopics',
  heartbeat: 'ConsumerGroupHeartbeat',
  classicMember: 'JoinGroup',
  commitOffsets: 'OffsetCommit',
  fetchOffsets: 'OffsetFetch',
  deleteOffsets: 'OffsetDelete',
  resetOffsets: 'AlterConsumerGroupOffsets',
  listGroups: 'ListGroups',
  describeGroup: 'ConsumerGroupDescribe',
  deleteGroup: 'DeleteGroups',
  produce: 'Produce',
  produceBatches: 'Produce',
  initProducerId: 'InitProducerId',
  initTransactionalProducerId: 'InitProducerId',
  fetchMany: 'Fetch',
  fetch: 'Fetch',
  listOffsets: 'ListOffsets',
  electLeaders: 'ElectLeaders',
  addPartitionsToTxn: 'AddPartitionsToTxn',
  addOffsetsToTxn: 'AddOffsetsToTxn',
  txnOffsetCommit: 'TxnOffsetCommit',
  endTxn: 'EndTxn',
  listTransactions: 'ListTransactions',
  describeTransactions: 'DescribeTransactions',
  queryStoreKey: 'StreamsQuery',
  queryStoreRange: 'StreamsQuery',
};

/** The API dimension of a route: Kafka's name, `ConnectRest` for Connect's REST API. */
export const kafkaApiName = (operationId: string): string =>
  KAFKA_APIS[operationId] ?? (CONNECT_OPERATIONS.has(operationId) ? 'ConnectRest' : operationId);

const CONNECT_OPERATIONS: ReadonlySet<string> = new Set([
  'listConnectors',
  'createConnector',
  'describeConnector',
  'deleteConnector',
  'connectorConfig',
  'putConnectorConfig',
  'connectorStatus',
  'connectorTasks',
  'taskStatus',
  'restartTask',
  'pauseConnector',
  'resumeConnector',
  'stopConnector',
  'restartConnector',
  'connectorOffsets',
  'alterConnectorOffsets',
  'resetConnectorOffsets',
  'connectorPlugins',
  'validateConnectorConfig',
]);

/** Every API dimension value the routes produce (the dashboard draws one line per API). */
export const KAFKA_API_NAMES: readonly string[] = [...new Set([...Object.values(KAFKA_APIS), 'ConnectRest'])];
