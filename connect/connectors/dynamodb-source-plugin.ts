/**
 * The DynamoDB Streams source's definition. Settings take the names existing DynamoDB source
 * connectors use: `dynamodb.table.includelist` and `dynamodb.cdc.max.poll.records` (Confluent's
 * DynamoDB CDC source), `dynamodb.service.endpoint`, `aws.region` and `kafka.topic.prefix`
 * (trustpilot's kafka-connect-dynamodb). The implementation is imported on first use, so the REST
 * function (which only validates) never evaluates the DynamoDB Streams client.
 */
import { listOf, positiveInt } from '../config-def.js';
import type { ConfigKey } from '../config-def.js';
import type { SourcePlugin } from '../plugin.js';

const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;

const key = (
  k: Omit<ConfigKey, 'group' | 'importance'> & { importance?: ConfigKey['importance'] },
  group = 'DynamoDB',
): ConfigKey => ({ importance: 'HIGH', group, ...k });

export const DYNAMODB_SOURCE: SourcePlugin = {
  class: 'io.sluice.connect.dynamodb.DynamoDbSourceConnector',
  aliases: ['DynamoDbSourceConnector', 'DynamoDbSource', 'DynamoDBSourceConnector'],
  type: 'source',
  version: '0.1.0',
  configKeys: [
    key({
      name: 'dynamodb.table.includelist',
      type: 'LIST',
      documentation: 'Tables whose change streams are copied (each needs its StreamSpecification enabled).',
      validate: (v) => {
        const bad = listOf(v).filter((t) => !TABLE_NAME.test(t));
        if (listOf(v).length === 0) return 'List must name at least one table';
        return bad.length === 0 ? undefined : `not a DynamoDB table name: ${bad.join(', ')}`;
      },
    }),
    key({
      name: 'dynamodb.service.endpoint',
      type: 'STRING',
      default: '',
      importance: 'LOW',
      documentation:
        'DynamoDB Streams endpoint (DynamoDB Local, LocalStack, a VPC endpoint); empty uses the region’s.',
      validate: (v) => (/^https?:\/\/[^\s/]+/.test(v) ? undefined : 'must be an http:// or https:// URL'),
    }),
    key({
      name: 'aws.region',
      type: 'STRING',
      default: '',
      importance: 'MEDIUM',
      documentation: 'Region of the tables; empty uses the function’s own (AWS_REGION).',
      validate: (v) => (/^[a-z]{2}(-[a-z]+)+-\d+$/.test(v) ? undefined : 'not an AWS region name'),
    }),
    key(
      {
        name: 'kafka.topic.prefix',
        type: 'STRING',
        default: 'dynamodb-',
        documentation: 'Topic of a table = prefix + table name.',
      },
      'Connector',
    ),
    key(
      {
        name: 'dynamodb.cdc.max.poll.records',
        type: 'INT',
        default: '1000',
        importance: 'LOW',
        documentation: 'Most change records per poll (one poll commits as one unit).',
        validate: positiveInt,
      },
      'Connector',
    ),
  ],
  outputTopics: (config) =>
    listOf(config['dynamodb.table.includelist'] ?? '').map(
      (t) => `${config['kafka.topic.prefix'] ?? 'dynamodb-'}${t}`,
    ),
  // Tables are dealt round-robin: a task owns whole tables, so one reads every shard of a table and can
  // follow its lineage. The runtime sizes a poll by batch.max.rows.
  taskConfigs: (config, maxTasks) => {
    const tables = listOf(config['dynamodb.table.includelist'] ?? '');
    const count = Math.max(1, Math.min(maxTasks, tables.length));
    return Array.from({ length: count }, (_, t) => ({
      ...config,
      tables: tables.filter((_, i) => i % count === t).join(','),
      'batch.max.rows': config['dynamodb.cdc.max.poll.records'] ?? '1000',
    }));
  },
  createTask: async (config, context) =>
    (await import('./dynamodb-source.js')).createDynamoDbStreamsSourceTask(config, context),
};
