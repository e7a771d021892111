/** The HTTP sink task against a real node:http endpoint: batches, retries of 5xx, errant records on 4xx. */
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpSinkTask } from '../../connect/connectors/http-sink.js';
import type { SinkRecord } from '../../connect/plugin.js';

let server: Server;
let url: string;
const received: unknown[][] = [];
let failNext = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const values = JSON.parse(body) as unknown[];
      if (failNext > 0) {
        failNext -= 1;
        res.writeHead(503).end('busy');
        return;
      }
      if (values.some((v) => (v as { bad?: boolean }).bad)) {
        res.writeHead(422).end('unprocessable');
        return;
      }
      received.push(values);
      res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ingest`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const record = (offset: number, value: unknown): SinkRecord => ({
  topic: 't',
  originalTopic: 't',
  kafkaPartition: 0,
  kafkaOffset: offset,
  timestamp: 0,
  key: null,
  value,
  headers: [],
});

describe('HTTP sink', () => {
  it('POSTs batches in order, retries a 503, and reports a refused batch as errant', async () => {
    const errant: [number, string][] = [];
    const sleeps: number[] = [];
    const task = new HttpSinkTask(
      { 'http.api.url': url, 'batch.max.size': '2', 'max.retries': '3', 'retry.backoff.ms': '10' },
      {
        connector: 'h',
        task: 0,
        log: () => {},
        reportErrant: async (r, e) => void errant.push([r.kafkaOffset, (e as Error).message]),
      },
      async (ms) => void sleeps.push(ms),
    );
    failNext = 2;
    await task.put([
      record(0, { n: 0 }),
      record(1, { n: 1 }),
      record(2, { n: 2, bad: true }),
      record(3, { n: 3 }),
      record(4, { n: 4 }),
    ]);
    expect(received).toEqual([[{ n: 0 }, { n: 1 }], [{ n: 4 }]]);
    expect(sleeps).toEqual([10, 20]);
    expect(errant).toEqual([
      [2, 'HTTP 422: unprocessable'],
      [3, 'HTTP 422: unprocessable'],
    ]);
    expect(await task.flush()).toEqual([]);
  });

  it('fails after max.retries of 5xx with a retriable error', async () => {
    const task = new HttpSinkTask(
      { 'http.api.url': url, 'max.retries': '1', 'retry.backoff.ms': '1' },
      { connector: 'h', task: 0, log: () => {}, reportErrant: () => Promise.reject(new Error('unexpected')) },
      async () => {},
    );
    failNext = 5;
    await expect(task.put([record(0, { n: 9 })])).rejects.toMatchObject({
      name: 'RetriableConnectError',
      retriable: true,
    });
    failNext = 0;
  });
});
