/**
 * The S3 sink's definition (Confluent's S3 sink settings). Objects are named by topic, partition and
 * the offset of their first record, so a replay after a crash writes the very same objects again.
 */
import { oneOf, positiveInt } from '../config-def.js';
import type { ConfigKey } from '../config-def.js';
import type { SinkPlugin } from '../plugin.js';

export const JSON_FORMAT = 'io.confluent.connect.s3.format.json.JsonFormat';
export const BYTES_FORMAT = 'io.confluent.connect.s3.format.bytearray.ByteArrayFormat';

const key = (
  k: Omit<ConfigKey, 'group' | 'importance'> & { importance?: ConfigKey['importance'] },
): ConfigKey => ({
  importance: 'HIGH',
  group: 'S3',
  ...k,
});

export const S3_SINK: SinkPlugin = {
  class: 'io.sluice.connect.s3.S3SinkConnector',
  aliases: ['S3SinkConnector', 'S3Sink'],
  type: 'sink',
  version: '0.1.0',
  configKeys: [
    key({ name: 's3.bucket.name', type: 'STRING', documentation: 'The S3 bucket.' }),
    key({ name: 's3.region', type: 'STRING', default: 'us-east-1', documentation: 'The bucket region.' }),
    key({
      name: 'store.url',
      type: 'STRING',
      default: '',
      documentation: 'An S3-compatible endpoint (e.g. a local emulator); empty uses AWS.',
    }),
    key({ name: 'topics.dir', type: 'STRING', default: 'topics', documentation: 'Top-level prefix.' }),
    key({
      name: 'flush.size',
      type: 'INT',
      documentation: 'Records per object before it is committed.',
      validate: positiveInt,
    }),
    key({
      name: 'rotate.interval.ms',
      type: 'LONG',
      default: '-1',
      documentation:
        'Closes an object when a record is this much later (record timestamp) than its first one; -1 disables.',
      validate: (v) => (Number(v) === -1 || Number(v) >= 1 ? undefined : 'Value must be -1 or at least 1'),
    }),
    key({
      name: 'format.class',
      type: 'CLASS',
      default: JSON_FORMAT,
      documentation: 'JsonFormat writes one JSON value per line; ByteArrayFormat writes raw values.',
      validate: oneOf([JSON_FORMAT, BYTES_FORMAT]),
      recommended: [JSON_FORMAT, BYTES_FORMAT],
    }),
    key({
      name: 'format.bytearray.separator',
      type: 'STRING',
      default: '\n',
      importance: 'LOW',
      documentation: 'Separator between values for ByteArrayFormat.',
    }),
  ],
  taskConfigs: (config, maxTasks) => Array.from({ length: maxTasks }, () => ({ ...config })),
  createTask: async (config, context) => (await import('./s3-sink.js')).createS3SinkTask(config, context),
};
