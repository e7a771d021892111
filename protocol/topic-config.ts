/**
 * Topic configs' Kafka names, types and Sluice's defaults: part of the contract, so in protocol/. The
 * core (lib/core/topics/configs.ts) parses and validates values against them; the Kafka gateway
 * reports a value equal to its default with DescribeConfigs' source DEFAULT_CONFIG.
 */
export type CleanupPolicy = 'delete' | 'compact' | 'compact,delete';

export interface TopicConfig {
  'retention.ms': number;
  'retention.bytes': number;
  'cleanup.policy': CleanupPolicy;
  'segment.bytes': number;
  'segment.ms': number;
  'min.insync.replicas': number;
  'max.message.bytes': number;
  'message.timestamp.type': 'CreateTime' | 'LogAppendTime';
  'delete.retention.ms': number;
  /** Kafka's log cleaner threshold: the dirty share of the log at which a compaction pass runs. */
  'min.cleanable.dirty.ratio': number;
  /** How long rolled data also stays in the replica stores (KIP-405; -2 = as long as retention.ms). */
  'local.retention.ms': number;
  /** Bytes of rolled data the replica stores keep per partition (-2 = as retention.bytes). */
  'local.retention.bytes': number;
  'unclean.leader.election.enable': boolean;
}

export const DEFAULT_TOPIC_CONFIG: TopicConfig = {
  'retention.ms': 604_800_000,
  'retention.bytes': -1,
  'cleanup.policy': 'delete',
  // 16 MiB, not Kafka's 1 GiB: a segment is one object that compaction rewrites whole and a Lambda holds
  // in memory while rolling it; 16 MiB already makes a 4 MiB fetch one ranged GET.
  'segment.bytes': 16_777_216,
  'segment.ms': 604_800_000,
  'min.insync.replicas': 1,
  'max.message.bytes': 1_048_588,
  'message.timestamp.type': 'CreateTime',
  'delete.retention.ms': 86_400_000,
  'min.cleanable.dirty.ratio': 0.5,
  // An hour, not Kafka's -2: replica stores are S3 Express One Zone (about 5x Standard's storage price),
  // and once a segment is rolled reads go to it; the copy serves reads while the segment store fails.
  'local.retention.ms': 3_600_000,
  'local.retention.bytes': -2,
  'unclean.leader.election.enable': false,
};
