/**
 * A Streams application as its operator sees it (Kafka's `kafka-streams-groups --describe` of
 * KIP-1071): its state stores, and its tasks (sub-topology × partition) with the group member that
 * runs each and the epoch of the task's lease. All of it is read from what the application wrote (its
 * store registration and task leases) and from its consumer group (the application id): no task runs.
 */
import { SluiceError } from '../../protocol/errors.js';
import type { MetadataStore } from '../../lib/ports/metadata-store.js';
import { taskIdOf } from '../task.js';
import type { ApplicationStores, QueryableKind, SerdeFormat } from './registry.js';
import { readStores } from './registry.js';

export interface ApplicationTask {
  taskId: string;
  subTopology: number;
  partition: number;
  /** The member that owns every source partition of the task, or null (none, or not known). */
  owner: string | null;
  /** The epoch of the task's lease: bumped by each instance that takes the task over; null before the first. */
  leaseEpoch: number | null;
}

export interface ApplicationStore {
  name: string;
  kind: QueryableKind;
  subTopology: number;
  keyFormat: SerdeFormat;
  valueFormat: SerdeFormat;
}

export interface ApplicationDescription {
  applicationId: string;
  /** The group's state, or DEAD when it has no group (never joined, or deleted). */
  state: string;
  members: number;
  partitions: number;
  stores: ApplicationStore[];
  tasks: ApplicationTask[];
}

export interface ApplicationSummary {
  applicationId: string;
  state: string;
  members: number;
  partitions: number;
  stores: number;
}

/** What the application's consumer group says: its state and which member holds which partitions. */
export interface GroupView {
  state: string;
  members: { memberId: string; assignment: { topicPartitions: { topic: string; partitions: number[] }[] } }[];
}

export interface GroupReader {
  listGroups(): Promise<{ groups: { groupId: string; state: string; members: number }[] }>;
  describeGroup(groupId: string): Promise<GroupView>;
}

const notFound = (applicationId: string) =>
  new SluiceError(
    'GROUP_ID_NOT_FOUND',
    `no Streams application ${applicationId} has started (application.id); it registers its stores when it starts`,
  );

/** Task leases read at once. */
const CONCURRENCY = 16;

const leaseEpoch = async (store: MetadataStore, applicationId: string, taskId: string) => {
  const item = await store.get({ pk: `ST#${applicationId}#${taskId}`, sk: 'LEASE' }, { consistent: true });
  return typeof item?.['epoch'] === 'number' ? item['epoch'] : null;
};

const groupOf = async (groups: GroupReader, applicationId: string): Promise<GroupView | undefined> => {
  try {
    return await groups.describeGroup(applicationId);
  } catch (error) {
    if (error instanceof SluiceError && error.code === 'GROUP_ID_NOT_FOUND') return undefined;
    throw error;
  }
};

/** Sub-topology ids: as registered, else those that hold a store (older registrations). */
const subTopologyIds = (registry: ApplicationStores): number[] =>
  registry.subTopologies
    ? registry.subTopologies.map((s) => s.id)
    : [...new Set(Object.values(registry.stores).map((s) => s.subTopology))].sort((a, b) => a - b);

export const describeApplication = async (
  store: MetadataStore,
  groups: GroupReader,
  applicationId: string,
): Promise<ApplicationDescription> => {
  const registry = await readStores(store, applicationId);
  if (!registry) throw notFound(applicationId);
  const group = await groupOf(groups, applicationId);
  const holds = (memberId: string, topic: string, partition: number) =>
    group?.members
      .find((m) => m.memberId === memberId)
      ?.assignment.topicPartitions.some((tp) => tp.topic === topic && tp.partitions.includes(partition)) ===
    true;
  const ownerOf = (subTopology: number, partition: number): string | null => {
    const sources = registry.subTopologies?.find((s) => s.id === subTopology)?.sources;
    if (!sources || sources.length === 0 || !group) return null;
    return group.members.find((m) => sources.every((t) => holds(m.memberId, t, partition)))?.memberId ?? null;
  };
  const ids = subTopologyIds(registry).flatMap((sub) =>
    Array.from({ length: registry.partitions }, (_, partition) => ({ sub, partition })),
  );
  const tasks: ApplicationTask[] = [];
  for (let i = 0; i < ids.length; i += CONCURRENCY)
    tasks.push(
      ...(await Promise.all(
        ids.slice(i, i + CONCURRENCY).map(async ({ sub, partition }) => {
          const taskId = taskIdOf(sub, partition);
          return {
            taskId,
            subTopology: sub,
            partition,
            owner: ownerOf(sub, partition),
            leaseEpoch: await leaseEpoch(store, applicationId, taskId),
          };
        }),
      )),
    );
  return {
    applicationId,
    state: group?.state ?? 'DEAD',
    members: group?.members.length ?? 0,
    partitions: registry.partitions,
    stores: Object.entries(registry.stores)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, d]) => ({ name, ...d })),
    tasks,
  };
};

/** The groups that are Streams applications (they have registered stores), with their figures. */
export const listApplications = async (
  store: MetadataStore,
  groups: GroupReader,
): Promise<ApplicationSummary[]> => {
  const { groups: all } = await groups.listGroups();
  const out: ApplicationSummary[] = [];
  for (let i = 0; i < all.length; i += CONCURRENCY) {
    const batch = all.slice(i, i + CONCURRENCY);
    const registries = await Promise.all(batch.map((g) => readStores(store, g.groupId)));
    batch.forEach((g, j) => {
      const registry = registries[j];
      if (registry)
        out.push({
          applicationId: g.groupId,
          state: g.state,
          members: g.members,
          partitions: registry.partitions,
          stores: Object.keys(registry.stores).length,
        });
    });
  }
  return out.sort((a, b) => (a.applicationId < b.applicationId ? -1 : 1));
};
