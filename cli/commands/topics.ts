/** `topics list | describe | create | alter | delete`, after kafka-topics.sh. */
import type { TopicDescription } from '../api.js';
import type { CommandSpec } from '../command.js';
import { Options, UsageError } from '../command.js';
import { plural } from '../format.js';
import { SluiceError } from '../../sdk/errors.js';
import { renderFields, renderTable } from '../table.js';

const TOPIC_ARG = { name: 'topic', required: true, description: 'topic name' } as const;

const CONFIG_OPTION = {
  type: 'string',
  multiple: true,
  valueName: 'KEY=VALUE',
  description: 'a topic config with its Kafka name, e.g. retention.ms=86400000',
} as const;

/** The describe output: a header line, the partitions table and the configs. */
export const renderTopic = (topic: TopicDescription): string => {
  const partitions = renderTable(
    [
      { header: 'PARTITION', value: (p) => p.partition },
      { header: 'LEADER', value: (p) => p.leader },
      { header: 'EPOCH', value: (p) => p.leaderEpoch },
      { header: 'REPLICAS', value: (p) => p.replicas.join(',') },
      { header: 'ISR', value: (p) => p.isr.join(',') },
      { header: 'LOG START', value: (p) => p.logStartOffset },
      { header: 'HIGH WATERMARK', value: (p) => p.highWatermark },
    ],
    topic.partitions,
  );
  const configs = renderTable(
    [
      { header: 'CONFIG', value: ([name]) => name },
      { header: 'VALUE', value: ([, value]) => value, align: 'left' },
    ],
    Object.entries(topic.configs).sort(([a], [b]) => (a < b ? -1 : 1)),
  );
  const header = renderFields([
    ['Topic', topic.name],
    ['TopicId', topic.topicId],
    ['PartitionCount', topic.partitions.length],
    ['ReplicationFactor', topic.replicationFactor],
  ]);
  return `${header}\n\n${partitions}\n\n${configs}`;
};

const list: CommandSpec = {
  words: ['topics', 'list'],
  summary: 'List the topics.',
  args: [],
  options: {},
  async run(ctx) {
    const topics = (await ctx.api.listTopics()).sort((a, b) => (a.name < b.name ? -1 : 1));
    if (ctx.json) return void (await ctx.print(JSON.stringify({ topics })));
    if (topics.length === 0)
      return void ctx.note('No topics. Create one with `sluice topics create <topic>`.');
    await ctx.print(
      renderTable(
        [
          { header: 'TOPIC', value: (t) => t.name },
          { header: 'PARTITIONS', value: (t) => t.partitions },
          { header: 'REPLICATION FACTOR', value: (t) => t.replicationFactor },
        ],
        topics,
      ),
    );
  },
};

const describe: CommandSpec = {
  words: ['topics', 'describe'],
  summary:
    'Show a topic: its partitions (leader, epoch, replicas, ISR, log start, high watermark) and configs.',
  args: [TOPIC_ARG],
  options: {},
  examples: ['sluice topics describe orders'],
  async run(ctx, { args: [name] }) {
    const topic = await ctx.api.describeTopic(name!);
    await ctx.print(ctx.json ? JSON.stringify(topic) : renderTopic(topic));
  },
};

const create: CommandSpec = {
  words: ['topics', 'create'],
  summary: 'Create a topic.',
  args: [TOPIC_ARG],
  options: {
    partitions: { type: 'string', valueName: 'N', description: 'number of partitions (default 1)' },
    'replication-factor': {
      type: 'string',
      valueName: 'N',
      description: 'replica stores per partition (default 1; at most the number of stores)',
    },
    config: CONFIG_OPTION,
    'if-not-exists': { type: 'boolean', description: 'succeed without change when the topic exists' },
  },
  examples: [
    'sluice topics create orders --partitions 3',
    'sluice topics create audit --config retention.ms=86400000 --config cleanup.policy=compact',
  ],
  async run(ctx, { args: [name], values }) {
    const options = new Options(values, create);
    const partitions = options.int('partitions', { min: 1 });
    const replicationFactor = options.int('replication-factor', { min: 1 });
    const configs = options.keyValues('config');
    let topic: TopicDescription;
    try {
      topic = await ctx.api.createTopic({
        name: name!,
        ...(partitions === undefined ? {} : { partitions }),
        ...(replicationFactor === undefined ? {} : { replicationFactor }),
        ...(configs === undefined ? {} : { configs }),
      });
    } catch (error) {
      if (!(
        error instanceof SluiceError &&
        error.code === 'TOPIC_ALREADY_EXISTS' &&
        options.flag('if-not-exists')
      )) {
        throw error;
      }
      ctx.note(`Topic ${name} already exists.`);
      if (ctx.json) await ctx.print(JSON.stringify(await ctx.api.describeTopic(name!)));
      return;
    }
    if (ctx.json) return void (await ctx.print(JSON.stringify(topic)));
    await ctx.print(
      `Created topic ${topic.name} with ${plural(topic.partitions.length, 'partition')}, ` +
        `replication factor ${topic.replicationFactor}.`,
    );
  },
};

const alter: CommandSpec = {
  words: ['topics', 'alter'],
  summary: 'Add partitions to a topic or change its configs (configs not named keep their values).',
  args: [TOPIC_ARG],
  options: {
    partitions: { type: 'string', valueName: 'N', description: 'new partition count (partitions only grow)' },
    config: CONFIG_OPTION,
  },
  examples: [
    'sluice topics alter orders --partitions 6',
    'sluice topics alter orders --config retention.ms=3600000',
  ],
  async run(ctx, { args: [name], values }) {
    const options = new Options(values, alter);
    const partitions = options.int('partitions', { min: 1 });
    const configs = options.keyValues('config');
    if (partitions === undefined && configs === undefined) {
      throw new UsageError('nothing to change: give --partitions and/or --config', alter);
    }
    const before = partitions === undefined ? undefined : await ctx.api.describeTopic(name!);
    const topic = await ctx.api.alterTopic(name!, {
      ...(partitions === undefined ? {} : { partitions }),
      ...(configs === undefined ? {} : { configs }),
    });
    if (ctx.json) return void (await ctx.print(JSON.stringify(topic)));
    const changes: string[] = [];
    if (before && partitions !== undefined) {
      changes.push(
        partitions === before.partitions.length
          ? `partitions unchanged at ${partitions}`
          : `partitions ${before.partitions.length} → ${topic.partitions.length}`,
      );
    }
    for (const [key] of Object.entries(configs ?? {})) changes.push(`${key}=${topic.configs[key] ?? ''}`);
    await ctx.print(`Altered topic ${topic.name}: ${changes.join(', ')}.`);
  },
};

const remove: CommandSpec = {
  words: ['topics', 'delete'],
  summary: 'Delete a topic with its data; the name can be reused at once.',
  args: [TOPIC_ARG],
  options: { 'if-exists': { type: 'boolean', description: 'succeed when the topic does not exist' } },
  async run(ctx, { args: [name], values }) {
    try {
      await ctx.api.deleteTopic(name!);
    } catch (error) {
      const missing = error instanceof SluiceError && error.code === 'UNKNOWN_TOPIC_OR_PARTITION';
      if (!(missing && new Options(values).flag('if-exists'))) throw error;
      ctx.note(`Topic ${name} does not exist.`);
      if (ctx.json) await ctx.print(JSON.stringify({ deleted: false, topic: name }));
      return;
    }
    await ctx.print(ctx.json ? JSON.stringify({ deleted: true, topic: name }) : `Deleted topic ${name}.`);
  },
};

export const topicCommands: readonly CommandSpec[] = [list, describe, create, alter, remove];
