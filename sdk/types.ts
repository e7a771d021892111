/** The shapes of API.md's request and response bodies, as the SDK sends and receives them. */

export interface ClusterDescription {
  clusterId: string;
  version: string;
  stores: { id: string; location: string }[];
}

export interface TopicSummary {
  name: string;
  partitions: number;
  replicationFactor: number;
}

export interface PartitionDescription {
  partition: number;
  leader: string;
  leaderEpoch: number;
  replicas: string[];
  isr: string[];
  logStartOffset: number;
  highWatermark: number;
}

export interface TopicDescription {
  name: string;
  topicId: string;
  replicationFactor: number;
  configs: Record<string, string>;
  partitions: PartitionDescription[];
}

export type Acks = 'all' | '1';

/** Bytes, or text sent as UTF-8. */
export type Bytes = Uint8Array | string;

/** A record to produce, after kafkajs's message shape. */
export interface Message {
  key?: Bytes | null;
  value: Bytes | null;
  headers?: Record<string, Bytes | null> | { key: string; value: Bytes | null }[];
  /** Pin a partition; otherwise the server's Kafka-compatible partitioner decides. */
  partition?: number;
  /** ms since the epoch (default: the server's time). */
  timestamp?: number;
}

export type RecordResult =
  | { partition: number; offset: number; timestamp: number }
  | { partition: number; error: { code: string; message: string; retriable: boolean } };

export interface BatchResult {
  baseOffset: number;
  lastOffset: number;
  logAppendTime: number;
  logStartOffset: number;
}

export interface ConsumedRecord {
  topic: string;
  partition: number;
  offset: number;
  timestamp: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: { key: string; value: Uint8Array | null }[];
}

export interface TopicPartitions {
  topic: string;
  partitions: number[];
}

export interface HeartbeatResponse {
  memberId: string;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  assignment: { topicPartitions: TopicPartitions[] } | null;
}

export interface CommittedOffset {
  topic: string;
  partition: number;
  offset: number;
  metadata: string;
}
