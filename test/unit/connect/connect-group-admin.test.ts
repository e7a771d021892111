/**
 * The herder reaches a sink's consumer group only through ConnectGroupAdmin (connect/group-admin.ts),
 * the interface the composition root implements: over a recording fake it makes exactly Kafka's
 * Admin calls for KIP-875, and answers a refused partition with the refusal's Kafka error code.
 */
import { describe, expect, it } from 'vitest';
import type { AlterOffsetResult, ConnectGroupAdmin, SinkOffset } from '../../../connect/group-admin.js';
import { Herder } from '../../../connect/herder.js';
import { ConnectStateStore } from '../../../connect/state-store.js';
import { MemoryMetadataStore } from '../../../lib/adapters/memory/metadata-store.js';
import { SluiceError } from '../../../protocol/errors.js';

const S3_SINK = {
  'connector.class': 'io.sluice.connect.s3.S3SinkConnector',
  topics: 'orders',
  's3.bucket.name': 'archive',
  'flush.size': '100',
};

class RecordingAdmin implements ConnectGroupAdmin {
  readonly calls: string[] = [];
  committed: SinkOffset[] = [];
  refuse: AlterOffsetResult['error'] | undefined;
  groups = new Set<string>();

  async listConsumerGroupOffsets(groupId: string): Promise<SinkOffset[]> {
    this.calls.push(`list ${groupId}`);
    return this.committed;
  }

  async alterConsumerGroupOffsets(
    groupId: string,
    offsets: readonly SinkOffset[],
  ): Promise<AlterOffsetResult[]> {
    this.calls.push(
      `alter ${groupId} ${offsets.map((o) => `${o.topic}-${o.partition}@${o.offset}`).join(',')}`,
    );
    if (this.refuse) return offsets.map((o, i) => ({ ...o, ...(i === 1 ? { error: this.refuse } : {}) }));
    this.committed = [...offsets];
    return offsets.map(({ topic, partition }) => ({ topic, partition }));
  }

  async deleteConsumerGroups(groupId: string): Promise<void> {
    this.calls.push(`delete ${groupId}`);
    if (!this.groups.delete(groupId))
      throw new SluiceError('GROUP_ID_NOT_FOUND', `group ${groupId} not found`);
  }
}

const setup = async () => {
  const admin = new RecordingAdmin();
  const herder = new Herder(new ConnectStateStore(new MemoryMetadataStore()), admin);
  await herder.create('archive', S3_SINK, 'STOPPED');
  return { admin, herder };
};

const entry = (partition: number, offset: number) => ({
  partition: { kafka_topic: 'orders', kafka_partition: partition },
  offset: { kafka_offset: offset },
});

describe('the herder over ConnectGroupAdmin', () => {
  it('reads and alters a sink’s offsets as its group connect-{name}', async () => {
    const { admin, herder } = await setup();
    expect(await herder.offsets('archive')).toEqual({ offsets: [] });
    await herder.alterOffsets('archive', [entry(0, 7), entry(1, 9)]);
    expect(await herder.offsets('archive')).toEqual({ offsets: [entry(0, 7), entry(1, 9)] });
    expect(admin.calls).toEqual([
      'list connect-archive',
      'alter connect-archive orders-0@7,orders-1@9',
      'list connect-archive',
    ]);
  });

  it('a refused partition fails the alteration with its Kafka error code, naming the partition', async () => {
    const { admin, herder } = await setup();
    admin.refuse = { code: 'UNKNOWN_TOPIC_OR_PARTITION', message: 'orders/1 does not exist' };
    const error = await herder.alterOffsets('archive', [entry(0, 7), entry(1, 9)]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SluiceError);
    expect(error).toMatchObject({
      code: 'UNKNOWN_TOPIC_OR_PARTITION',
      message: 'orders-1: orders/1 does not exist',
    });
  });

  it('reset and delete remove the group; a group that never existed is no error', async () => {
    const { admin, herder } = await setup();
    admin.groups.add('connect-archive');
    await herder.resetOffsets('archive');
    await herder.delete('archive');
    expect(admin.calls).toEqual(['delete connect-archive', 'delete connect-archive']);
    expect(admin.groups.size).toBe(0);
  });

  it('a source connector’s offsets never reach the group admin', async () => {
    const admin = new RecordingAdmin();
    const herder = new Herder(new ConnectStateStore(new MemoryMetadataStore()), admin);
    await herder.create('pg', {
      'connector.class': 'io.sluice.connect.jdbc.JdbcSourceConnector',
      'connection.url': 'postgresql://127.0.0.1:5432/shop',
      'table.whitelist': 'orders',
      mode: 'incrementing',
      'incrementing.column.name': 'id',
      'topic.prefix': 'pg-',
    });
    expect(await herder.offsets('pg')).toEqual({ offsets: [] });
    await herder.delete('pg');
    expect(admin.calls).toEqual([]);
  });
});
