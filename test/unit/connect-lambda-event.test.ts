/** The Lambda sink's reading of a function's answer: the Kafka partial batch response and error objects. */
import { describe, expect, it } from 'vitest';
import type { EventEntry } from '../../connect/connectors/lambda-sink-event.js';
import {
  batchOutcomeOf,
  eventEntryOf,
  functionFailureOf,
} from '../../connect/connectors/lambda-sink-event.js';
import type { SinkRecord } from '../../connect/plugin.js';

const record = (partition: number, offset: number): SinkRecord => ({
  topic: 'orders',
  originalTopic: 'orders',
  kafkaPartition: partition,
  kafkaOffset: offset,
  timestamp: 0,
  key: null,
  value: null,
  headers: [],
});
const batch: EventEntry[] = [record(0, 4), record(0, 5), record(1, 9), record(0, 6)].map((r) =>
  eventEntryOf(r, null, null, []),
);
const answer = (body: unknown) => batchOutcomeOf(new TextEncoder().encode(JSON.stringify(body)), batch, true);
const item = (tp: unknown, offset: unknown) => ({ itemIdentifier: { 'topic-partition': tp, offset } });

describe('batchOutcomeOf', () => {
  it('success: nothing, null, an empty list, or any other answer', () => {
    for (const body of [null, {}, { batchItemFailures: [] }, { batchItemFailures: null }, 'ok', [1], 7])
      expect(answer(body)).toEqual({ kind: 'success' });
    expect(batchOutcomeOf(new TextEncoder().encode('not json'), batch, true)).toEqual({ kind: 'success' });
  });

  it('partial: the lowest reported offset per partition', () => {
    expect(
      answer({ batchItemFailures: [item('orders-0', 6), item('orders-0', 5), item('orders-1', 9)] }),
    ).toEqual({
      kind: 'partial',
      failed: new Map([
        ['orders-0', 5],
        ['orders-1', 9],
      ]),
    });
  });

  it('a broken item or one naming a record outside the batch fails the whole batch', () => {
    const cases: [unknown, string][] = [
      [
        { batchItemFailures: [item('orders-0', 5), { itemIdentifier: null }] },
        'has an item without a topic-partition and offset',
      ],
      [{ batchItemFailures: [item('', 5)] }, 'has an item without a topic-partition and offset'],
      [{ batchItemFailures: [item('orders-0', '5')] }, 'has an item without a topic-partition and offset'],
      [{ batchItemFailures: [{ itemIdentifier: '5' }] }, 'has an item without a topic-partition and offset'],
      [{ batchItemFailures: [item('orders-0', 7)] }, 'names orders-0 offset 7, which was not in the batch'],
      [{ batchItemFailures: [item('orders-2', 4)] }, 'names orders-2 offset 4, which was not in the batch'],
      [{ batchItemFailures: 'all' }, 'has a batchItemFailures that is not a list'],
    ];
    for (const [body, why] of cases) {
      const outcome = answer(body);
      expect(outcome.kind).toBe('failed');
      if (outcome.kind !== 'failed') continue;
      expect([outcome.error.name, outcome.error.message]).toEqual([
        'InvalidBatchItemFailures',
        `the partial batch response ${why}`,
      ]);
    }
  });

  it('without ReportBatchItemFailures the answer is not read', () => {
    const body = new TextEncoder().encode(JSON.stringify({ batchItemFailures: [item('orders-0', 5)] }));
    expect(batchOutcomeOf(body, batch, false)).toEqual({ kind: 'success' });
  });
});

describe('functionFailureOf', () => {
  it("names the failure as the function's runtime reported it", () => {
    const body = {
      errorType: 'TypeError',
      errorMessage: 'x is undefined',
      trace: ['TypeError: x is undefined', '    at f'],
    };
    const failure = functionFailureOf('Unhandled', new TextEncoder().encode(JSON.stringify(body)));
    expect([failure.name, failure.message, failure.stack]).toEqual([
      'TypeError',
      'x is undefined',
      'TypeError: x is undefined\n    at f',
    ]);
  });

  it('an error body it cannot read still fails, named by the FunctionError header', () => {
    const failure = functionFailureOf('Unhandled', new TextEncoder().encode('<html>'));
    expect([failure.name, failure.message]).toEqual(['Unhandled', 'function error Unhandled']);
  });
});
