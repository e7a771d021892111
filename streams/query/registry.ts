/**
 * What interactive queries need to know about an application's stores, kept in the metadata table
 * beside its task leases (`ST#{application}#STORES` / `STORES`): each queryable store's kind, the sub-topology whose
 * tasks hold it, how its keys and values are serialized, and how many partitions (tasks per
 * sub-topology) the application runs. A running application writes it when it starts; the query routes
 * only read it, so they serve state without a task and without loading the application's code.
 */
import type { Item, MetadataStore } from '../../lib/ports/metadata-store.js';
import type { Serde } from '../serdes.js';
import { Serdes } from '../serdes.js';
import type { StoreKind, Topology } from '../topology.js';
import { topicNameOf } from '../task.js';

/** How a store's keys or values are rendered: its serde, or raw bytes for a serde of the user's own. */
export type SerdeFormat = 'string' | 'json' | 'bytes';

export type QueryableKind = Exclude<StoreKind, 'join-window'>;

export interface StoreDescription {
  kind: QueryableKind;
  subTopology: number;
  keyFormat: SerdeFormat;
  valueFormat: SerdeFormat;
}

export interface ApplicationStores {
  /** Tasks per sub-topology: partitions 0 .. partitions-1. */
  partitions: number;
  stores: Record<string, StoreDescription>;
  /**
   * Each sub-topology's source topics (full names), so a task's owner can be read off the group's
   * assignment (streams/query/application.ts); absent in registrations written before it was recorded.
   */
  subTopologies?: SubTopologySources[];
}

export interface SubTopologySources {
  id: number;
  sources: string[];
}

export const serdeFormat = (serde: Serde<unknown>): SerdeFormat =>
  serde === Serdes.String() ? 'string' : serde === Serdes.JSON() ? 'json' : 'bytes';

/**
 * The stores of a topology that interactive queries may read. Join windows and suppression buffers
 * are internal to their processors (Kafka does not expose them either).
 */
export const describeStores = (
  topology: Topology,
  partitions: number,
  /** With the application id, the sub-topologies' source topics are recorded as well. */
  applicationId?: string,
): ApplicationStores => {
  const stores: Record<string, StoreDescription> = {};
  for (const sub of topology.subTopologies)
    for (const name of sub.stores) {
      const spec = topology.stores.get(name);
      if (!spec || spec.kind === 'join-window' || spec.internal === true) continue;
      stores[name] = {
        kind: spec.kind,
        subTopology: sub.id,
        keyFormat: serdeFormat(spec.keySerde),
        valueFormat: serdeFormat(spec.valueSerde),
      };
    }
  if (applicationId === undefined) return { partitions, stores };
  const subTopologies = topology.subTopologies.map((sub) => ({
    id: sub.id,
    sources: sub.sources.map((t) => topicNameOf(applicationId, t)),
  }));
  return { partitions, stores, subTopologies };
};

/**
 * Under `ST#{app}#`, where the task leases are (a task id is `<n>_<p>`, never `STORES`): a deployed
 * app's role may write only `S#{app}#*` and `ST#{app}#*` items (infra/constructs/streams-app.ts).
 */
const registryKey = (applicationId: string) => ({ pk: `ST#${applicationId}#STORES`, sk: 'STORES' });

/** Records the application's stores (each start overwrites: a new version of the app may add stores). */
export const registerStores = async (
  store: MetadataStore,
  applicationId: string,
  description: ApplicationStores,
): Promise<void> => {
  await store.put({
    ...registryKey(applicationId),
    partitions: description.partitions,
    stores: Object.fromEntries(Object.entries(description.stores).map(([name, d]) => [name, { ...d }])),
    ...(description.subTopologies
      ? { subTopologies: description.subTopologies.map((s) => ({ id: s.id, sources: [...s.sources] })) }
      : {}),
  });
};

/** The application's stores, or undefined when it has never started. */
export const readStores = async (
  store: MetadataStore,
  applicationId: string,
): Promise<ApplicationStores | undefined> => {
  const item = await store.get(registryKey(applicationId), { consistent: true });
  return item && parseRegistry(item);
};

const KINDS: readonly string[] = ['key-value', 'window', 'session'];
const FORMATS: readonly string[] = ['string', 'json', 'bytes'];

/** Reads the item defensively: whatever does not look like a store description is left out. */
const parseRegistry = (item: Item): ApplicationStores => {
  const partitions = typeof item['partitions'] === 'number' ? item['partitions'] : 0;
  const raw = item['stores'];
  const stores: Record<string, StoreDescription> = {};
  if (raw && typeof raw === 'object' && !Array.isArray(raw) && !(raw instanceof Uint8Array))
    for (const [name, d] of Object.entries(raw)) {
      if (!d || typeof d !== 'object' || Array.isArray(d) || d instanceof Uint8Array) continue;
      const { kind, subTopology, keyFormat, valueFormat } = d;
      if (
        typeof kind === 'string' &&
        KINDS.includes(kind) &&
        typeof subTopology === 'number' &&
        typeof keyFormat === 'string' &&
        FORMATS.includes(keyFormat) &&
        typeof valueFormat === 'string' &&
        FORMATS.includes(valueFormat)
      )
        stores[name] = {
          kind: kind as QueryableKind,
          subTopology,
          keyFormat: keyFormat as SerdeFormat,
          valueFormat: valueFormat as SerdeFormat,
        };
    }
  const subTopologies = parseSubTopologies(item['subTopologies']);
  return { partitions, stores, ...(subTopologies ? { subTopologies } : {}) };
};

const parseSubTopologies = (raw: unknown): SubTopologySources[] | undefined => {
  if (!Array.isArray(raw)) return undefined;
  return raw.flatMap((s: unknown) => {
    if (!s || typeof s !== 'object' || Array.isArray(s) || s instanceof Uint8Array) return [];
    const { id, sources } = s as Record<string, unknown>;
    if (typeof id !== 'number' || !Array.isArray(sources) || !sources.every((t) => typeof t === 'string'))
      return [];
    return [{ id, sources: sources as string[] }];
  });
};
