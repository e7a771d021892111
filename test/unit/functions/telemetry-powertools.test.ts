/**
 * functions/telemetry.ts: Powertools' EMF documents and log records for each invocation scope —
 * one document per distinct dimension values, counters summed, timings kept (at most 99 values a
 * document), concurrent scopes kept apart, and nothing left unwritten when the invocation throws.
 */
import { describe, expect, it } from 'vitest';
import { PowertoolsTelemetry } from '../../../functions/telemetry.js';

type Emf = Record<string, unknown> & {
  _aws: {
    CloudWatchMetrics: {
      Namespace: string;
      Dimensions: string[][];
      Metrics: { Name: string; Unit: string }[];
    }[];
  };
};

const recorder = () => {
  const logs: Record<string, unknown>[] = [];
  const docs: Emf[] = [];
  const telemetry = new PowertoolsTelemetry({
    sink: { log: (r) => logs.push(r), emf: (line) => docs.push(JSON.parse(line) as Emf) },
  });
  return { telemetry, logs, docs };
};

describe('PowertoolsTelemetry', () => {
  it('writes one EMF document per dimension values at the end of the scope, counters summed', async () => {
    const { telemetry, docs } = recorder();
    await telemetry.run({ function: 'produce', requestId: 'r1' }, async () => {
      telemetry.metric('MessagesInPerSec', 2, { topic: 'a' });
      telemetry.metric('MessagesInPerSec', 3, { topic: 'a' });
      telemetry.metric('BytesInPerSec', 100, { topic: 'a' });
      telemetry.metric('MessagesInPerSec', 7, { topic: 'b' });
      telemetry.metric('RequestLatencyMs', 4, { API: 'Produce' });
      telemetry.metric('RequestLatencyMs', 6, { API: 'Produce' });
      expect(docs).toEqual([]);
    });
    expect(docs).toHaveLength(3);
    const [a, b, latency] = docs;
    expect(a!._aws.CloudWatchMetrics[0]).toEqual({
      Namespace: 'Sluice',
      Dimensions: [['service', 'topic']],
      Metrics: [
        { Name: 'MessagesInPerSec', Unit: 'Count' },
        { Name: 'BytesInPerSec', Unit: 'Bytes' },
      ],
    });
    expect(a).toMatchObject({ service: 'sluice', topic: 'a', MessagesInPerSec: 5, BytesInPerSec: 100 });
    expect(b).toMatchObject({ topic: 'b', MessagesInPerSec: 7 });
    // Timings keep every value: CloudWatch's percentiles need them.
    expect(latency).toMatchObject({ API: 'Produce', RequestLatencyMs: [4, 6] });
    expect(latency!._aws.CloudWatchMetrics[0]!.Metrics).toEqual([
      { Name: 'RequestLatencyMs', Unit: 'Milliseconds' },
    ]);
  });

  it('writes cluster-wide metrics with the service dimension alone, and numbers as strings', async () => {
    const { telemetry, docs } = recorder();
    await telemetry.run({}, async () => {
      telemetry.metric('UnderReplicatedPartitions', 2, {});
      telemetry.metric('records-lag-max', 9, { group: 'g', topic: 't', partition: 3 });
    });
    expect(docs[0]!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service']]);
    expect(docs[0]!['UnderReplicatedPartitions']).toBe(2);
    expect(docs[1]).toMatchObject({ group: 'g', topic: 't', partition: '3', 'records-lag-max': 9 });
    expect(docs[1]!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([
      ['service', 'group', 'topic', 'partition'],
    ]);
  });

  it('splits past 99 values of a timing, every document keeping its dimensions', async () => {
    const { telemetry, docs } = recorder();
    await telemetry.run({}, async () => {
      for (let i = 0; i < 250; i++) telemetry.metric('RequestLatencyMs', i, { API: 'Fetch' });
    });
    expect(docs.map((d) => (d['RequestLatencyMs'] as number[]).length)).toEqual([99, 99, 52]);
    for (const d of docs) expect(d).toMatchObject({ API: 'Fetch' });
    expect(docs.flatMap((d) => d['RequestLatencyMs'] as number[])).toEqual(
      Array.from({ length: 250 }, (_, i) => i),
    );
  });

  it('keeps concurrent scopes apart: each log line carries its own request, each document its own values', async () => {
    const { telemetry, logs, docs } = recorder();
    let open = () => {};
    const gate = { promise: new Promise<void>((resolve) => (open = resolve)), resolve: () => open() };
    const one = telemetry.run({ function: 'produce', requestId: 'r1' }, async () => {
      telemetry.annotate({ API: 'Produce', topic: 'a', partition: 0 });
      await gate.promise;
      telemetry.log('error', 'request failed', { code: 'X' });
      telemetry.metric('MessagesInPerSec', 1, { topic: 'a' });
    });
    const two = telemetry.run({ function: 'fetch', requestId: 'r2' }, async () => {
      telemetry.annotate({ API: 'Fetch', topic: 'b' });
      telemetry.metric('MessagesInPerSec', 1, { topic: 'a' });
      telemetry.log('warn', 'slow');
      gate.resolve();
    });
    await Promise.all([one, two]);
    expect(
      logs.map((l) => [l['message'], l['requestId'], l['function'], l['API'], l['topic'], l['partition']]),
    ).toEqual([
      ['slow', 'r2', 'fetch', 'Fetch', 'b', undefined],
      ['request failed', 'r1', 'produce', 'Produce', 'a', 0],
    ]);
    expect(logs[1]).toMatchObject({ level: 'ERROR', service: 'sluice', code: 'X' });
    // Two scopes, two documents, each with its own point (not one summed document).
    expect(docs.map((d) => d['MessagesInPerSec'])).toEqual([1, 1]);
  });

  it('writes the points of an invocation that threw', async () => {
    const { telemetry, docs } = recorder();
    await expect(
      telemetry.run({}, async () => {
        telemetry.metric('ErrorsPerSec', 1, { API: 'Produce', error: 'UNKNOWN_SERVER_ERROR' });
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(docs).toHaveLength(1);
    expect(docs[0]).toMatchObject({ API: 'Produce', error: 'UNKNOWN_SERVER_ERROR', ErrorsPerSec: 1 });
  });

  it('writes a point outside any scope at once, and logs below the level are dropped', () => {
    const { telemetry, docs, logs } = recorder();
    telemetry.metric('IsrShrinksPerSec', 1, {});
    expect(docs).toHaveLength(1);
    telemetry.log('debug', 'hidden');
    telemetry.log('info', 'shown');
    expect(logs.map((l) => l['message'])).toEqual(['shown']);
  });
});
