/**
 * The topics a sink connector consumes: its `topics` list, or, with `topics.regex`, every topic whose
 * whole name matches (Connect's pattern subscription), so a topic created later is picked up the next
 * time the list is read. Shared by the sink runner (its group subscription) and the triggers that
 * decide which sinks new data concerns.
 */
import type { SluiceClient } from '../../sdk/index.js';
import { listOf } from '../config-def.js';
import { compileTopicRegex } from '../topic-regex.js';

/** How often a running sink with topics.regex lists the topics again (Kafka's metadata.max.age.ms is 5 min). */
export const TOPIC_REFRESH_MS = 10_000;

export const isPatternSink = (config: Record<string, string>): boolean =>
  (config['topics.regex'] ?? '').trim() !== '';

export const sinkTopicsOf = (config: Record<string, string>, existing: readonly string[]): string[] => {
  if (!isPatternSink(config)) return listOf(config['topics'] ?? '');
  const pattern = compileTopicRegex((config['topics.regex'] ?? '').trim());
  return existing.filter((t) => pattern.matches(t)).sort();
};

export const resolveSinkTopics = async (
  client: SluiceClient,
  config: Record<string, string>,
): Promise<string[]> =>
  sinkTopicsOf(config, isPatternSink(config) ? (await client.admin().listTopics()).map((t) => t.name) : []);
