/**
 * Where a Streams application stands on its source partitions: their high watermarks (what a run
 * must reach) and their committed positions (what the instance owning a partition has made durable).
 * A committed position is read where the guarantee keeps it: the group's offsets under at_least_once,
 * the task's lease item under exactly_once_v2 (the group's offsets only mirror it, after the fact).
 */
import type { SluiceClient } from '../../sdk/index.js';
import type { StreamsConfig } from '../runtime/config.js';
import { TaskLease } from '../runtime/lease.js';
import type { MetadataStateBackend } from '../state/metadata-backend.js';
import { taskIdOf, topicNameOf } from '../task.js';
import type { Topology } from '../topology.js';
import type { SourcePartitionOffset } from './bounded-run.js';

/** Every source topic of the app, internal ones by their full names. */
export const sourceTopicsOf = (topology: Topology, applicationId: string): string[] => [
  ...new Set(topology.subTopologies.flatMap((s) => s.sources.map((t) => topicNameOf(applicationId, t)))),
];

export const sourceHighWatermarks = async (
  topology: Topology,
  config: StreamsConfig,
  client: SluiceClient,
): Promise<SourcePartitionOffset[]> => {
  const admin = client.admin();
  const perTopic = await Promise.all(
    sourceTopicsOf(topology, config.applicationId).map(async (topic) =>
      (await admin.fetchTopicOffsets(topic)).map((p) => ({ topic, partition: p.partition, offset: p.high })),
    ),
  );
  return perTopic.flat();
};

export const committedPosition = async (
  topology: Topology,
  wiring: { config: StreamsConfig; client: SluiceClient; state: MetadataStateBackend },
  topic: string,
  partition: number,
): Promise<number | undefined> => {
  const { config, client, state } = wiring;
  if (config.processingGuarantee === 'at_least_once') {
    const offsets = await client.admin().fetchOffsets(config.applicationId, topic);
    return offsets.find((o) => o.topic === topic && o.partition === partition)?.offset;
  }
  const sub = topology.subTopologyOf(topic, (t) => topicNameOf(config.applicationId, t));
  if (!sub) return undefined;
  const lease = await state.store.get(new TaskLease(state, taskIdOf(sub.id, partition)).key, {
    consistent: true,
  });
  const offsets = lease?.['offsets'];
  if (!offsets || typeof offsets !== 'object' || Array.isArray(offsets) || offsets instanceof Uint8Array)
    return undefined;
  const offset = (offsets as Record<string, unknown>)[topic];
  return typeof offset === 'number' ? offset : undefined;
};
