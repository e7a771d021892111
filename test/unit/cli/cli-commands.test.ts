import { describe, expect, it } from 'vitest';
import { errorFromResponse as errorFromAnswer } from '../../../sdk/errors.js';
import { EXIT_API_ERROR, EXIT_OK, EXIT_USAGE, run } from '../../../cli/main.js';
import type { FetchLike } from '../../../sdk/transport.js';
import type { Answer, Request } from '../../support/cli-fake.js';
import { cli, envelope, fakeApi, orders, partition } from '../../support/cli-fake.js';

describe('topics', () => {
  it('lists topics sorted in a table, or as JSON', async () => {
    const api = fakeApi(() => [
      200,
      {
        topics: [
          { name: 'payments', partitions: 12, replicationFactor: 2 },
          { name: 'audit', partitions: 1, replicationFactor: 1 },
        ],
      },
    ]);
    const table = await cli(['topics', 'list'], api.fetch);
    expect(table.code).toBe(EXIT_OK);
    expect(table.stdout).toBe(
      [
        'TOPIC     PARTITIONS  REPLICATION FACTOR',
        'audit              1                   1',
        'payments          12                   2',
        '',
      ].join('\n'),
    );
    const json = await cli(['topics', 'list', '--json'], api.fetch);
    expect(JSON.parse(json.stdout).topics.map((t: { name: string }) => t.name)).toEqual([
      'audit',
      'payments',
    ]);
    expect(api.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/topics', 'GET /v1/topics']);
  });

  it('describes a topic: header, partitions table, configs', async () => {
    const api = fakeApi(() => [200, orders]);
    const result = await cli(['topics', 'describe', 'orders'], api.fetch);
    expect(result.stdout).toBe(
      [
        'Topic: orders  TopicId: id-1  PartitionCount: 2  ReplicationFactor: 2',
        '',
        'PARTITION  LEADER  EPOCH  REPLICAS  ISR    LOG START  HIGH WATERMARK',
        '        0  s0          2  s0,s1     s0,s1          0               3',
        '        1  s0          2  s0,s1     s0,s1          5               7',
        '',
        'CONFIG          VALUE',
        'cleanup.policy  delete',
        'retention.ms    604800000',
        '',
      ].join('\n'),
    );
  });

  it('creates a topic with the options as the API body', async () => {
    const api = fakeApi(() => [201, { ...orders, partitions: [partition(0, 0, 0), partition(1, 0, 0)] }]);
    const result = await cli(
      [
        'topics',
        'create',
        'orders',
        '--partitions',
        '2',
        '--replication-factor',
        '2',
        '--config',
        'retention.ms=1000',
      ],
      api.fetch,
    );
    expect(result.code).toBe(EXIT_OK);
    expect(result.stdout).toBe('Created topic orders with 2 partitions, replication factor 2.\n');
    expect(api.requests[0]).toMatchObject({
      method: 'POST',
      path: '/v1/topics',
      body: { name: 'orders', partitions: 2, replicationFactor: 2, configs: { 'retention.ms': '1000' } },
    });
  });

  it('succeeds on an existing topic only with --if-not-exists', async () => {
    const api = fakeApi(() => [409, envelope('TOPIC_ALREADY_EXISTS', 'topic orders already exists')]);
    const plain = await cli(['topics', 'create', 'orders'], api.fetch);
    expect(plain.code).toBe(EXIT_API_ERROR);
    expect(plain.stderr).toBe(
      'error: TOPIC_ALREADY_EXISTS (HTTP 409): topic orders already exists\n' +
        'hint: choose another name, or pass --if-not-exists\n',
    );
    const tolerant = await cli(['topics', 'create', 'orders', '--if-not-exists'], api.fetch);
    expect(tolerant.code).toBe(EXIT_OK);
    expect(tolerant.stderr).toBe('Topic orders already exists.\n');
  });

  it('alters partitions and configs, showing what changed', async () => {
    const api = fakeApi((r) =>
      r.method === 'GET'
        ? [200, orders]
        : [
            200,
            {
              ...orders,
              partitions: [...orders.partitions, partition(2, 0, 0)],
              configs: { 'retention.ms': '1' },
            },
          ],
    );
    const result = await cli(
      ['topics', 'alter', 'orders', '--partitions', '3', '--config', 'retention.ms=1'],
      api.fetch,
    );
    expect(result.stdout).toBe('Altered topic orders: partitions 2 → 3, retention.ms=1.\n');
    expect(api.requests[1]).toMatchObject({
      method: 'PATCH',
      path: '/v1/topics/orders',
      body: { partitions: 3, configs: { 'retention.ms': '1' } },
    });
    const nothing = await cli(['topics', 'alter', 'orders'], api.fetch);
    expect(nothing.code).toBe(EXIT_USAGE);
  });

  it('deletes, percent-encoding the name as one path segment', async () => {
    const api = fakeApi(() => [204]);
    const result = await cli(['topics', 'delete', 'a.b_c-d'], api.fetch);
    expect(result.stdout).toBe('Deleted topic a.b_c-d.\n');
    expect(api.requests[0]).toMatchObject({ method: 'DELETE', path: '/v1/topics/a.b_c-d' });
  });
});

describe('errors', () => {
  it('prints code, status, message and a hint, exit 1; as JSON on stderr under --json', async () => {
    const api = fakeApi(() => [404, envelope('UNKNOWN_TOPIC_OR_PARTITION', 'topic nope does not exist')]);
    const text = await cli(['topics', 'describe', 'nope'], api.fetch);
    expect(text.code).toBe(EXIT_API_ERROR);
    expect(text.stdout).toBe('');
    expect(text.stderr).toBe(
      'error: UNKNOWN_TOPIC_OR_PARTITION (HTTP 404): topic nope does not exist\n' +
        'hint: list the topics with `sluice topics list`; create one with `sluice topics create <topic>`\n',
    );
    const json = await cli(['topics', 'describe', 'nope', '--json'], api.fetch);
    expect(JSON.parse(json.stderr)).toEqual({
      error: {
        code: 'UNKNOWN_TOPIC_OR_PARTITION',
        message: 'topic nope does not exist',
        retriable: false,
        status: 404,
        hint: expect.stringContaining('sluice topics list'),
      },
    });
  });

  it('suggests the nearest command, flag or topic for a typo', async () => {
    const api = fakeApi((r) =>
      r.path === '/v1/topics'
        ? [
            200,
            {
              topics: [
                { name: 'orders', partitions: 1, replicationFactor: 1 },
                { name: 'payments', partitions: 1, replicationFactor: 1 },
              ],
            },
          ]
        : [404, envelope('UNKNOWN_TOPIC_OR_PARTITION', 'topic ordrs does not exist')],
    );
    const command = await cli(['consme', 'orders'], api.fetch);
    expect(command.code).toBe(EXIT_USAGE);
    expect(command.stderr).toContain('error: unknown command "consme"; did you mean "consume"?\n');
    const sub = await cli(['topics', 'descibe', 'orders'], api.fetch);
    expect(sub.stderr).toContain('unknown command "topics descibe"; did you mean "describe"?');
    const flag = await cli(['consume', 'orders', '--from-begining'], api.fetch);
    expect(flag.code).toBe(EXIT_USAGE);
    expect(flag.stderr).toContain("Unknown option '--from-begining' (did you mean --from-beginning?)");
    const topic = await cli(['topics', 'describe', 'ordrs'], api.fetch);
    expect(topic.code).toBe(EXIT_API_ERROR);
    expect(topic.stderr).toContain('hint: did you mean orders?; list the topics');
  });

  it('asks whether the server runs when the connection is refused, without retrying', async () => {
    let calls = 0;
    const refused: FetchLike = async () => {
      calls += 1;
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      });
    };
    const result = await cli(['topics', 'list'], refused);
    expect(result.code).toBe(EXIT_API_ERROR);
    expect(calls).toBe(1);
    expect(result.stderr).toBe(
      'error: NETWORK_EXCEPTION: cannot reach http://sluice.test: ECONNREFUSED\n' +
        'hint: nothing answers at http://sluice.test: is `npm start` running? (or point --url / SLUICE_URL at the API)\n',
    );
  });

  it('retries a retriable read with growing backoff, then says it is retriable', async () => {
    let calls = 0;
    const api = fakeApi(() => {
      calls += 1;
      return calls < 3
        ? [503, envelope('NOT_ENOUGH_REPLICAS', 'a store is down', true)]
        : [200, { status: 'ok' }];
    });
    const recovered = await cli(['health'], api.fetch);
    expect(recovered.code).toBe(EXIT_OK);
    expect(recovered.stdout).toMatch(/^ok \(http:\/\/sluice\.test, \d+ ms\)\n$/);
    expect(recovered.sleeps).toHaveLength(2);
    expect(recovered.sleeps[1]!).toBeGreaterThan(recovered.sleeps[0]!);

    const down = fakeApi(() => [503, envelope('NOT_ENOUGH_REPLICAS', 'a store is down', true)]);
    const failed = await cli(['health'], down.fetch);
    expect(failed.code).toBe(EXIT_API_ERROR);
    expect(down.requests).toHaveLength(4);
    expect(failed.stderr).toContain('hint: retriable — try again (this command already tried 4 times)');
  });

  it('does not retry a write that is not idempotent', async () => {
    const api = fakeApi(() => [503, envelope('NOT_ENOUGH_REPLICAS', 'a store is down', true)]);
    const result = await cli(['topics', 'create', 'orders'], api.fetch);
    expect(result.code).toBe(EXIT_API_ERROR);
    expect(api.requests).toHaveLength(1);
    expect(result.stderr).toContain('hint: retriable — try again\n');
  });

  it('maps answers without the envelope by status', () => {
    const gateway = errorFromAnswer(502, '<html>Bad Gateway</html>');
    expect([gateway.code, gateway.retriable, gateway.status]).toEqual(['UNKNOWN_SERVER_ERROR', true, 502]);
    const forbidden = errorFromAnswer(403, '{"message":"Forbidden"}');
    expect([forbidden.code, forbidden.retriable]).toEqual(['SASL_AUTHENTICATION_FAILED', false]);
    const envelope416 = errorFromAnswer(
      416,
      JSON.stringify(envelope('OFFSET_OUT_OF_RANGE', 'x', false, { highWatermark: 9 })),
    );
    expect(envelope416.details).toEqual({ highWatermark: 9 });
  });
});

/** A two-partition log: partition 0 holds offsets 0-2, partition 1 offsets 5-6, two records per fetch. */
const logAnswer = (r: Request): Answer => {
  if (r.path === '/v1/topics/orders') return [200, orders];
  const m = /^\/v1\/topics\/orders\/partitions\/(\d+)\/records$/.exec(r.path);
  if (!m) return [404, envelope('NOT_FOUND', r.path)];
  const p = Number(m[1]);
  const { logStartOffset, highWatermark } = orders.partitions[p]!;
  const offset = Number(r.query['offset']);
  if (offset < logStartOffset || offset > highWatermark) {
    return [
      416,
      envelope('OFFSET_OUT_OF_RANGE', `offset ${offset} is outside`, false, {
        logStartOffset,
        highWatermark,
      }),
    ];
  }
  const end = Math.min(offset + 2, highWatermark);
  const records = [];
  for (let o = offset; o < end; o++) {
    records.push({
      offset: o,
      timestamp: 1000 + o,
      key: o % 2 ? null : `k${o}`,
      value: `v${p}.${o}`,
      headers: [],
    });
  }
  return [200, { records, nextOffset: end, highWatermark, logStartOffset }];
};
const logApi = () => fakeApi(logAnswer);

describe('consume', () => {
  it("prints the value alone by default, as kafka-console-consumer's DefaultMessageFormatter", async () => {
    const api = logApi();
    const result = await cli(['consume', 'orders', '--from-beginning', '--max-messages', '4'], api.fetch);
    expect(result.code).toBe(EXIT_OK);
    // One poll over both partitions brings 0-1 of partition 0 and 5-6 of partition 1.
    expect(result.stdout).toBe('v0.0\nv0.1\nv1.5\nv1.6\n');
    const offsets = await cli(
      ['consume', 'orders', '--property', 'print.offset=true', '--property', 'print.value=false'],
      api.fetch,
    );
    expect(offsets.stdout).toBe('Offset:0\nOffset:1\nOffset:5\nOffset:6\nOffset:2\n');
    const keyed = await cli(
      ['consume', 'orders', '--property', 'print.key=true', '--property', 'key.separator=|'],
      api.fetch,
    );
    expect(keyed.stdout).toBe('k0|v0.0\nnull|v0.1\nnull|v1.5\nk6|v1.6\nk2|v0.2\n');
    const mixed = await cli(['consume', 'orders', '--details', '--property', 'print.key=true'], api.fetch);
    expect(mixed.code).toBe(EXIT_USAGE);
  });

  it('prints every partition from earliest to the end, one fetch per poll over all of them (--details)', async () => {
    const api = logApi();
    const result = await cli(['consume', 'orders', '--from', 'earliest', '--details'], api.fetch);
    expect(result.code).toBe(EXIT_OK);
    expect(result.stdout.split('\n')).toEqual([
      'Partition:0\tOffset:0\tk0\tv0.0',
      'Partition:0\tOffset:1\tnull\tv0.1',
      'Partition:1\tOffset:5\tnull\tv1.5',
      'Partition:1\tOffset:6\tk6\tv1.6',
      'Partition:0\tOffset:2\tk2\tv0.2',
      '',
    ]);
    expect(result.stderr).toMatch(/^Consumed 5 records in .+\.\n$/);
    // Two polls: both partitions, then partition 0 alone (partition 1 reached its high watermark).
    expect(
      api.polls.map((r) =>
        r.body.partitions.map((p: { partition: number; offset: number }) => [p.partition, p.offset]),
      ),
    ).toEqual([
      [
        [0, 0],
        [1, 5],
      ],
      [[0, 2]],
    ]);
    expect(api.polls.every((r) => r.body.maxWaitMs === 0 && r.body.isolationLevel === undefined)).toBe(true);
  });

  it("shows a running count on a terminal while the records go to a pipe, and Kafka's record format", async () => {
    const api = logApi();
    let stdout = '';
    let stderr = '';
    let clock = 0;
    const code = await run(
      [
        'consume',
        'orders',
        '--from-beginning',
        '--property',
        'print.partition=true',
        '--property',
        'print.key=true',
      ],
      {
        stdout: { write: (t) => void (stdout += t), isTTY: false },
        stderr: { write: (t) => void (stderr += t), isTTY: true },
        env: { SLUICE_URL: 'http://sluice.test' },
        fetch: api.fetch,
        // Each reading of the clock is 600 ms later, so the progress line is due every other record.
        now: () => (clock += 600),
      },
    );
    expect(code).toBe(EXIT_OK);
    expect(stdout.split('\n')).toEqual([
      'Partition:0\tk0\tv0.0',
      'Partition:0\tnull\tv0.1',
      'Partition:1\tnull\tv1.5',
      'Partition:1\tk6\tv1.6',
      'Partition:0\tk2\tv0.2',
      '',
    ]);
    const lines = stderr.split('\r\x1b[2K').filter((l) => l.includes('records consumed'));
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines[0]).toMatch(/^\d records consumed, [\d.]+ records\/s$/);
    expect(stderr.endsWith('\r\x1b[2K' + stderr.split('\r\x1b[2K').at(-1))).toBe(true);
    expect(stderr.split('\r\x1b[2K').at(-1)).toMatch(/^Consumed 5 records in .+\.\n$/);
  });

  it('stops at --max and prints JSON lines under --json', async () => {
    const api = logApi();
    const result = await cli(['consume', 'orders', '--max', '2', '--json', '--partition', '1'], api.fetch);
    expect(
      result.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { topic: 'orders', partition: 1, offset: 5, timestamp: 1005, key: null, value: 'v1.5', headers: [] },
      { topic: 'orders', partition: 1, offset: 6, timestamp: 1006, key: 'k6', value: 'v1.6', headers: [] },
    ]);
    const values = await cli(['consume', 'orders', '--max', '1', '--value-only', '--from', '2'], api.fetch);
    expect(values.stdout).toBe('v0.2\n');
  });

  it('starts at a timestamp through ListOffsets', async () => {
    const api = fakeApi((r) => {
      if (r.path === '/v1/topics/orders') return [200, orders];
      if (r.path.endsWith('/offsets')) return [200, { offset: 6, timestamp: 1006 }];
      return [200, { records: [], nextOffset: 6, highWatermark: 7, logStartOffset: 5 }];
    });
    await cli(['consume', 'orders', '--partition', '1', '--from', '@1006'], api.fetch);
    expect(api.requests.find((r) => r.path.endsWith('/offsets'))?.query).toEqual({ at: '1006' });
    expect(api.requests.find((r) => r.path.endsWith('/records'))?.query['offset']).toBe('6');
  });

  it('explains an offset outside the log', async () => {
    const result = await cli(['consume', 'orders', '--partition', '0', '--from', '9'], logApi().fetch);
    expect(result.code).toBe(EXIT_API_ERROR);
    expect(result.stderr).toContain('error: OFFSET_OUT_OF_RANGE: offset 9 is outside');
    expect(result.stderr).toContain('hint: the log holds offsets 0 to 3; try --from earliest or latest');
  });

  it('asks again for a partition whose error is retriable, and ends with it once it keeps failing', async () => {
    let failures = 1;
    const flaky = fakeApi((r) =>
      r.path === '/v1/topics/orders/partitions/1/records' && failures-- > 0
        ? [503, envelope('NOT_LEADER_OR_FOLLOWER', 'moving', true)]
        : logAnswer(r),
    );
    const recovered = await cli(['consume', 'orders', '--details'], flaky.fetch);
    expect(recovered.code).toBe(EXIT_OK);
    expect(recovered.stdout.trim().split('\n')).toHaveLength(5);
    const down = fakeApi((r) =>
      r.path === '/v1/topics/orders/partitions/1/records'
        ? [503, envelope('NOT_LEADER_OR_FOLLOWER', 'moving', true)]
        : logAnswer(r),
    );
    const failed = await cli(['consume', 'orders'], down.fetch);
    expect(failed.code).toBe(EXIT_API_ERROR);
    expect(failed.stderr).toContain('error: NOT_LEADER_OR_FOLLOWER: moving');
    // Partition 0 was read meanwhile; partition 1 was asked in four polls before its error ended the read.
    expect(failed.stdout).toBe('v0.0\nv0.1\nv0.2\n');
    expect(
      down.polls.filter((p) => p.body.partitions.some((x: { partition: number }) => x.partition === 1)),
    ).toHaveLength(4);
    const fatal = fakeApi((r) =>
      r.path === '/v1/topics/orders/partitions/1/records'
        ? [404, envelope('UNKNOWN_TOPIC_OR_PARTITION', 'gone')]
        : logAnswer(r),
    );
    expect((await cli(['consume', 'orders'], fatal.fetch)).stderr).toContain(
      'error: UNKNOWN_TOPIC_OR_PARTITION',
    );
    expect(fatal.polls).toHaveLength(1);
  });

  it('rejects a partition the topic does not have', async () => {
    const result = await cli(['consume', 'orders', '--partition', '7'], logApi().fetch);
    expect(result.code).toBe(EXIT_USAGE);
    expect(result.stderr).toContain('orders has 2 partitions; there is no partition 7');
  });

  it('renders the fetched RecordBatches in each --encoding as the JSON fetch would', async () => {
    const api = fakeApi((r) =>
      r.path === '/v1/topics/orders'
        ? [200, { ...orders, partitions: [partition(0, 0, 1)] }]
        : [
            200,
            {
              records: [
                {
                  offset: 0,
                  timestamp: 1,
                  key: 'ké',
                  value: '{"a":[1,2]}',
                  headers: [{ key: 'h', value: 'v' }],
                },
              ],
              nextOffset: 1,
              highWatermark: 1,
              logStartOffset: 0,
            },
          ],
    );
    const lines = async (encoding: string) =>
      (await cli(['consume', 'orders', '--json', '--encoding', encoding], api.fetch)).stdout
        .trim()
        .split('\n');
    const record = { topic: 'orders', partition: 0, offset: 0, timestamp: 1 };
    expect((await lines('base64')).map((l) => JSON.parse(l))).toEqual([
      { ...record, key: 'a8Op', value: 'eyJhIjpbMSwyXX0=', headers: [{ key: 'h', value: 'dg==' }] },
    ]);
    expect((await lines('json')).map((l) => JSON.parse(l))).toEqual([
      { ...record, key: 'ké', value: { a: [1, 2] }, headers: [{ key: 'h', value: 'v' }] },
    ]);
    expect((await lines('utf8')).map((l) => JSON.parse(l))).toEqual([
      { ...record, key: 'ké', value: '{"a":[1,2]}', headers: [{ key: 'h', value: 'v' }] },
    ]);
  });

  it('escapes control characters so a record stays on one line', async () => {
    const api = fakeApi((r) =>
      r.path === '/v1/topics/orders'
        ? [200, { ...orders, partitions: [partition(0, 0, 1)] }]
        : [
            200,
            {
              records: [{ offset: 0, timestamp: 1, key: 'k', value: 'a\nb\tc', headers: [] }],
              nextOffset: 1,
              highWatermark: 1,
              logStartOffset: 0,
            },
          ],
    );
    const result = await cli(['consume', 'orders', '--details'], api.fetch);
    expect(result.stdout).toBe('Partition:0\tOffset:0\tk\ta\\nb\tc\n');
    expect((await cli(['consume', 'orders'], api.fetch)).stdout).toBe('a\\nb\tc\n');
  });
});

describe('consume --group', () => {
  it('joins, reads assigned partitions from committed offsets, commits under its epoch and leaves', async () => {
    const api = fakeApi((r) => {
      if (r.path === '/v1/groups/billing/heartbeat') {
        if (r.body.memberEpoch === -1)
          return [
            200,
            { memberId: r.body.memberId, memberEpoch: -1, heartbeatIntervalMs: 5000, assignment: null },
          ];
        return [
          200,
          {
            memberId: r.body.memberId,
            memberEpoch: 4,
            heartbeatIntervalMs: 5000,
            assignment: { topicPartitions: [{ topic: 'orders', partitions: [0, 1] }] },
          },
        ];
      }
      if (r.path === '/v1/groups/billing/offsets' && r.method === 'GET') {
        return [200, { offsets: [{ topic: 'orders', partition: 0, offset: 1, metadata: '' }] }];
      }
      if (r.path === '/v1/groups/billing/offsets') {
        return [
          200,
          {
            results: r.body.offsets.map((o: { partition: number }) => ({
              topic: 'orders',
              partition: o.partition,
            })),
          },
        ];
      }
      if (r.path.endsWith('/offsets')) return [200, { offset: 5, timestamp: -1 }];
      return logAnswer(r);
    });
    const result = await cli(['consume', 'orders', '--group', 'billing', '--details'], api.fetch);
    expect(result.code).toBe(EXIT_OK);
    // The two partitions are read side by side: each in order, interleaved in any way.
    expect(result.stdout.trim().split('\n').sort()).toEqual([
      'Partition:0\tOffset:1\tnull\tv0.1',
      'Partition:0\tOffset:2\tk2\tv0.2',
      'Partition:1\tOffset:5\tnull\tv1.5',
      'Partition:1\tOffset:6\tk6\tv1.6',
    ]);

    const beats = api.requests.filter((r) => r.path.endsWith('/heartbeat')).map((r) => r.body);
    // The SDK's GroupMember speaks the protocol: every field of API.md's heartbeat, nulls included.
    expect(beats[0]).toEqual({
      memberId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      memberEpoch: 0,
      instanceId: null,
      ownedPartitions: [],
      subscribedTopics: ['orders'],
      rebalanceTimeoutMs: 60000,
      serverAssignor: null,
    });
    // Reconciled at once: the next heartbeat reports what it now owns, under the new epoch.
    expect(beats[1]).toEqual({
      memberId: beats[0].memberId,
      memberEpoch: 4,
      instanceId: null,
      ownedPartitions: [{ topic: 'orders', partitions: [0, 1] }],
      subscribedTopics: null,
      rebalanceTimeoutMs: 60000,
      serverAssignor: null,
    });
    expect(beats.at(-1)).toEqual({ memberId: beats[0].memberId, memberEpoch: -1, instanceId: null });

    // Partition 1 had no committed offset: it started at auto.offset.reset's default, Kafka's latest.
    expect(api.requests.find((r) => r.path === '/v1/topics/orders/partitions/1/offsets')?.query).toEqual({
      at: 'latest',
    });
    const commits = api.requests.filter(
      (r) => r.method === 'POST' && r.path === '/v1/groups/billing/offsets',
    );
    expect(commits.map((c) => c.body)).toEqual([
      {
        memberId: beats[0].memberId,
        memberEpoch: 4,
        offsets: [
          { topic: 'orders', partition: 0, offset: 3, metadata: '' },
          { topic: 'orders', partition: 1, offset: 7, metadata: '' },
        ],
      },
    ]);
    const leave = api.requests.findIndex((r) => r.body?.memberEpoch === -1);
    expect(leave).toBeGreaterThan(api.requests.indexOf(commits[0]!));
    expect(result.stderr).toContain('owns partitions 0-1 of orders');
    expect(result.stderr).toContain('Committed offsets of orders partitions 0-1.');
    expect(result.stderr).toContain('left group billing.');
  });
});

describe('groups', () => {
  it('describes members and lag, naming the member that owns each partition', async () => {
    const api = fakeApi(() => [
      200,
      {
        groupId: 'billing',
        state: 'STABLE',
        groupEpoch: 7,
        assignor: 'uniform',
        members: [
          {
            memberId: 'm-1',
            instanceId: null,
            memberEpoch: 7,
            subscribedTopics: ['orders'],
            assignment: { topicPartitions: [{ topic: 'orders', partitions: [0, 1, 2] }] },
          },
        ],
        offsets: [
          { topic: 'orders', partition: 1, committedOffset: 10, highWatermark: 250, lag: 240 },
          { topic: 'orders', partition: 0, committedOffset: 100, highWatermark: 100, lag: 0 },
          { topic: 'old', partition: 0, committedOffset: 5, highWatermark: null, lag: null },
        ],
      },
    ]);
    const result = await cli(['groups', 'describe', 'billing'], api.fetch);
    expect(result.stdout).toBe(
      [
        'Group: billing  State: STABLE  GroupEpoch: 7  Assignor: uniform',
        '',
        'MEMBER ID  INSTANCE ID  EPOCH  TOPICS  ASSIGNMENT',
        'm-1        -                7  orders  orders:0-2',
        '',
        'TOPIC   PARTITION  COMMITTED  HIGH WATERMARK  LAG  MEMBER',
        'old             0          5               -    -  -',
        'orders          0        100             100    0  m-1',
        'orders          1         10             250  240  m-1',
        'Total lag: 240',
        '',
      ].join('\n'),
    );
  });

  /** A group with committed offsets 5 and 7 on orders (2 partitions, log 2..50 and 0..9). */
  const resettable = () =>
    fakeApi((r) => {
      if (r.method === 'GET' && r.path === '/v1/groups/billing/offsets')
        return [
          200,
          {
            offsets: [
              { topic: 'orders', partition: 0, offset: 5, metadata: '' },
              { topic: 'orders', partition: 1, offset: 7, metadata: '' },
            ],
          },
        ];
      if (r.method === 'GET' && r.path === '/v1/topics/orders')
        return [
          200,
          {
            name: 'orders',
            topicId: 't',
            replicationFactor: 1,
            configs: {},
            partitions: [
              {
                partition: 0,
                leader: 's0',
                leaderEpoch: 0,
                replicas: ['s0'],
                isr: ['s0'],
                logStartOffset: 2,
                highWatermark: 50,
              },
              {
                partition: 1,
                leader: 's0',
                leaderEpoch: 0,
                replicas: ['s0'],
                isr: ['s0'],
                logStartOffset: 0,
                highWatermark: 9,
              },
            ],
          },
        ];
      if (r.path === '/v1/groups/billing/offsets/reset')
        return [
          200,
          {
            offsets: [0, 1].map((partition) => ({
              topic: 'orders',
              partition,
              offset: r.body.to.offset,
              metadata: '',
            })),
          },
        ];
      if (r.method === 'POST' && r.path === '/v1/groups/billing/offsets')
        return [
          200,
          {
            results: r.body.offsets.map((o: { partition: number }) => ({
              topic: 'orders',
              partition: o.partition,
            })),
          },
        ];
      return [404, envelope('NOT_FOUND', r.path)];
    });

  it('plans a reset without changing anything unless --execute is given (Kafka: a dry run)', async () => {
    const api = resettable();
    const dry = await cli(
      ['groups', 'reset-offsets', 'billing', '--topic', 'orders', '--to-offset', '42'],
      api.fetch,
    );
    expect(dry.code).toBe(EXIT_OK);
    expect(api.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /v1/groups/billing/offsets',
      'GET /v1/topics/orders',
    ]);
    // Partition 1's log ends at 9: the offset is clamped, as the server does.
    expect(dry.stdout).toBe(
      'Would reset 2 partitions for group billing:\n' +
        'TOPIC   PARTITION  CURRENT OFFSET  NEW OFFSET\n' +
        'orders          0               5          42\n' +
        'orders          1               7           9\n',
    );
    expect(dry.stderr).toBe('Dry run: nothing changed. Add --execute to apply.\n');

    const run = await cli(
      ['groups', 'reset-offsets', 'billing', '--topic', 'orders', '--to', 'offset:42', '--execute'],
      api.fetch,
    );
    expect(run.code).toBe(EXIT_OK);
    expect(api.requests.at(-1)).toMatchObject({
      method: 'POST',
      path: '/v1/groups/billing/offsets/reset',
      body: { topic: 'orders', to: { offset: 42 } },
    });
    expect(run.stdout).toContain('Reset 2 partitions for group billing:');
  });

  it('shifts every topic of the group by N with --all-topics --shift-by, committed as a simple consumer', async () => {
    const api = resettable();
    const result = await cli(
      ['groups', 'reset-offsets', 'billing', '--all-topics', '--shift-by', '-6', '--execute'],
      api.fetch,
    );
    expect(result.code).toBe(EXIT_OK);
    // 5 - 6 clamps to the log start 2; 7 - 6 = 1.
    expect(api.requests.at(-1)).toMatchObject({
      method: 'POST',
      path: '/v1/groups/billing/offsets',
      body: {
        offsets: [
          { topic: 'orders', partition: 0, offset: 2 },
          { topic: 'orders', partition: 1, offset: 1 },
        ],
      },
    });
    expect(api.requests.at(-1)?.body.memberId).toBeUndefined();
    const both = await cli(
      ['groups', 'reset-offsets', 'billing', '--topic', 'orders', '--to-earliest', '--shift-by', '1'],
      api.fetch,
    );
    expect(both.code).toBe(EXIT_USAGE);
    expect(both.stderr).toContain('give exactly one of --to');
    const none = await cli(['groups', 'reset-offsets', 'billing', '--to-latest'], api.fetch);
    expect(none.code).toBe(EXIT_USAGE);
    expect(none.stderr).toContain('give --topic T (repeatable) or --all-topics');
  });

  it('explains why a group with members cannot be deleted', async () => {
    const api = fakeApi(() => [409, envelope('NON_EMPTY_GROUP', 'group billing still has members')]);
    const result = await cli(['groups', 'delete', 'billing'], api.fetch);
    expect(result.code).toBe(EXIT_API_ERROR);
    expect(result.stderr).toContain('hint: the group still has members: stop its consumers');
  });

  it("deletes offsets of T or T:P,P and prints Kafka's status of every asked partition", async () => {
    const subscribed = {
      code: 'GROUP_SUBSCRIBED_TO_TOPIC',
      message: 'member m1 of group billing subscribes to busy',
      retriable: false,
    };
    const api = fakeApi((r) =>
      r.query['topic'] === 'busy'
        ? [200, { results: [0, 1].map((partition) => ({ topic: 'busy', partition, error: subscribed })) }]
        : [
            200,
            {
              results: [
                { topic: 'orders', partition: 0 },
                { topic: 'orders', partition: 1 },
              ],
            },
          ],
    );
    const some = await cli(['groups', 'delete-offsets', 'billing', '--topic', 'orders:0,1,0'], api.fetch);
    expect(some.code).toBe(EXIT_OK);
    expect(api.requests.map((r) => [r.method, r.path, r.query])).toEqual([
      ['DELETE', '/v1/groups/billing/offsets', { topic: 'orders', partitions: '0,1' }],
    ]);
    expect(some.stdout).toBe(
      'TOPIC   PARTITION  STATUS\n' +
        'orders          0  Successful\n' +
        'orders          1  Successful\n' +
        'Deleted the committed offsets of 2 partitions of orders for group billing.\n',
    );
    await cli(['groups', 'delete-offsets', 'billing', '--topic', 'orders'], api.fetch);
    expect(api.requests.at(-1)?.query).toEqual({ topic: 'orders' });
    const refused = await cli(['groups', 'delete-offsets', 'billing', '--topic', 'busy'], api.fetch);
    expect(refused.code).toBe(EXIT_API_ERROR);
    expect(refused.stdout).toBe(
      'TOPIC  PARTITION  STATUS\n' +
        'busy           0  Error: GROUP_SUBSCRIBED_TO_TOPIC\n' +
        'busy           1  Error: GROUP_SUBSCRIBED_TO_TOPIC\n' +
        'Deleted the committed offsets of 0 partitions of busy for group billing; 2 partitions refused.\n',
    );
    expect(refused.stderr).toContain(
      'GROUP_SUBSCRIBED_TO_TOPIC: member m1 of group billing subscribes to busy',
    );
    for (const argv of [['--topic', 'orders:'], ['--topic', 'orders:x'], []]) {
      const bad = await cli(['groups', 'delete-offsets', 'billing', ...argv], api.fetch);
      expect(bad.code).toBe(EXIT_USAGE);
    }
    expect(api.requests).toHaveLength(3);
  });
});

describe('connect: files it reads', () => {
  const withFile = async (content: string, use: (file: string) => Promise<void>): Promise<void> => {
    const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = await mkdtemp(join(tmpdir(), 'sluice-cli-'));
    try {
      const file = join(dir, 'input.json');
      await writeFile(file, content);
      await use(file);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
  const info = { name: 'archive', config: {}, tasks: [], type: 'sink' };

  it('sends a --file config as strings, numbers and booleans as their text (as Connect reads them)', async () => {
    const api = fakeApi(() => [201, info]);
    await withFile(
      '{"connector.class":"S3SinkConnector","tasks.max":2,"errors.tolerance.all":true}',
      async (f) => {
        const result = await cli(
          ['connect', 'create', 'archive', '--file', f, '--config', 'topics=orders'],
          api.fetch,
        );
        expect(result.code).toBe(EXIT_OK);
      },
    );
    expect(api.requests[0]?.body).toEqual({
      name: 'archive',
      config: {
        'connector.class': 'S3SinkConnector',
        'tasks.max': '2',
        'errors.tolerance.all': 'true',
        topics: 'orders',
      },
    });
  });

  it('refuses a --file that is not an object of settings, sending nothing', async () => {
    const api = fakeApi(() => [201, info]);
    for (const [content, says] of [
      ['["topics","orders"]', 'expected a JSON object of settings'],
      ['{"topics":{"nested":1}}', 'setting "topics" must be a string'],
      ['{"__proto__":{"x":"y"}}', 'setting "__proto__" must be a string'],
      ['{"topics":null}', 'setting "topics" must be a string'],
      ['{"topics":', 'JSON'],
    ] as const) {
      await withFile(content, async (f) => {
        const result = await cli(['connect', 'create', 'archive', '--file', f], api.fetch);
        expect(result.code, content).toBe(EXIT_USAGE);
        expect(result.stderr, content).toContain(`--file ${f}: `);
        expect(result.stderr, content).toContain(says);
      });
    }
    expect(api.requests).toEqual([]);
  });

  it('sends an --alter file’s offsets as given, and refuses one of another shape', async () => {
    const api = fakeApi(() => [200, { message: 'altered' }]);
    const offsets = [
      { partition: { kafka_topic: 'orders', kafka_partition: 0 }, offset: { kafka_offset: 5 } },
      { partition: { table: 'items', nested: { a: [1, 'x', null] } }, offset: null },
    ];
    await withFile(JSON.stringify({ offsets }), async (f) => {
      const result = await cli(['connect', 'offsets', 'archive', '--alter', f], api.fetch);
      expect(result.code).toBe(EXIT_OK);
      expect(result.stdout).toBe('Offsets of archive altered.\n');
    });
    expect(api.requests.map((r) => [r.method, r.path, r.body])).toEqual([
      ['PATCH', '/v1/connect/connectors/archive/offsets', { offsets }],
    ]);
    for (const content of [
      '{"offset":[]}',
      '{"offsets":[{"partition":[1],"offset":null}]}',
      '{"offsets":[{"partition":{"a":1}}]}',
      '{"offsets":[{"partition":{"a":1},"offset":"5"}]}',
    ]) {
      await withFile(content, async (f) => {
        const result = await cli(['connect', 'offsets', 'archive', '--alter', f], api.fetch);
        expect(result.code, content).toBe(EXIT_USAGE);
        expect(result.stderr, content).toContain(`--alter ${f}: `);
      });
    }
    expect(api.requests).toHaveLength(1);
  });
});

describe('every command through the SDK client', () => {
  it('retries a create after an answer that says nothing was created, not after one that may have', async () => {
    let calls = 0;
    const throttledOnce = fakeApi(() =>
      ++calls === 1
        ? [429, envelope('THROTTLING_QUOTA_EXCEEDED', 'slow down', true)]
        : [201, { ...orders, partitions: [partition(0, 0, 0)] }],
    );
    const created = await cli(['topics', 'create', 'orders'], throttledOnce.fetch);
    expect(created.code).toBe(EXIT_OK);
    expect(throttledOnce.requests.map((r) => r.method)).toEqual(['POST', 'POST']);
    for (const argv of [
      ['topics', 'delete', 'orders'],
      ['topics', 'alter', 'orders', '--partitions', '4'],
      ['groups', 'delete', 'billing'],
    ]) {
      // Reads (alter describes the topic first) answer; the write finds a store down.
      const down = fakeApi((r) =>
        r.method === 'GET' ? [200, orders] : [503, envelope('NOT_ENOUGH_REPLICAS', 'a store is down', true)],
      );
      const result = await cli(argv, down.fetch);
      expect(result.code, argv.join(' ')).toBe(EXIT_API_ERROR);
      expect(
        down.requests.filter((r) => r.method !== 'GET'),
        argv.join(' '),
      ).toHaveLength(1);
    }
  });

  it('retries the idempotent commit of a reset by --shift-by', async () => {
    let commits = 0;
    const api = fakeApi((r) => {
      if (r.path === '/v1/groups/billing/offsets' && r.method === 'GET')
        return [200, { offsets: [{ topic: 'orders', partition: 0, offset: 5, metadata: '' }] }];
      if (r.path === '/v1/topics/orders') return [200, { ...orders, partitions: [partition(0, 0, 10)] }];
      if (r.method === 'POST' && ++commits === 1)
        return [503, envelope('COORDINATOR_NOT_AVAILABLE', 'moving', true)];
      return [200, { results: [{ topic: 'orders', partition: 0 }] }];
    });
    const result = await cli(
      ['groups', 'reset-offsets', 'billing', '--topic', 'orders', '--shift-by', '2', '--execute'],
      api.fetch,
    );
    expect(result.code, result.stderr).toBe(EXIT_OK);
    const posts = api.requests.filter((r) => r.method === 'POST');
    expect(posts).toHaveLength(2);
    expect(posts[1]?.body).toEqual({ offsets: [{ topic: 'orders', partition: 0, offset: 7 }] });
  });
});
