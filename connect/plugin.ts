/**
 * What a connector plugin is (Kafka Connect's Connector/Task split): a class name, its settings, how
 * it divides work into task configs, and the task that does the work. The worker (connect/worker)
 * drives tasks; plugins never see leases, groups or offsets storage.
 */
import type { ConnectorType } from '../lib/wire/connect.js';
import type { ConfigInfos, ConfigKey } from './config-def.js';

export interface ConnectHeader {
  key: string;
  value: string | null;
  /** A sink record's header bytes as read from Kafka (the value is their UTF-8 reading, lossy for binary). */
  bytes?: Uint8Array;
}

/** A record inside the runtime, after the converters: key and value are JSON values, strings or bytes. */
export interface ConnectRecord {
  topic: string;
  /** Set for sink records (where it came from) and optional for source records (where it must go). */
  kafkaPartition?: number;
  timestamp: number;
  key: unknown;
  value: unknown;
  headers: ConnectHeader[];
}

export interface SinkRecord extends ConnectRecord {
  kafkaPartition: number;
  kafkaOffset: number;
  /** The topic it was read from, before any SMT renamed it (Kafka's originalTopic, KIP-793). */
  originalTopic: string;
}

/** Kafka Connect's source partition and offset: small JSON maps owned by the connector. */
export type SourceMap = Record<string, string | number | boolean | null>;

export interface SourceRecord extends ConnectRecord {
  sourcePartition: SourceMap;
  sourceOffset: SourceMap;
}

export interface TopicPartitionOffset {
  topic: string;
  partition: number;
  /** The next offset to consume (Kafka's committed-offset convention). */
  offset: number;
}

export interface SinkTask {
  /** Takes records in offset order per partition; may buffer. A thrown error fails the whole batch. */
  put(records: readonly SinkRecord[]): Promise<void>;
  /**
   * Makes durable what it can and returns, for every partition (by original topic) of which it still
   * buffers records, the offset of the first buffered one: everything before it is durable. Partitions
   * not listed are durable up to the last record put. The runtime commits exactly that.
   */
  flush(): Promise<TopicPartitionOffset[]>;
  /** Forgets what is buffered for partitions the task loses (they are re-read by their next owner). */
  close(): Promise<void>;
}

export interface SourcePoll {
  records: SourceRecord[];
}

export interface SourceTask {
  /**
   * Reads records after `offsets` (null: from the start), at most `maxRecords`. The same offsets and
   * upper bound must read the same records again: a replayed poll (after a crash) relies on it.
   */
  poll(offsets: ReadonlyMap<string, SourceMap | null>, maxRecords: number): Promise<SourcePoll>;
  /**
   * Reads again exactly the records after `from` up to and including `through` of one source partition
   * (the replay of a poll whose writes may be incomplete).
   */
  replay(sourcePartition: SourceMap, from: SourceMap | null, through: SourceMap): Promise<SourceRecord[]>;
  /** Source partitions this task owns, so offsets can be read before the first poll. */
  sourcePartitions(): SourceMap[];
  close(): Promise<void>;
}

export type { ConnectorType };

export interface TaskContext {
  connector: string;
  task: number;
  log: (entry: Record<string, unknown>) => void;
  /**
   * Kafka's ErrantRecordReporter: a sink reports a record it cannot write (and carries on), and the
   * runtime applies errors.tolerance and the DLQ. Throws when the tolerance is exceeded.
   */
  reportErrant: (record: SinkRecord, error: unknown) => Promise<void>;
}

export interface ConnectorPlugin {
  /** Fully qualified class name, as in Connect's `connector.class`. */
  class: string;
  /** Short names `connector.class` and the validate path also accept. */
  aliases: readonly string[];
  type: ConnectorType;
  version: string;
  /** Plugin-specific settings (the common ones come from connect/connector-config.ts). */
  configKeys: readonly ConfigKey[];
  /** Checks across settings, added to the validate answer. */
  crossValidate?(config: Record<string, string>, infos: ConfigInfos): void;
  /** Divides the work: one config per task, at most maxTasks. */
  taskConfigs(config: Record<string, string>, maxTasks: number): Record<string, string>[];
}

export interface SinkPlugin extends ConnectorPlugin {
  type: 'sink';
  createTask(config: Record<string, string>, context: TaskContext): Promise<SinkTask>;
}

export interface SourcePlugin extends ConnectorPlugin {
  type: 'source';
  /** The topics this config produces to (before SMTs), for the caller's WRITE checks (connect/access.ts). */
  outputTopics?(config: Record<string, string>): string[];
  createTask(config: Record<string, string>, context: TaskContext): Promise<SourceTask>;
}

export type AnyPlugin = SinkPlugin | SourcePlugin;

/** A stable string for a source partition map (sorted keys), used as a storage key. */
export const sourcePartitionKey = (partition: SourceMap): string =>
  JSON.stringify(Object.fromEntries(Object.entries(partition).sort(([a], [b]) => (a < b ? -1 : 1))));

/** A failure worth retrying (errors.retry.timeout): a connection dropped, a service briefly away. */
export class RetriableConnectError extends Error {
  readonly retriable = true;
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'RetriableConnectError';
  }
}
