/**
 * `sluice consume` in-process against the real routes (memory storage), counting the requests it
 * sends: every poll is one POST /v1/fetch over all the partitions it reads (never a GET per
 * partition), following or not, alone or in a group; and --isolation-level read_committed (Kafka's
 * console-consumer flag) leaves out an aborted transaction's records and stops at an open one.
 */
import { describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_USAGE, run } from '../../../cli/main.js';
import { SluiceClient } from '../../../sdk/client.js';
import type { FetchLike } from '../../../sdk/transport.js';
import type { Exchange } from '../../support/router-fetch.js';
import { routerFetch } from '../../support/router-fetch.js';
import type { TestClock } from '../../support/log-support.js';
import { RealTimeClock, memorySluice } from '../../support/log-support.js';

const setup = async (partitions: number, clock?: TestClock) => {
  const { sluice, http } = memorySluice({}, clock ? { clock } : {});
  expect((await http('POST', '/v1/topics', { name: 'orders', partitions })).status).toBe(201);
  const exchanges: Exchange[] = [];
  const requestBodies: unknown[] = [];
  const inner = routerFetch(sluice.router(), (e) => exchanges.push(e));
  // As a socket's fetch does, a cancelled request ends at once (the router's long poll runs on unheard).
  const fetch: FetchLike = (url, init) => {
    if (new URL(url).pathname === '/v1/fetch') requestBodies.push(JSON.parse(String(init.body)));
    const signal = init.signal;
    if (!signal) return inner(url, init);
    return new Promise((resolve, reject) => {
      const cancel = () => reject(new DOMException('aborted', 'AbortError'));
      if (signal.aborted) return cancel();
      signal.addEventListener('abort', cancel, { once: true });
      inner(url, init).then(resolve, reject);
    });
  };
  const client = new SluiceClient({ url: 'http://sluice.test', fetch });
  const producer = client.producer();
  const produce = (partition: number, ...values: string[]) =>
    producer.sendBatch(
      'orders',
      partition,
      values.map((value) => ({ value })),
    );
  const sluiceCli = async (...argv: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = await run(['--url', 'http://sluice.test', ...argv], {
      stdout: { write: (t) => void (stdout += t) },
      stderr: { write: (t) => void (stderr += t) },
      env: {},
      fetch,
    });
    return { code, stdout, stderr };
  };
  const polls = () => requestBodies as { partitions: { partition: number }[]; isolationLevel?: string }[];
  const partitionReads = () => exchanges.filter((e) => e.path.endsWith('/records'));
  return { client, produce, sluiceCli, polls, partitionReads, exchanges };
};

describe('consume: one fetch per poll over every partition', () => {
  it('reads four partitions to their ends in one POST /v1/fetch', async () => {
    const { produce, sluiceCli, polls, partitionReads } = await setup(4);
    for (let p = 0; p < 4; p++) await produce(p, `a${p}`, `b${p}`);
    const { code, stdout } = await sluiceCli('consume', 'orders', '--from-beginning');
    expect(code).toBe(EXIT_OK);
    expect(stdout).toBe('a0\nb0\na1\nb1\na2\nb2\na3\nb3\n');
    expect(polls()).toHaveLength(1);
    expect(polls()[0]!.partitions.map((p) => p.partition)).toEqual([0, 1, 2, 3]);
    expect(partitionReads()).toHaveLength(0);
  });

  it('following, every long poll covers all four partitions and wakes for a record on any of them', async () => {
    const { produce, sluiceCli, polls, partitionReads } = await setup(4, new RealTimeClock());
    await produce(1, 'early');
    const following = sluiceCli('consume', 'orders', '--from-beginning', '--follow', '--timeout-ms', '1500');
    await new Promise((r) => setTimeout(r, 400));
    await produce(3, 'late');
    const { code, stdout, stderr } = await following;
    expect(code).toBe(EXIT_OK);
    expect(stdout).toBe('early\nlate\n');
    expect(stderr).toContain('Following orders partitions 0-3');
    // One poll answered with `early`, one woke for `late`, one waited until --timeout-ms ended it.
    expect(polls().length).toBeGreaterThanOrEqual(2);
    expect(polls().length).toBeLessThanOrEqual(4);
    // Each poll names all four (starting one further along each time, as Kafka's consumer rotates).
    for (const poll of polls()) expect(poll.partitions.map((p) => p.partition).sort()).toEqual([0, 1, 2, 3]);
    expect(partitionReads()).toHaveLength(0);
  });

  it('reads a topic of more partitions than one fetch may name in one poll per thousand', async () => {
    const { produce, sluiceCli, polls, partitionReads } = await setup(1_200);
    await produce(3, 'near');
    await produce(1_100, 'far');
    const { code, stdout } = await sluiceCli('consume', 'orders', '--from-beginning');
    expect(code).toBe(EXIT_OK);
    expect(stdout.split('\n').sort()).toEqual(['', 'far', 'near']);
    expect(
      polls()
        .map((p) => p.partitions.length)
        .sort(),
    ).toEqual([1_000, 200]);
    expect(partitionReads()).toHaveLength(0);
  });

  it('reads every partition to its end when the first ones fill the answer (4 MiB over 1 MiB each)', async () => {
    const { produce, sluiceCli, polls } = await setup(6);
    const big = (p: number, i: number) => `${p}.${i}.${'x'.repeat(100_000)}`;
    for (let p = 0; p < 6; p++) await produce(p, ...Array.from({ length: 12 }, (_, i) => big(p, i)));
    const { code, stdout } = await sluiceCli('consume', 'orders', '--from-beginning');
    expect(code).toBe(EXIT_OK);
    const printed = stdout.trim().split('\n');
    expect(printed).toHaveLength(72);
    for (let p = 0; p < 6; p++)
      expect(printed.filter((l) => l.startsWith(`${p}.`)).map((l) => l.split('.')[1])).toEqual(
        Array.from({ length: 12 }, (_, i) => String(i)),
      );
    // The first poll's budget went to the first four partitions; later polls reached the rest.
    expect(polls().length).toBeGreaterThan(1);
  });

  it('as a group member, polls its assigned partitions in one fetch', async () => {
    const { produce, sluiceCli, polls, partitionReads } = await setup(3);
    for (let p = 0; p < 3; p++) await produce(p, `v${p}`);
    const { code, stdout } = await sluiceCli('consume', 'orders', '--group', 'billing', '--from-beginning');
    expect(code).toBe(EXIT_OK);
    expect(stdout.split('\n').sort()).toEqual(['', 'v0', 'v1', 'v2']);
    expect(polls().length).toBeGreaterThanOrEqual(1);
    expect(
      polls()[0]!
        .partitions.map((p) => p.partition)
        .sort(),
    ).toEqual([0, 1, 2]);
    expect(partitionReads()).toHaveLength(0);
  });
});

describe('consume --isolation-level', () => {
  /** Partition 0: an aborted transaction then a plain record; partition 1: a committed transaction. */
  const transactional = async () => {
    const env = await setup(2);
    const aborted = env.client.producer({ transactionalId: 'tx-a' });
    await aborted.initTransactions();
    aborted.beginTransaction();
    await aborted.sendBatch('orders', 0, [{ value: 'gone' }]);
    await aborted.abortTransaction();
    await env.produce(0, 'plain');
    const committed = env.client.producer({ transactionalId: 'tx-c' });
    await committed.initTransactions();
    committed.beginTransaction();
    await committed.sendBatch('orders', 1, [{ value: 'kept' }]);
    await committed.commitTransaction();
    return env;
  };

  it("read_committed leaves out an aborted transaction's records; read_uncommitted (the default) shows them", async () => {
    const { sluiceCli, polls } = await transactional();
    const committed = await sluiceCli(
      'consume',
      'orders',
      '--from-beginning',
      '--isolation-level',
      'read_committed',
    );
    expect(committed.code).toBe(EXIT_OK);
    expect(committed.stdout).toBe('plain\nkept\n');
    expect(polls().map((p) => p.isolationLevel)).toEqual(['read_committed']);
    const uncommitted = await sluiceCli('consume', 'orders', '--from-beginning');
    expect(uncommitted.stdout).toBe('gone\nplain\nkept\n');
    expect(polls()[1]!.isolationLevel).toBeUndefined();
    // kafka-console-consumer's other spelling.
    const property = await sluiceCli(
      'consume',
      'orders',
      '--from-beginning',
      '--consumer-property',
      'isolation.level=read_committed',
    );
    expect(property.stdout).toBe('plain\nkept\n');
  });

  it('read_committed stops at an open transaction (the last stable offset) and ends there', async () => {
    const { client, produce, sluiceCli } = await transactional();
    const open = client.producer({ transactionalId: 'tx-open' });
    await open.initTransactions();
    open.beginTransaction();
    await open.sendBatch('orders', 1, [{ value: 'pending' }]);
    await produce(1, 'after');
    const committed = await sluiceCli(
      'consume',
      'orders',
      '--from-beginning',
      '--isolation-level',
      'read_committed',
    );
    expect(committed.code).toBe(EXIT_OK);
    expect(committed.stdout).toBe('plain\nkept\n');
    const uncommitted = await sluiceCli('consume', 'orders', '--from-beginning');
    expect(uncommitted.stdout).toBe('gone\nplain\nkept\npending\nafter\n');
  });

  it('a group member under read_committed skips the aborted records too', async () => {
    const { sluiceCli, polls } = await transactional();
    const result = await sluiceCli(
      'consume',
      'orders',
      '--group',
      'audit',
      '--from-beginning',
      '--isolation-level',
      'read_committed',
    );
    expect(result.code).toBe(EXIT_OK);
    expect(result.stdout.split('\n').sort()).toEqual(['', 'kept', 'plain']);
    expect(polls().every((p) => p.isolationLevel === 'read_committed')).toBe(true);
  });

  it('refuses an isolation level Kafka does not have', async () => {
    const { sluiceCli, polls } = await setup(1);
    const result = await sluiceCli('consume', 'orders', '--isolation-level', 'read_most');
    expect(result.code).toBe(EXIT_USAGE);
    expect(result.stderr).toContain('--isolation-level must be one of read_uncommitted, read_committed');
    expect(polls()).toHaveLength(0);
  });
});
