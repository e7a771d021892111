/**
 * `sluice top` against the local stack over real HTTP (in-process through `run(argv, io)`), while a
 * producer writes: the produce rate and bytes/s are above zero, the group's lag is shown per group and
 * per partition, and every partition's leader, ISR and state are listed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_OK, run } from '../../cli/main.js';
import type { TestStack } from './stack.js';
import { startTestStack } from './stack.js';

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack();
  expect((await t.call('POST', '/v1/topics', { name: 'top-orders', partitions: 2 })).status).toBe(201);
  const produced = await t.call('POST', '/v1/topics/top-orders/records', {
    records: Array.from({ length: 20 }, (_, i) => ({ value: `seed-${i}`, partition: i % 2 })),
  });
  expect(produced.status).toBe(200);
  // A group that read 4 records of partition 0 and none of partition 1: lag 6 and 10.
  const committed = await t.call('POST', '/v1/groups/top-billing/offsets', {
    offsets: [
      { topic: 'top-orders', partition: 0, offset: 4, metadata: '' },
      { topic: 'top-orders', partition: 1, offset: 0, metadata: '' },
    ],
  });
  expect(committed.status).toBe(200);
}, 60_000);

afterAll(async () => {
  await t?.stack.stop();
});

const top = async (argv: string[]) => {
  let stdout = '';
  let stderr = '';
  const code = await run(['top', ...argv], {
    stdout: { write: (text) => void (stdout += text) },
    stderr: { write: (text) => void (stderr += text) },
    env: { SLUICE_URL: t.url },
  });
  return { code, stdout, stderr };
};

/** Produces 10 records of 200 bytes (5 per partition) every 100 ms until stopped. */
const producing = () => {
  let running = true;
  let sent = 0;
  const loop = (async () => {
    while (running) {
      const r = await t.call('POST', '/v1/topics/top-orders/records', {
        records: Array.from({ length: 10 }, (_, i) => ({ value: 'x'.repeat(200), partition: i % 2 })),
      });
      expect(r.status).toBe(200);
      sent += 10;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return async () => {
    running = false;
    await loop;
    return sent;
  };
};

describe('sluice top', () => {
  it('--once while producing: rates above zero, lag per group and partition, ISR per partition', async () => {
    const stop = producing();
    const result = await top(['--once', '--interval', '1.5', '--partitions', '--topic', 'top-orders']);
    const sent = await stop();
    expect(sent).toBeGreaterThan(0);
    expect(result).toMatchObject({ code: EXIT_OK, stderr: '' });
    const lines = result.stdout.split('\n');
    const cells = (prefix: string) =>
      lines
        .find((l) => l.startsWith(prefix))!
        .trim()
        .split(/\s{2,}/);
    // TOPIC PARTITIONS IN RECORDS/S IN BYTES/S SIZE UNDER-REPLICATED UNDER-MIN-ISR OFFLINE
    const orders = cells('top-orders ');
    expect(orders[1]).toBe('2');
    expect(Number(orders[2]!.replace(/,/g, ''))).toBeGreaterThan(0);
    expect(orders[3]).toMatch(/^\d+(\.\d)? (B|KiB|MiB)\/s$/);
    expect(orders[3]!.startsWith('0 B')).toBe(false);
    expect(orders.slice(5)).toEqual(['0', '0', '0']);
    // GROUP STATE MEMBERS LAG MAX LAG …: the lag grew with what was produced since the commit.
    const group = cells('top-billing ');
    expect(group.slice(0, 3)).toEqual(['top-billing', 'EMPTY', '0']);
    expect(Number(group[3])).toBeGreaterThanOrEqual(16);
    // Every partition with its leader, ISR and state (one store here: s0).
    const cluster = (await t.call('GET', '/v1/cluster')).json as { stores: { id: string }[] };
    const store = cluster.stores[0]!.id;
    const partitionRows = lines.filter((l) => /^top-orders\s+\d\s+in-sync/.test(l));
    expect(partitionRows).toHaveLength(2);
    for (const row of partitionRows) expect(row.split(/\s+/).slice(3, 7)).toEqual([store, store, store, '-']);
    // Lag per partition: partition 1 was committed at 0, so its lag is its high watermark.
    const lag1 = lines.find((l) => /^top-billing\s+top-orders\s+1\s/.test(l))!.split(/\s+/);
    expect(lag1[3]).toBe('0');
    expect(Number(lag1[5])).toBe(Number(lag1[4]));
  }, 60_000);

  it('--json: one view per refresh with bytes/s from the stored bytes', async () => {
    const stop = producing();
    const result = await top(['--json', '--iterations', '2', '--interval', '1']);
    await stop();
    expect(result.code).toBe(EXIT_OK);
    const views = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(views).toHaveLength(2);
    const orders = views[1].topics.find((x: { name: string }) => x.name === 'top-orders');
    expect(orders.recordsInPerSec).toBeGreaterThan(0);
    expect(orders.bytesInPerSec).toBeGreaterThan(0);
    // Bytes per record in the right range: 200-byte values in batches of 5 records.
    expect(orders.bytesInPerSec / orders.recordsInPerSec).toBeGreaterThan(200);
    expect(orders.bytesInPerSec / orders.recordsInPerSec).toBeLessThan(400);
    expect(views[1].groups.map((g: { groupId: string }) => g.groupId)).toContain('top-billing');
  }, 60_000);
});
