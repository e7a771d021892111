/**
 * The SDK consumer's rebalance listener (Kafka's onPartitionsAssigned/Revoked/Lost), partition EOF,
 * `resolveOffset` for a handler that stops part way, and a client-chosen member id (KIP-1082): what the
 * command line's `consume --group` is built on.
 */
import { describe, expect, it } from 'vitest';
import { encodeRecordBatch } from '../../../protocol/record-batch/index.js';
import { SluiceClient } from '../../../sdk/client.js';
import { RECORD_BATCH_MEDIA_TYPE } from '../../../sdk/producer.js';
import type { FetchLike } from '../../../sdk/transport.js';
import { withMultiFetch } from '../../support/multi-fetch-fake.js';

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Partition t-0 holds a, b, c at offsets 0-2 in one batch; `beat(n)` answers the n-th heartbeat. */
const fakeGroup = (
  beat: (n: number, body: Record<string, unknown>) => [number, unknown],
  committed: { topic: string; partition: number; offset: number; metadata: string }[] = [],
) => {
  const heartbeats: Record<string, unknown>[] = [];
  const commits: unknown[] = [];
  const batch = encodeRecordBatch(
    ['a', 'b', 'c'].map((v, i) => ({ key: null, value: utf8(v), headers: [], timestamp: 10 + i })),
  );
  const fetch: FetchLike = async (input, init) => {
    const url = new URL(input);
    const body = typeof init.body === 'string' ? (JSON.parse(init.body) as Record<string, unknown>) : {};
    const json = (status: number, value: unknown) =>
      new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json' } });
    if (url.pathname === '/v1/groups/g/heartbeat') {
      heartbeats.push(body);
      const [status, answer] = beat(heartbeats.length, body);
      return json(status, answer);
    }
    if (url.pathname === '/v1/groups/g/offsets' && init.method === 'GET')
      return json(200, { offsets: committed });
    if (url.pathname === '/v1/groups/g/offsets') {
      commits.push(body['offsets']);
      return json(200, { results: [] });
    }
    if (url.pathname === '/v1/topics/t/partitions/0/offsets') return json(200, { offset: 0, timestamp: -1 });
    if (url.pathname === '/v1/topics/t/partitions/0/records') {
      const offset = Number(url.searchParams.get('offset'));
      if (offset > 3)
        return json(416, {
          error: { code: 'OFFSET_OUT_OF_RANGE', message: 'out', retriable: false },
          logStartOffset: 0,
          highWatermark: 3,
        });
      if (offset >= 3) await new Promise((r) => setTimeout(r, 5));
      return new Response(offset >= 3 ? new Uint8Array(0) : batch, {
        status: 200,
        headers: {
          'content-type': RECORD_BATCH_MEDIA_TYPE,
          'sluice-high-watermark': '3',
          'sluice-log-start-offset': '0',
          'sluice-next-offset': String(Math.max(offset, 3)),
        },
      });
    }
    return json(404, { error: { code: 'NOT_FOUND', message: url.pathname, retriable: false } });
  };
  const client = new SluiceClient({
    url: 'http://sluice.test',
    fetch: withMultiFetch(fetch),
    retry: { retries: 0 },
  });
  return { client, heartbeats, commits };
};

const member = (epoch: number, partitions: number[] | null) => ({
  memberId: 'chosen-id',
  memberEpoch: epoch,
  heartbeatIntervalMs: 20,
  assignment: partitions && { topicPartitions: [{ topic: 't', partitions }] },
});

const until = async (condition: () => boolean): Promise<void> => {
  const deadline = Date.now() + 2_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 2));
  }
};

describe('Consumer rebalance listener, EOF and resolveOffset', () => {
  it('commits only what the handler resolved, reports EOF once, joins with its own member id', async () => {
    const { client, heartbeats, commits } = fakeGroup((n) => [200, member(1, n === 1 ? [0] : null)]);
    const events: string[] = [];
    const consumer = client.consumer({
      groupId: 'g',
      memberId: 'chosen-id',
      maxWaitMs: 10,
      autoCommitIntervalMs: 0,
    });
    consumer.subscribe({ topics: ['t'], fromBeginning: true });
    let batches = 0;
    const running = consumer.run({
      eachBatch: async ({ batch, resolveOffset }) => {
        batches += 1;
        events.push(`batch ${batch.records.map((r) => r.offset).join(',')}`);
        // The first time, only `a` is handled: the next fetch starts at 1.
        if (batches === 1) resolveOffset(0);
      },
      onPartitionsAssigned: (added) => void events.push(`assigned ${JSON.stringify(added)}`),
      onPartitionEof: (p) => void events.push(`eof ${p.partition}@${p.offset}`),
    });
    await until(() => events.some((e) => e.startsWith('eof')));
    await new Promise((r) => setTimeout(r, 50));
    await consumer.stop();
    await running;
    expect(events).toEqual([
      'assigned [{"topic":"t","partitions":[0]}]',
      'batch 0,1,2',
      'batch 1,2',
      'eof 0@3',
    ]);
    expect(heartbeats[0]).toMatchObject({ memberId: 'chosen-id', memberEpoch: 0 });
    // The assignment is acknowledged at once, not after a whole interval.
    expect(heartbeats[1]).toMatchObject({ ownedPartitions: [{ topic: 't', partitions: [0] }] });
    expect(commits).toEqual([[{ topic: 't', partition: 0, offset: 3, metadata: '' }]]);
    expect(heartbeats.at(-1)).toEqual({ memberId: 'chosen-id', memberEpoch: -1, instanceId: null });
  });

  it('resets a committed offset outside the log to auto.offset.reset and tells the handler', async () => {
    const { client } = fakeGroup(
      (n) => [200, member(1, n === 1 ? [0] : null)],
      [{ topic: 't', partition: 0, offset: 9, metadata: '' }],
    );
    const events: string[] = [];
    const consumer = client.consumer({ groupId: 'g', maxWaitMs: 10, autoCommitIntervalMs: 0 });
    consumer.subscribe({ topics: ['t'], fromBeginning: true });
    const running = consumer.run({
      eachBatch: async ({ batch }) =>
        void events.push(`batch ${batch.records.map((r) => r.offset).join(',')}`),
      onOffsetReset: (p) => void events.push(`reset ${p.partition} ${p.offset}->${p.resetTo}`),
    });
    await until(() => events.length >= 2);
    await consumer.stop();
    await running;
    expect(events).toEqual(['reset 0 9->0', 'batch 0,1,2']);
  });

  it('commits the batch start when the handler resolved none of its records', async () => {
    const { client, commits } = fakeGroup((n) => [200, member(1, n === 1 ? [0] : null)]);
    const consumer = client.consumer({ groupId: 'g', maxWaitMs: 10, autoCommitIntervalMs: 0 });
    consumer.subscribe({ topics: ['t'], fromBeginning: true });
    let stopping: Promise<void> | undefined;
    await consumer.run({
      eachBatch: async ({ resolveOffset }) => {
        resolveOffset(-1);
        stopping ??= consumer.stop();
      },
    });
    await stopping;
    // None of a, b, c handled: the next owner starts at 0, not at the batch's nextOffset 3.
    expect(commits).toEqual([[{ topic: 't', partition: 0, offset: 0, metadata: '' }]]);
  });

  it('tells the listener about revoked partitions after committing them, and lost ones uncommitted', async () => {
    const { client, commits } = fakeGroup((n) =>
      n === 1
        ? [200, member(1, [0])]
        : n === 3
          ? [200, member(2, [])]
          : n === 5
            ? [200, member(3, [0])]
            : n === 7
              ? [409, { error: { code: 'FENCED_MEMBER_EPOCH', message: 'stale', retriable: false } }]
              : [200, member(n < 5 ? 2 : 3, null)],
    );
    const events: string[] = [];
    const consumer = client.consumer({ groupId: 'g', maxWaitMs: 10, autoCommitIntervalMs: 0 });
    consumer.subscribe({ topics: ['t'], fromBeginning: true });
    const running = consumer.run({
      eachBatch: async () => {},
      onPartitionsAssigned: (added) => void events.push(`assigned ${JSON.stringify(added)}`),
      onPartitionsRevoked: (gone) =>
        void events.push(`revoked ${JSON.stringify(gone)} after ${commits.length} commits`),
      onPartitionsLost: (lost) =>
        void events.push(`lost ${JSON.stringify(lost)} after ${commits.length} commits`),
    });
    await until(() => events.some((e) => e.startsWith('lost')));
    await consumer.stop();
    await running;
    const tp = '[{"topic":"t","partitions":[0]}]';
    expect(events.slice(0, 5)).toEqual([
      `assigned ${tp}`,
      'revoked [{"topic":"t","partitions":[0]}] after 1 commits',
      'assigned []',
      `assigned ${tp}`,
      `lost ${tp} after 1 commits`,
    ]);
  });
});
