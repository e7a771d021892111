/**
 * Waiting consumers (issue 28): a consumer that has caught up registers the partitions it waits on
 * and the offsets it would fetch from, over a connection that costs nothing while idle (an API Gateway
 * WebSocket); the notifier on the metadata table's stream tells it once, when one of them has data.
 *
 * - Register, then check. The registration is stored first (one item per partition under
 *   `W#{topicId}#{partition}`, so the notifier finds a partition's waiters with one Query), and only
 *   then are the partitions' high watermarks (last stable offsets for read_committed) read: a record
 *   committed before the registration was stored is seen by the check, one committed after it is seen
 *   by the notifier, whose Query (strongly consistent) runs after that commit. None falls between.
 * - Once. A connection's registration carries a generation (`reg`); whoever deletes the connection's
 *   registration item under that generation (the check, or one of several notifier invocations) sends
 *   the one `ready` message and removes the per-partition items. The member then fetches from its
 *   positions (which include everything that arrived meanwhile) and registers again only once it has
 *   caught up again: a member that keeps getting data is sent nothing.
 * - A connection that is gone (the client left without a goodbye) loses its registration when a
 *   message to it fails; items nobody reads expire by TTL.
 */
import { SluiceError } from '../../../protocol/errors.js';
import type { Clock } from '../../ports/clock.js';
import type { ConnectionNotifier } from '../../ports/connections.js';
import type { MetadataStore } from '../../ports/metadata-store.js';
import { ConditionFailedError } from '../../ports/metadata-store.js';
import { keys } from '../keys.js';
import { queryAll } from '../../ports/query-all.js';
import { highWatermarkOf } from '../replication/replica-state.js';
import type { TopicRegistry } from '../topics/registry.js';
import type { IsolationLevel } from '../transactions/lso.js';
import { lastStableOffset } from '../transactions/lso.js';
import { checkPartition, withCurrentTopic } from './context.js';
import { decodePartitionState } from './partition-codec.js';
import type { PartitionState } from './partition-state.js';

/** Partitions one registration may name (a member owning more opens a second connection). */
export const MAX_WAIT_PARTITIONS = 1000;
/**
 * How long a registration outlives its last write: longer than API Gateway keeps a WebSocket open
 * (2 hours), so only a registration nobody can be waiting on any more expires.
 */
export const WAIT_TTL_MS = 3 * 60 * 60 * 1000;

export interface WaitPartition {
  topic: string;
  partition: number;
  /** The offset the member would fetch from: it is told as soon as the partition has data at or past it. */
  fetchOffset: number;
}

export interface WaitRequest {
  partitions: readonly WaitPartition[];
  isolationLevel?: IsolationLevel;
}

/** The message a waiting connection gets: the partitions that have data past its offsets. */
export interface ReadyMessage {
  type: 'ready';
  partitions: { topic: string; partition: number }[];
}

/** A partition whose item changed (a stream record's keys). */
export interface PartitionKey {
  topicId: string;
  partition: number;
}

export interface WaitersOptions {
  store: MetadataStore;
  catalog: TopicRegistry;
  clock: Clock;
  notifier: ConnectionNotifier;
  newId: () => string;
}

/** What one registration or one notifier pass did, for logs and tests. */
export interface NotifyReport {
  /** Connections sent a `ready` message. */
  notified: number;
  /** Connections found gone (their registrations removed). */
  gone: number;
}

/** A connection's registration item, `WC#{connectionId}` / `WAIT`. */
interface Registration {
  reg: string;
  /** `{topicId}#{partition}` of every partition the connection has an item on. */
  parts: string[];
  /** The fetch offset of each partition waited on now, by `{topicId}#{partition}`. */
  offsets: Record<string, number>;
  topics: Record<string, string>;
  isolation: string;
  /** When the connection's partition items were last written (they expire WAIT_TTL_MS after). */
  waitersWrittenAt: number;
  /** The ready message was sent (or is being sent): nothing more until it registers again. */
  told: boolean;
}

const partKey = (topicId: string, partition: number): string => `${topicId}#${partition}`;

const parsePartKey = (part: string): PartitionKey => {
  const at = part.lastIndexOf('#');
  return { topicId: part.slice(0, at), partition: Number(part.slice(at + 1)) };
};

/** Where a waiter's fetch would stop: the high watermark, or the last stable offset for read_committed. */
const readLimit = (state: PartitionState, isolation: string | undefined): number =>
  isolation === 'read_committed' ? lastStableOffset(state) : highWatermarkOf(state);

/** Whether a fetch from `offset` would answer at once: data past it, or the offset left the log. */
const hasAnswer = (state: PartitionState, offset: number, isolation: string | undefined): boolean =>
  offset < readLimit(state, isolation) || offset < state.logStartOffset;

export class Waiters {
  constructor(private readonly options: WaitersOptions) {}

  /**
   * Registers `connectionId` as waiting on these partitions (replacing what it registered before),
   * then checks them: when one already has data past its offset, the connection is told at once.
   * Unknown topics or partitions refuse the whole registration, and nothing is stored.
   */
  async register(connectionId: string, request: WaitRequest): Promise<NotifyReport> {
    const { store, catalog, clock } = this.options;
    if (request.partitions.length === 0 || request.partitions.length > MAX_WAIT_PARTITIONS)
      throw new SluiceError(
        'INVALID_REQUEST',
        `partitions must list 1 to ${MAX_WAIT_PARTITIONS} partitions to wait on`,
      );
    const isolation = request.isolationLevel ?? 'read_uncommitted';
    // Resolve every topic first: a registration naming an unknown partition changes nothing.
    const resolved = await Promise.all(
      request.partitions.map(async (p) => {
        const topic = await catalog.get(p.topic);
        checkPartition(topic, p.partition);
        return { ...p, topic };
      }),
    );
    const now = clock.now();
    const parts = resolved.map((p) => partKey(p.topic.topicId, p.partition));
    // The partition items only say who waits where: written when the connection first waits on a
    // partition, and again when their TTL is half gone, not on every registration.
    const previous = await this.registrationOf(connectionId);
    const fresh = previous !== undefined && now - previous.waitersWrittenAt < WAIT_TTL_MS / 2;
    const known = new Set(fresh ? previous.parts : []);
    const unwritten = resolved.filter((_, i) => !known.has(parts[i]!));
    // The oldest of them decides when all are written again.
    const waitersWrittenAt = fresh ? previous.waitersWrittenAt : now;
    if (unwritten.length > 0) {
      const expiresAt = Math.ceil((now + WAIT_TTL_MS) / 1000);
      await store.batchWrite({
        puts: unwritten.map((p) => ({
          ...keys.waiter(p.topic.topicId, p.partition, connectionId),
          expiresAt,
        })),
      });
    }
    const registration: Registration = {
      reg: this.options.newId(),
      parts: fresh ? [...new Set([...previous.parts, ...parts])] : parts,
      offsets: {},
      topics: {},
      isolation,
      waitersWrittenAt,
      told: false,
    };
    for (const [i, p] of resolved.entries()) {
      registration.offsets[parts[i]!] = p.fetchOffset;
      registration.topics[parts[i]!] = p.topic.name;
    }
    await store.put({
      ...keys.waitingConnection(connectionId),
      reg: registration.reg,
      parts: registration.parts,
      offs: registration.offsets,
      topics: registration.topics,
      ...(isolation === 'read_committed' ? { iso: isolation } : {}),
      wAt: waitersWrittenAt,
      expiresAt: Math.ceil((now + WAIT_TTL_MS) / 1000),
    });
    // The check, after the registration is stored (see the module comment).
    const ready: { topic: string; partition: number }[] = [];
    for (const p of resolved) {
      const state = await withCurrentTopic({ catalog }, p.topic.name, async (topic) => {
        const item = await store.get(keys.partitionState(topic.topicId, p.partition), { consistent: true });
        return item && item['deleted'] !== true ? decodePartitionState(item) : undefined;
      });
      if (!state || hasAnswer(state, p.fetchOffset, isolation))
        ready.push({ topic: p.topic.name, partition: p.partition });
    }
    if (ready.length === 0) return { notified: 0, gone: 0 };
    return this.tell(connectionId, registration, ready);
  }

  /**
   * The notifier: these partitions' items changed (a stream batch). Each connection waiting on one
   * that now has data past its offset is told once.
   */
  async partitionsAdvanced(changed: readonly PartitionKey[]): Promise<NotifyReport> {
    const { store } = this.options;
    const unique = new Map(changed.map((c) => [partKey(c.topicId, c.partition), c]));
    // connection → the changed partitions it has an item on
    const candidates = new Map<string, string[]>();
    for (const [part, { topicId, partition }] of unique) {
      const waiters = await queryAll(store, { pk: keys.waitersPk(topicId, partition), consistent: true });
      for (const w of waiters) {
        const connectionId = w.sk.slice(2);
        candidates.set(connectionId, [...(candidates.get(connectionId) ?? []), part]);
      }
    }
    const states = new Map<string, Promise<PartitionState | undefined>>();
    const stateOf = (part: string) => {
      let state = states.get(part);
      if (!state) {
        const { topicId, partition } = parsePartKey(part);
        state = store
          .get(keys.partitionState(topicId, partition), { consistent: true })
          .then((item) => (item && item['deleted'] !== true ? decodePartitionState(item) : undefined));
        states.set(part, state);
      }
      return state;
    };
    const report: NotifyReport = { notified: 0, gone: 0 };
    for (const [connectionId, changedParts] of candidates) {
      const current = await this.registrationOf(connectionId);
      // Told already (it fetches and registers again), or gone: its items wait for the next one.
      if (!current || current.told) continue;
      const ready: { topic: string; partition: number }[] = [];
      for (const part of changedParts) {
        const offset = current.offsets[part];
        if (offset === undefined) continue; // an item of a partition it no longer waits on
        const state = await stateOf(part);
        // A deleted topic answers its waiters too: their fetch will say UNKNOWN_TOPIC_OR_PARTITION.
        if (state && !hasAnswer(state, offset, current.isolation)) continue;
        ready.push({ topic: current.topics[part] ?? '', partition: parsePartKey(part).partition });
      }
      if (ready.length === 0) continue;
      const told = await this.tell(connectionId, current, ready);
      report.notified += told.notified;
      report.gone += told.gone;
    }
    return report;
  }

  /** The connection closed: its registration and partition items go. */
  async disconnect(connectionId: string): Promise<void> {
    const { store } = this.options;
    const current = await this.registrationOf(connectionId);
    await store.delete(keys.connectionCaller(connectionId));
    if (current) await this.forget(connectionId, current);
  }

  /**
   * Marks the registration `current` told (so only one sender tells the connection) and sends
   * `ready`. Nothing is sent when another sender took it first or the connection registered anew
   * meanwhile (its new registration was checked on its own).
   */
  private async tell(
    connectionId: string,
    current: Registration,
    partitions: { topic: string; partition: number }[],
  ): Promise<NotifyReport> {
    try {
      await this.options.store.update(keys.waitingConnection(connectionId), [{ set: 'told', value: true }], {
        condition: { and: [{ path: 'reg', op: '=', value: current.reg }, { notExists: 'told' }] },
      });
    } catch (error) {
      if (error instanceof ConditionFailedError) return { notified: 0, gone: 0 };
      throw error;
    }
    const message: ReadyMessage = { type: 'ready', partitions };
    const outcome = await this.options.notifier.post(connectionId, JSON.stringify(message));
    if (outcome === 'gone') {
      await this.options.store.delete(keys.connectionCaller(connectionId));
      await this.forget(connectionId, current);
      return { notified: 0, gone: 1 };
    }
    return { notified: 1, gone: 0 };
  }

  /** Removes a connection's registration and partition items (it closed, or is gone). */
  private async forget(connectionId: string, current: Registration): Promise<void> {
    const { store } = this.options;
    await store.delete(keys.waitingConnection(connectionId));
    await store.batchWrite({
      deletes: current.parts.map((part) => {
        const { topicId, partition } = parsePartKey(part);
        return keys.waiter(topicId, partition, connectionId);
      }),
    });
  }

  private async registrationOf(connectionId: string): Promise<Registration | undefined> {
    const item = await this.options.store.get(keys.waitingConnection(connectionId), { consistent: true });
    if (!item) return undefined;
    const record = (value: unknown): Record<string, unknown> =>
      value !== null && typeof value === 'object' && !Array.isArray(value)
        ? (value as Record<string, unknown>)
        : {};
    const offsets: Record<string, number> = {};
    for (const [k, v] of Object.entries(record(item['offs']))) offsets[k] = Number(v);
    const topics: Record<string, string> = {};
    for (const [k, v] of Object.entries(record(item['topics']))) topics[k] = String(v);
    return {
      reg: String(item['reg']),
      parts: Array.isArray(item['parts']) ? item['parts'].map(String) : [],
      offsets,
      topics,
      isolation: typeof item['iso'] === 'string' ? item['iso'] : 'read_uncommitted',
      waitersWrittenAt: Number(item['wAt'] ?? 0),
      told: item['told'] === true,
    };
  }
}

/** The partition state items among a stream batch's keys (`P#{topicId}#{partition}` / `STATE`). */
export const partitionKeysOf = (
  items: readonly { pk?: string | undefined; sk?: string | undefined }[],
): PartitionKey[] => {
  const out: PartitionKey[] = [];
  for (const { pk, sk } of items) {
    if (sk !== 'STATE' || !pk?.startsWith('P#')) continue;
    const at = pk.lastIndexOf('#');
    const partition = Number(pk.slice(at + 1));
    const topicId = pk.slice(2, at);
    if (topicId && Number.isSafeInteger(partition) && partition >= 0) out.push({ topicId, partition });
  }
  return out;
};
