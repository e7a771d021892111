/**
 * What the herder asks of a sink connector's consumer group (`connect-{name}`) for KIP-875's offsets
 * API. Kafka Connect's herder makes the same three calls with an Admin client
 * (listConsumerGroupOffsets, alterConsumerGroupOffsets, deleteConsumerGroups). connect/ owns the
 * interface and knows nothing of the group coordinator: the composition root wires an implementation
 * (functions/connect-group-admin.ts, over the coordinator of the process it runs in).
 */

/** A sink's position in one partition: the next offset its group reads. */
export interface SinkOffset {
  topic: string;
  partition: number;
  offset: number;
}

/** One partition's answer to an alteration; `error` carries Kafka's error code when it was refused. */
export interface AlterOffsetResult {
  topic: string;
  partition: number;
  error?: { code: string; message: string };
}

export interface ConnectGroupAdmin {
  /** The group's committed offsets (none when the group does not exist). */
  listConsumerGroupOffsets(groupId: string): Promise<SinkOffset[]>;
  /** Commits these offsets for an empty group; per partition, in request order. */
  alterConsumerGroupOffsets(groupId: string, offsets: readonly SinkOffset[]): Promise<AlterOffsetResult[]>;
  /** Deletes the group and its offsets; GROUP_ID_NOT_FOUND when there is none. */
  deleteConsumerGroups(groupId: string): Promise<void>;
}
