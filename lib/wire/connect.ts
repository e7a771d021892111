/**
 * Kafka Connect's REST bodies (API.md "Connect"), in Connect's own field names (worker_id,
 * error_count, …): the one declaration the Connect routes (connect/rest.ts, connect/herder.ts) answer
 * with and the SDK's ConnectAdmin reads.
 */

/** Any value JSON can carry. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export type ConnectorType = 'source' | 'sink';

/** KIP-980's initial_state of a new connector. */
export type InitialState = 'RUNNING' | 'PAUSED' | 'STOPPED';

/** Connect's ConnectorInfo: GET /connectors/{name}, and the answer of create and PUT config. */
export interface ConnectorInfo {
  name: string;
  config: Record<string, string>;
  tasks: { connector: string; task: number }[];
  type: ConnectorType;
}

export interface TaskStatus {
  id: number;
  state: string;
  worker_id: string;
  trace?: string;
}

/** Connect's ConnectorStateInfo: GET /connectors/{name}/status, and a KIP-745 restart's answer. */
export interface ConnectorStatus {
  name: string;
  connector: { state: string; worker_id: string; trace?: string };
  tasks: TaskStatus[];
  type: ConnectorType;
}

/** GET /connectors?expand=status,info: per connector, what was asked for. */
export type ExpandedConnectors = Record<string, { status?: ConnectorStatus; info?: ConnectorInfo }>;

/**
 * A source partition or offset: a JSON object the connector owns. A sink's are
 * `{"kafka_topic", "kafka_partition"}` and `{"kafka_offset"}`.
 */
export type ConnectOffsetMap = { [key: string]: JsonValue };

/** One entry of KIP-875's ConnectorOffsets; a null offset (in an alter) deletes the partition's. */
export interface ConnectorOffset {
  partition: ConnectOffsetMap;
  offset: ConnectOffsetMap | null;
}

/** GET /connector-plugins: a connector plugin (or, without connectorsOnly, a transform, predicate or converter). */
export interface ConnectorPluginInfo {
  class: string;
  type: string;
  version?: string;
}

export type ConfigType = 'STRING' | 'INT' | 'LONG' | 'BOOLEAN' | 'LIST' | 'CLASS' | 'PASSWORD';
export type Importance = 'HIGH' | 'MEDIUM' | 'LOW';

/** A setting's definition in a validation answer (Connect's ConfigKeyInfo). */
export interface ConfigKeyInfo {
  name: string;
  type: ConfigType;
  required: boolean;
  default_value: string | null;
  importance: Importance;
  documentation: string;
  group: string;
  width: 'NONE';
  display_name: string;
  dependents: string[];
  order: number;
}

export interface ConfigValueInfo {
  name: string;
  value: string | null;
  recommended_values: string[];
  errors: string[];
  visible: boolean;
}

export interface ConfigInfo {
  definition: ConfigKeyInfo;
  value: ConfigValueInfo;
}

/** PUT /connector-plugins/{plugin}/config/validate (Connect's ConfigInfos). */
export interface ConfigInfos {
  name: string;
  error_count: number;
  groups: string[];
  configs: ConfigInfo[];
}
