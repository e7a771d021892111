/** Connect's error handling: tolerance, retries with capped backoff, and DLQ records with Connect's headers. */
import { describe, expect, it } from 'vitest';
import { ErrorHandler, ToleranceExceeded, errorPolicyOf } from '../../../connect/worker/error-handler.js';
import { RetriableConnectError } from '../../../connect/plugin.js';
import type { Message } from '../../../sdk/index.js';
import { TestClock } from '../../support/log-support.js';

const original = {
  topic: 'orders',
  partition: 1,
  offset: 41,
  key: new TextEncoder().encode('k'),
  value: new TextEncoder().encode('{"bad":true}'),
  headers: [{ key: 'trace', value: new TextEncoder().encode('t1') }],
};

const handler = (config: Record<string, string>) => {
  const clock = new TestClock(0);
  const produced: { topic: string; messages: Message[]; key: string }[] = [];
  const logs: Record<string, unknown>[] = [];
  const errors = new ErrorHandler(errorPolicyOf(config), {
    connector: 'pg-copy',
    task: 2,
    clock,
    log: (e) => logs.push(e),
    produce: async (topic, messages, key) => void produced.push({ topic, messages, key }),
  });
  return { errors, produced, logs, clock };
};

const text = (v: unknown) => (v instanceof Uint8Array ? new TextDecoder().decode(v) : v);

describe('errors.tolerance', () => {
  it('none fails the task on the first bad record, writing nothing', async () => {
    const { errors, produced } = handler({ 'errors.deadletterqueue.topic.name': 'dlq' });
    await expect(
      errors.report('VALUE_CONVERTER', 'JsonConverter', original, new Error('bad json')),
    ).rejects.toThrow(ToleranceExceeded);
    expect(produced).toEqual([]);
  });

  it('all dead-letters the original bytes with every __connect.errors.* header, under a stable key', async () => {
    const config = {
      'errors.tolerance': 'all',
      'errors.log.enable': 'true',
      'errors.deadletterqueue.topic.name': 'dlq',
      'errors.deadletterqueue.context.headers.enable': 'true',
    };
    const { errors, produced, logs } = handler(config);
    const failure = new Error('new row violates check constraint');
    await errors.report('TASK_PUT', 'io.sluice.connect.jdbc.JdbcSinkConnector', original, failure);
    expect(produced).toHaveLength(1);
    const [{ topic, messages, key }] = produced as [(typeof produced)[number]];
    expect(topic).toBe('dlq');
    expect(key).toMatch(/^connect-dlq:[A-Za-z0-9_-]{43}$/);
    const second = handler(config);
    await second.errors.report('TASK_PUT', 'x', original, failure);
    expect(second.produced[0]!.key).toBe(key); // the same record, the same Idempotency-Key
    const message = messages[0]!;
    expect(text(message.key)).toBe('k');
    expect(text(message.value)).toBe('{"bad":true}');
    const headers = (message.headers as { key: string; value: unknown }[]).map((h) => [h.key, text(h.value)]);
    expect(headers.slice(0, 10)).toEqual([
      ['trace', 't1'],
      ['__connect.errors.topic', 'orders'],
      ['__connect.errors.partition', '1'],
      ['__connect.errors.offset', '41'],
      ['__connect.errors.connector.name', 'pg-copy'],
      ['__connect.errors.task.id', '2'],
      ['__connect.errors.stage', 'TASK_PUT'],
      ['__connect.errors.class.name', 'io.sluice.connect.jdbc.JdbcSinkConnector'],
      ['__connect.errors.exception.class.name', 'Error'],
      ['__connect.errors.exception.message', 'new row violates check constraint'],
    ]);
    expect(headers[10]![0]).toBe('__connect.errors.exception.stacktrace');
    expect(errors.skipped).toBe(1);
    expect(logs).toEqual([
      expect.objectContaining({ stage: 'TASK_PUT', offset: 41, error: failure.message }),
    ]);
  });

  it('all without a DLQ only skips; without context headers the record keeps its own', async () => {
    const { errors, produced } = handler({ 'errors.tolerance': 'all' });
    await errors.report('TRANSFORMATION', 'transforms', original, new Error('x'));
    expect(produced).toEqual([]);
    const bare = handler({ 'errors.tolerance': 'all', 'errors.deadletterqueue.topic.name': 'dlq' });
    await bare.errors.report('TRANSFORMATION', 'transforms', original, new Error('x'));
    expect((bare.produced[0]!.messages[0]!.headers as unknown[]).length).toBe(1);
  });
});

describe('errors.retry.timeout', () => {
  it('retries retriable failures with doubling backoff capped by errors.retry.delay.max.ms, then gives up', async () => {
    const { errors, clock } = handler({
      'errors.retry.timeout': '5000',
      'errors.retry.delay.max.ms': '1000',
    });
    const at: number[] = [];
    await expect(
      errors.retry(async () => {
        at.push(clock.now());
        throw new RetriableConnectError('database away');
      }),
    ).rejects.toThrow('database away');
    // 300, 600, then capped at 1000, while the next attempt still starts within 5000 ms.
    expect(at).toEqual([0, 300, 900, 1900, 2900, 3900, 4900]);
  });

  it('does not retry a non-retriable failure, nor anything with the default timeout 0', async () => {
    let calls = 0;
    const strict = handler({ 'errors.retry.timeout': '5000' });
    await expect(
      strict.errors.retry(async () => (calls++, Promise.reject(new Error('bad')))),
    ).rejects.toThrow('bad');
    const none = handler({});
    await expect(
      none.errors.retry(async () => (calls++, Promise.reject(new RetriableConnectError('x')))),
    ).rejects.toThrow();
    expect(calls).toBe(2);
    let tries = 0;
    expect(
      await strict.errors.retry(async () =>
        ++tries < 3 ? Promise.reject(new RetriableConnectError('x')) : 'ok',
      ),
    ).toBe('ok');
  });
});
