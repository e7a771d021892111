/**
 * What a connector runs, as the herder shows it and the worker runs it: its task configs (recomputed
 * from the stored config, so both always agree) and the consumer group its sink tasks join.
 */
import { SluiceError } from '../protocol/errors.js';
import { valueOf } from './config-def.js';
import { CONNECT_LIMITS, keysOf } from './connector-config.js';
import type { AnyPlugin } from './plugin.js';
import { findPlugin } from './plugins.js';
import type { ConnectorRecord } from './state-store.js';

/** A sink connector's consumer group, as Kafka Connect names it. */
export const groupIdOf = (connector: string): string => `connect-${connector}`;

const pluginOf = (record: ConnectorRecord): AnyPlugin => {
  const plugin = findPlugin(record.config['connector.class'] ?? '');
  if (!plugin)
    throw new SluiceError('UNKNOWN_SERVER_ERROR', `connector ${record.name} names no installed plugin`);
  return plugin;
};

/** The task configs a connector runs now (recomputed from its config: deterministic). */
export const taskConfigsOf = (record: ConnectorRecord): Record<string, string>[] => {
  const plugin = pluginOf(record);
  // Clamped as well as validated: a record stored before the bound must not allocate without one.
  const maxTasks = Math.min(
    Number(valueOf(keysOf(plugin), record.config, 'tasks.max')) || 1,
    CONNECT_LIMITS.maxTasks,
  );
  return plugin.taskConfigs(record.config, maxTasks);
};
