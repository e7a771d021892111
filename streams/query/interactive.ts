/**
 * Interactive queries (Kafka Streams' ReadOnlyKeyValueStore, ReadOnlyWindowStore and
 * ReadOnlySessionStore) served straight from the state items in the metadata table: no task runs,
 * and what is read is what the application's tasks last committed. A key is looked for first in the
 * task its partition maps to under the default partitioner (as Kafka's queryMetadataForKey assumes),
 * then in the others, so records that were partitioned otherwise are still found.
 */
import { SluiceError } from '../../protocol/errors.js';
import { partitionForKey } from '../../protocol/partitioner.js';
import type { MetadataStore } from '../../lib/ports/metadata-store.js';
import { KEY_END } from '../state/backend.js';
import type { StoredEntry } from '../state/backend.js';
import { MetadataStateBackend } from '../state/metadata-backend.js';
import { encodeTime } from '../state/stores.js';
import { taskIdOf } from '../task.js';
import type { ApplicationStores, QueryableKind, StoreDescription } from './registry.js';
import { readStores } from './registry.js';

/** A store of a running application, with what it takes to read it. */
export interface ResolvedStore {
  name: string;
  description: StoreDescription;
  partitions: number;
  backend: MetadataStateBackend;
}

export interface KeyValueEntry {
  key: Uint8Array;
  value: Uint8Array;
  timestamp: number;
}

export interface WindowEntry {
  windowStart: number;
  /** Session windows only: a window store's entries do not record their size. */
  windowEnd?: number;
  value: Uint8Array;
  timestamp: number;
}

export interface RangePage {
  entries: KeyValueEntry[];
  /** The first key left out (the next page's inclusive `from`), or null when the range is done. */
  next: Uint8Array | null;
}

const MAX_TIME = 10 ** 15 - 2;
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const unhex = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'hex'));
/** Keys are even-length hex and '0' is the smallest hex digit, so k ≤ hex(to) ⇔ k < hex(to) + '0'. */
const inclusiveEnd = (key: Uint8Array): string => `${hex(key)}0`;

export class InteractiveQueries {
  constructor(private readonly store: MetadataStore) {}

  /** The application's store, checked to be of one of `kinds`. */
  async resolve(
    applicationId: string,
    storeName: string,
    kinds: readonly QueryableKind[],
  ): Promise<ResolvedStore> {
    const registry: ApplicationStores | undefined = await readStores(this.store, applicationId);
    if (!registry)
      throw new SluiceError(
        'GROUP_ID_NOT_FOUND',
        `no Streams application ${applicationId} has started (application.id); it registers its stores when it starts`,
      );
    const description = registry.stores[storeName];
    if (!description) {
      const known = Object.keys(registry.stores).sort();
      throw new SluiceError(
        'UNKNOWN_STATE_STORE',
        `application ${applicationId} has no state store ${storeName}; its stores: ${known.length > 0 ? known.join(', ') : 'none'}`,
      );
    }
    if (!kinds.includes(description.kind))
      throw new SluiceError(
        'INVALID_REQUEST',
        `store ${storeName} is a ${description.kind} store; this read applies to ${kinds.join(' and ')} stores`,
      );
    return {
      name: storeName,
      description,
      partitions: registry.partitions,
      backend: new MetadataStateBackend(this.store, applicationId),
    };
  }

  /** ReadOnlyKeyValueStore.get: the committed value of `key`, or undefined. */
  async get(s: ResolvedStore, key: Uint8Array): Promise<KeyValueEntry | undefined> {
    const k = hex(key);
    const found = await this.firstTask(s, key, async (task) => {
      const entry = await s.backend.get(task, s.name, k);
      return entry ? [entry] : [];
    });
    const entry = found[0];
    return entry && { key, value: entry.value, timestamp: entry.timestamp };
  }

  /**
   * ReadOnlyKeyValueStore.range(from, to) (both inclusive, either open) in key-byte order, at most
   * `limit` entries: every task's smallest `limit + 1` keys, merged.
   */
  async range(
    s: ResolvedStore,
    from: Uint8Array | undefined,
    to: Uint8Array | undefined,
    limit: number,
  ): Promise<RangePage> {
    const start = from === undefined ? '' : hex(from);
    const end = to === undefined ? KEY_END : inclusiveEnd(to);
    if (start >= end) return { entries: [], next: null };
    const perTask = await Promise.all(
      this.tasks(s).map((task) => s.backend.range(task, s.name, start, end, limit + 1)),
    );
    const merged = perTask
      .flat()
      .filter((e) => !e.key.startsWith(KEY_END))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const entries = merged.slice(0, limit).map((e) => ({
      key: unhex(e.key),
      value: e.value,
      timestamp: e.timestamp,
    }));
    const next = merged[limit];
    return { entries, next: next ? unhex(next.key) : null };
  }

  /**
   * ReadOnlyWindowStore.fetch(key, timeFrom, timeTo): the key's windows that start in [from, to];
   * ReadOnlySessionStore.findSessions(key, from, to): its sessions that end at or after `from` and
   * start at or before `to`. Both in start-time order.
   */
  async windows(s: ResolvedStore, key: Uint8Array, from: number, to: number): Promise<WindowEntry[]> {
    const k = hex(key);
    // Times are stored as 15 digits (stores.ts); a later bound means "to the end".
    to = Math.min(to, MAX_TIME);
    if (s.description.kind === 'window') {
      const entries = await this.firstTask(s, key, (task) =>
        s.backend.range(task, s.name, `${k}|${encodeTime(from)}`, `${k}|${encodeTime(to + 1)}`),
      );
      return entries.map((e) => ({
        windowStart: Number(e.key.slice(k.length + 1)),
        value: e.value,
        timestamp: e.timestamp,
      }));
    }
    const entries = await this.firstTask(s, key, (task) =>
      s.backend.range(task, s.name, `${k}|`, `${k}|${KEY_END}`),
    );
    return entries
      .map((e) => {
        const [windowStart, windowEnd] = e.key
          .slice(k.length + 1)
          .split('|')
          .map(Number) as [number, number];
        return { windowStart, windowEnd, value: e.value, timestamp: e.timestamp };
      })
      .filter((w) => w.windowEnd >= from && w.windowStart <= to);
  }

  private tasks(s: ResolvedStore): string[] {
    return Array.from({ length: s.partitions }, (_, p) => taskIdOf(s.description.subTopology, p));
  }

  /** Reads the key's own task first, then every other task until one has something. */
  private async firstTask(
    s: ResolvedStore,
    key: Uint8Array,
    read: (task: string) => Promise<StoredEntry[]>,
  ): Promise<StoredEntry[]> {
    if (s.partitions < 1) return [];
    const home = partitionForKey(key, s.partitions);
    const first = await read(taskIdOf(s.description.subTopology, home));
    if (first.length > 0) return first;
    const others = this.tasks(s).filter((_, p) => p !== home);
    for (const found of await Promise.all(others.map(read))) if (found.length > 0) return found;
    return [];
  }
}
