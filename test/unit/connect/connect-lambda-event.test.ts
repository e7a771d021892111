/** The Lambda sink's settings and its reading of a function's answer (partial batch response, error objects). */
import { describe, expect, it } from 'vitest';
import type { EventEntry } from '../../../connect/connectors/lambda-sink-event.js';
import {
  batchOutcomeOf,
  eventEntryOf,
  functionFailureOf,
} from '../../../connect/connectors/lambda-sink-event.js';
import type { SinkRecord } from '../../../connect/plugin.js';
import { validateConnectorConfig } from '../../../connect/connector-config.js';
import { LAMBDA_SINK } from '../../../connect/connectors/lambda-sink-plugin.js';

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

describe('AwsLambdaSinkConnector validation', () => {
  const base = {
    name: 'l',
    'connector.class': 'AwsLambdaSinkConnector',
    topics: 'orders',
    'aws.lambda.function.name': 'orders-fn',
  };
  const errors = (config: Record<string, string>) =>
    Object.fromEntries(
      validateConnectorConfig(LAMBDA_SINK, { ...base, ...config })
        .configs.filter((c) => c.value.errors.length > 0)
        .map((c) => [c.value.name, c.value.errors]),
    );

  it('takes names, qualified names and ARNs', () => {
    for (const name of [
      'orders-fn',
      'orders-fn:live',
      'orders-fn:$LATEST',
      'arn:aws:lambda:eu-west-1:123456789012:function:orders-fn:3',
    ])
      expect(errors({ 'aws.lambda.function.name': name })).toEqual({});
  });

  it('refuses what Lambda would, in the Invalid value form', () => {
    expect(
      errors({
        'aws.lambda.function.name': 'orders fn',
        'aws.lambda.batch.size': '10001',
        'aws.lambda.invocation.type': 'RequestResponse',
      }),
    ).toEqual({
      'aws.lambda.function.name': [
        'Invalid value orders fn for configuration aws.lambda.function.name: is not a Lambda function name or ARN',
      ],
      'aws.lambda.batch.size': [
        'Invalid value 10001 for configuration aws.lambda.batch.size: Value must be no more than 10000',
      ],
      'aws.lambda.invocation.type': [
        'Invalid value RequestResponse for configuration aws.lambda.invocation.type: String must be one of: sync, async',
      ],
    });
    expect(errors({ 'aws.lambda.function.name': '' })).toEqual({
      'aws.lambda.function.name': [
        'Missing required configuration "aws.lambda.function.name" which has no default value.',
      ],
    });
  });

  it('an async invocation cannot ask for partial batch responses', () => {
    expect(
      errors({
        'aws.lambda.invocation.type': 'async',
        'aws.lambda.function.response.types': 'ReportBatchItemFailures',
      }),
    ).toEqual({
      'aws.lambda.function.response.types': [
        'An async invocation has no response to read: use aws.lambda.invocation.type=sync.',
      ],
    });
    expect(errors({ 'aws.lambda.invocation.type': 'async' })).toEqual({});
  });
});
