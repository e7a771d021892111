/**
 * The AWS Lambda sink's definition: Confluent's AWS Lambda Sink settings (`aws.lambda.function.name`,
 * `aws.lambda.invocation.type`, `aws.lambda.batch.size`, `aws.lambda.region`), plus the settings of
 * Lambda's Kafka event source mapping that decide the event and partial failures, named after the
 * mapping's own parameters (EventSource, FunctionResponseTypes, BisectBatchOnFunctionError,
 * MaximumRetryAttempts).
 */
import { addError, oneOf, positiveInt, valueOf } from '../config-def.js';
import type { ConfigKey } from '../config-def.js';
import type { SinkPlugin } from '../plugin.js';

const key = (
  k: Omit<ConfigKey, 'group' | 'importance'> & { importance?: ConfigKey['importance'] },
): ConfigKey => ({
  importance: 'HIGH',
  group: 'AWS Lambda',
  ...k,
});

// Lambda's function name pattern: a name, name:qualifier, a partial ARN or a full ARN.
const FUNCTION_NAME =
  /^(arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\d{1}:)?(\d{12}:)?(function:)?([a-zA-Z0-9-_.]+)(:(\$LATEST|[a-zA-Z0-9-_]+))?$/;

export const LAMBDA_SINK_KEYS: readonly ConfigKey[] = [
  key({
    name: 'aws.lambda.function.name',
    type: 'STRING',
    documentation: 'The function to invoke: a name, name:version or name:alias, or an ARN.',
    validate: (v) =>
      FUNCTION_NAME.test(v) && v.length <= 170 ? undefined : 'is not a Lambda function name or ARN',
  }),
  key({
    name: 'aws.lambda.region',
    type: 'STRING',
    default: '',
    importance: 'MEDIUM',
    documentation: "The function's region; empty uses the runtime's (AWS_REGION).",
  }),
  key({
    name: 'aws.lambda.invocation.type',
    type: 'STRING',
    default: 'sync',
    documentation:
      "sync waits for each invocation and handles its failures (retries, bisection, partial batch responses, DLQ); async hands each batch to Lambda, which retries it twice and then uses the function's own destinations.",
    validate: oneOf(['sync', 'async']),
    recommended: ['sync', 'async'],
  }),
  key({
    name: 'aws.lambda.batch.size',
    type: 'INT',
    default: '20',
    documentation:
      'Most records in one invocation; batches are also cut below the payload limit (6 MB sync, 1 MB async).',
    validate: (v) => positiveInt(v) ?? (Number(v) <= 10_000 ? undefined : 'Value must be no more than 10000'),
  }),
  key({
    name: 'aws.lambda.event.source',
    type: 'STRING',
    default: 'aws:kafka',
    importance: 'MEDIUM',
    documentation: 'The event shape: aws:kafka (Amazon MSK) or SelfManagedKafka.',
    validate: oneOf(['aws:kafka', 'SelfManagedKafka']),
    recommended: ['aws:kafka', 'SelfManagedKafka'],
  }),
  key({
    name: 'aws.lambda.event.source.arn',
    type: 'STRING',
    default: '',
    importance: 'LOW',
    documentation:
      'The eventSourceArn of aws:kafka events; empty gives arn:aws:kafka:{region}::cluster/sluice/{connector name}.',
  }),
  key({
    name: 'aws.lambda.bootstrap.servers',
    type: 'STRING',
    default: '',
    importance: 'LOW',
    documentation: 'The bootstrapServers string of the event (for handlers that read it).',
  }),
  key({
    name: 'aws.lambda.function.response.types',
    type: 'STRING',
    default: 'ReportBatchItemFailures',
    importance: 'MEDIUM',
    documentation:
      'ReportBatchItemFailures reads the partial batch response {"batchItemFailures": [...]}; empty treats every answer that is not a function error as success.',
    validate: oneOf(['ReportBatchItemFailures']),
    recommended: ['ReportBatchItemFailures', ''],
  }),
  key({
    name: 'aws.lambda.bisect.batch.on.function.error',
    type: 'BOOLEAN',
    default: 'true',
    importance: 'MEDIUM',
    documentation:
      'Split a failed batch in two and send each half again, down to single records, so only poison records reach the error handling.',
  }),
  key({
    name: 'aws.lambda.maximum.retry.attempts',
    type: 'INT',
    default: '2',
    importance: 'MEDIUM',
    documentation:
      'Retries of a failed batch that cannot be split any more, before its records go to errors.tolerance and the DLQ.',
    validate: (v) =>
      Number(v) >= 0 && Number(v) <= 10_000 ? undefined : 'Value must be between 0 and 10000',
  }),
];

export const LAMBDA_SINK: SinkPlugin = {
  class: 'io.sluice.connect.aws.lambda.AwsLambdaSinkConnector',
  aliases: ['AwsLambdaSinkConnector', 'AwsLambdaSink', 'LambdaSinkConnector', 'LambdaSink'],
  type: 'sink',
  version: '0.1.0',
  configKeys: LAMBDA_SINK_KEYS,
  crossValidate: (config, infos) => {
    if (
      valueOf(LAMBDA_SINK_KEYS, config, 'aws.lambda.invocation.type') === 'async' &&
      config['aws.lambda.function.response.types'] === 'ReportBatchItemFailures'
    )
      addError(
        infos,
        'aws.lambda.function.response.types',
        'An async invocation has no response to read: use aws.lambda.invocation.type=sync.',
      );
  },
  taskConfigs: (config, maxTasks) => Array.from({ length: maxTasks }, () => ({ ...config })),
  createTask: async (config, context) =>
    (await import('./lambda-sink.js')).createLambdaSinkTask(config, context),
};
