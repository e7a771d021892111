/**
 * `sluice transactions list | describe --transactional-id X` in-process against the real router
 * (memory storage) with transactions in the states a user meets: Kafka's columns, None for a
 * transactional.id with no open transaction, the duration of an open one, and the errors.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { EXIT_API_ERROR, EXIT_OK, EXIT_USAGE, run } from '../../../cli/main.js';
import { SluiceClient } from '../../../sdk/client.js';
import type { FetchLike } from '../../../sdk/transport.js';
import { routerFetch } from '../../support/router-fetch.js';
import { memorySluice } from '../../support/log-support.js';

let fetch: FetchLike;
let startedAt: number;

beforeAll(async () => {
  const { sluice, http, clock } = memorySluice();
  expect((await http('POST', '/v1/topics', { name: 'orders', partitions: 3 })).status).toBe(201);
  fetch = routerFetch(sluice.router());
  const client = new SluiceClient({ url: 'http://sluice.test', fetch });
  const done = client.producer({ transactionalId: 'billing', transactionTimeoutMs: 30_000 });
  await done.initTransactions();
  done.beginTransaction();
  await done.sendBatch('orders', 0, [{ value: 'a' }]);
  await done.commitTransaction();
  const open = client.producer({ transactionalId: 'app-1' });
  await open.initTransactions();
  open.beginTransaction();
  startedAt = clock.now();
  await open.sendBatch('orders', 2, [{ value: 'b' }]);
  await open.sendBatch('orders', 0, [{ value: 'c' }]);
});

const sluice = async (...argv: string[]) => {
  let stdout = '';
  let stderr = '';
  const code = await run(['--url', 'http://sluice.test', ...argv], {
    stdout: { write: (t) => void (stdout += t) },
    stderr: { write: (t) => void (stderr += t) },
    env: {},
    fetch,
    now: () => startedAt + 1234,
    sleep: async () => {},
  });
  return { code, stdout, stderr };
};

describe('sluice transactions', () => {
  it("lists every transactional.id in kafka-transactions.sh list's columns", async () => {
    const { code, stdout } = await sluice('transactions', 'list');
    expect(code).toBe(EXIT_OK);
    expect(stdout).toBe(
      [
        'TransactionalId  Coordinator  ProducerId  TransactionState',
        'app-1                      0           1  Ongoing',
        'billing                    0           0  CompleteCommit',
        '',
      ].join('\n'),
    );
    const json = JSON.parse((await sluice('transactions', 'list', '--json')).stdout);
    expect(json.transactions.map((t: { transactionalId: string }) => t.transactionalId)).toEqual([
      'app-1',
      'billing',
    ]);
  });

  it('describes an open transaction with its start, duration and partitions', async () => {
    const { code, stdout } = await sluice('transactions', 'describe', '--transactional-id', 'app-1');
    expect(code).toBe(EXIT_OK);
    const [header, row] = stdout.trimEnd().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual([
      'CoordinatorId',
      'TransactionalId',
      'ProducerId',
      'ProducerEpoch',
      'TransactionState',
      'TransactionTimeoutMs',
      'CurrentTransactionStartTimeMs',
      'TransactionDurationMs',
      'TopicPartitions',
    ]);
    expect(row!.trim().split(/\s+/)).toEqual([
      '0',
      'app-1',
      '1',
      '0',
      'Ongoing',
      '60000',
      String(startedAt),
      '1234',
      'orders-2,orders-0',
    ]);
  });

  it('says None for the start and duration of a transactional.id with none open', async () => {
    const { stdout } = await sluice('transactions', 'describe', '--transactional-id', 'billing');
    expect(stdout.trimEnd().split('\n')[1]!.trim().split(/\s+/)).toEqual([
      '0',
      'billing',
      '0',
      '1',
      'CompleteCommit',
      '30000',
      'None',
      'None',
    ]);
  });

  it('needs --transactional-id, and answers an unknown one with NOT_FOUND', async () => {
    const missing = await sluice('transactions', 'describe');
    expect(missing.code).toBe(EXIT_USAGE);
    expect(missing.stderr).toContain('--transactional-id');
    const unknown = await sluice('transactions', 'describe', '--transactional-id', 'nobody');
    expect(unknown.code).toBe(EXIT_API_ERROR);
    expect(unknown.stderr).toContain('nobody');
  });
});
