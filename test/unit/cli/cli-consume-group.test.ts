/**
 * `consume --group` on the SDK's group consumer: what it commits is what it printed, even when --max
 * stops it inside a fetched batch; a new group starts at auto.offset.reset.
 */
import { describe, expect, it } from 'vitest';
import { EXIT_OK } from '../../../cli/main.js';
import type { Answer, Request } from '../../support/cli-fake.js';
import { cli, envelope, fakeApi, orders } from '../../support/cli-fake.js';

/** Group billing assigns partition 0 of orders (offsets 0-2, two records per fetch) to its member. */
const groupApi = (committed: number | undefined) =>
  fakeApi((r: Request): Answer => {
    if (r.path === '/v1/topics/orders') return [200, orders];
    if (r.path === '/v1/groups/billing/heartbeat')
      return [
        200,
        {
          memberId: r.body.memberId,
          memberEpoch: r.body.memberEpoch === -1 ? -1 : 3,
          heartbeatIntervalMs: 5000,
          assignment:
            r.body.memberEpoch === -1 ? null : { topicPartitions: [{ topic: 'orders', partitions: [0] }] },
        },
      ];
    if (r.path === '/v1/groups/billing/offsets' && r.method === 'GET')
      return [
        200,
        {
          offsets:
            committed === undefined
              ? []
              : [{ topic: 'orders', partition: 0, offset: committed, metadata: '' }],
        },
      ];
    if (r.path === '/v1/groups/billing/offsets')
      return [
        200,
        {
          results: r.body.offsets.map((o: { partition: number }) => ({
            topic: 'orders',
            partition: o.partition,
          })),
        },
      ];
    if (r.path === '/v1/topics/orders/partitions/0/offsets')
      return [200, { offset: r.query['at'] === 'earliest' ? 0 : 3, timestamp: -1 }];
    if (r.path === '/v1/topics/orders/partitions/0/records') {
      const offset = Number(r.query['offset']);
      const end = Math.min(offset + 2, 3);
      const records = [];
      for (let o = offset; o < end; o++)
        records.push({ offset: o, timestamp: 1000 + o, key: null, value: `v${o}`, headers: [] });
      return [200, { records, nextOffset: end, highWatermark: 3, logStartOffset: 0 }];
    }
    return [404, envelope('NOT_FOUND', r.path)];
  });

const commitsOf = (requests: Request[]) =>
  requests
    .filter((r) => r.method === 'POST' && r.path === '/v1/groups/billing/offsets')
    .map((r) => r.body.offsets);

describe('consume --group', () => {
  it('commits only the records it printed when --max stops it inside a batch', async () => {
    const api = groupApi(undefined);
    const result = await cli(
      ['consume', 'orders', '--group', 'billing', '--from-beginning', '--max', '1', '--details'],
      api.fetch,
    );
    expect(result.code).toBe(EXIT_OK);
    expect(result.stdout).toBe('Partition:0\tOffset:0\tnull\tv0\n');
    // The fetch returned offsets 0 and 1; only 0 was printed, so the group resumes at 1.
    expect(commitsOf(api.requests)).toEqual([[{ topic: 'orders', partition: 0, offset: 1, metadata: '' }]]);
    expect(api.requests.find((r) => r.path === '/v1/topics/orders/partitions/0/offsets')?.query).toEqual({
      at: 'earliest',
    });
  });

  it('reads from the committed offset to the end of the log without --follow, commits it and leaves', async () => {
    const api = groupApi(1);
    const result = await cli(['consume', 'orders', '--group', 'billing', '--details'], api.fetch);
    expect(result.code).toBe(EXIT_OK);
    expect(result.stdout).toBe('Partition:0\tOffset:1\tnull\tv1\nPartition:0\tOffset:2\tnull\tv2\n');
    expect(commitsOf(api.requests)).toEqual([[{ topic: 'orders', partition: 0, offset: 3, metadata: '' }]]);
    expect(result.stderr).toContain('owns partition 0 of orders');
    expect(result.stderr).toContain('Committed offsets of orders partition 0.');
    expect(result.stderr).toMatch(/Member [0-9a-f-]{36} left group billing\./);
    expect(api.requests.at(-1)?.body).toEqual({
      memberId: expect.any(String),
      memberEpoch: -1,
      instanceId: null,
    });
  });
});
