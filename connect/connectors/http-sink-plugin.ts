/** The HTTP sink's definition: batched POSTs of JSON arrays to one URL. */
import { nonNegativeInt, positiveInt } from '../config-def.js';
import type { ConfigKey } from '../config-def.js';
import type { SinkPlugin } from '../plugin.js';

const key = (k: Omit<ConfigKey, 'group' | 'importance'>): ConfigKey => ({
  importance: 'HIGH',
  group: 'HTTP',
  ...k,
});

export const HTTP_SINK: SinkPlugin = {
  class: 'io.sluice.connect.http.HttpSinkConnector',
  aliases: ['HttpSinkConnector', 'HttpSink'],
  type: 'sink',
  version: '0.1.0',
  configKeys: [
    key({
      name: 'http.api.url',
      type: 'STRING',
      documentation: 'The endpoint records are POSTed to.',
      validate: (v) => (/^https?:\/\//.test(v) ? undefined : 'must be an http:// or https:// URL'),
    }),
    key({
      name: 'batch.max.size',
      type: 'INT',
      default: '100',
      documentation: 'Records per request.',
      validate: positiveInt,
    }),
    key({
      name: 'headers',
      type: 'STRING',
      default: '',
      documentation: 'Extra request headers, Name:Value|Name2:Value2.',
    }),
    key({
      name: 'max.retries',
      type: 'INT',
      default: '5',
      documentation: 'Retries of a 5xx or network failure.',
      validate: nonNegativeInt,
    }),
    key({
      name: 'retry.backoff.ms',
      type: 'INT',
      default: '200',
      documentation: 'First retry delay (doubles).',
      validate: nonNegativeInt,
    }),
    key({
      name: 'request.timeout.ms',
      type: 'INT',
      default: '10000',
      documentation: 'Per-request timeout.',
      validate: positiveInt,
    }),
  ],
  taskConfigs: (config, maxTasks) => Array.from({ length: maxTasks }, () => ({ ...config })),
  createTask: async (config, context) => (await import('./http-sink.js')).createHttpSinkTask(config, context),
};
