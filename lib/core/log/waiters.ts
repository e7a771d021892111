/**
 * Waiting consumers (issue 28): a consumer that has caught up waits on a connection that costs nothing
 * while idle (an API Gateway WebSocket), registered per partition at the offset it would fetch next;
 * the notifier on the metadata table's stream tells it when the partition's log passes that offset.
 *
 * - Registered by the fetch. A consumer's POST /v1/fetch names its connection (and the token the
 *   connection was handed on its `hello`); each partition the fetch leaves at its high watermark (last
 *   stable offset for read_committed) is registered there: one item per (partition, connection) under
 *   `W#{topicId}#{partition}`, so the notifier finds a partition's waiters with one Query. A partition
 *   the client says is registered already at the offset it fetched, and that the fetch did not move,
 *   keeps its item and costs nothing. A `wait` frame registers the same way without a fetch.
 * - Register, then check. The items are stored first, and only then are those partitions read
 *   (consistently): a record committed before an item was stored is seen by the check (the fetch answer
 *   says so, or a `wait` frame is answered `ready`), one committed after it by the notifier, whose
 *   stream record comes after that commit and whose Query (strongly consistent) after the item's write.
 * - Told by one stream record. A registration at offset p is told by the stream record of its
 *   partition whose old → new high watermark (or LSO) range holds it: old ≤ p < new. A partition
 *   item's changes reach the stream once each, in order, and its shard's batches are handled in order,
 *   so the range of exactly one record holds p: each registration is told once, with no write to say
 *   so. The only second tell is the race above (a record that commits between the item's write and
 *   the check is seen by both); the client ignores a `ready` for an offset it has passed. At least
 *   once, twice only in that race.
 * - A connection that is gone (the client left without a goodbye, or closed) loses the items the
 *   notifier finds for it when a message to it fails; items nobody reads expire by TTL.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { SluiceError } from '../../../protocol/errors.js';
import type { Clock } from '../../ports/clock.js';
import type { ConnectionNotifier } from '../../ports/connections.js';
import type { Item, MetadataStore } from '../../ports/metadata-store.js';
import { keys } from '../keys.js';
import { queryAll } from '../../ports/query-all.js';
import { highWatermarkOf } from '../replication/replica-state.js';
import type { TopicRegistry } from '../topics/registry.js';
import type { Topic } from '../topics/model.js';
import type { IsolationLevel } from '../transactions/lso.js';
import { lastStableOffset } from '../transactions/lso.js';
import { checkPartition } from './context.js';
import type { PartitionFetch, PartitionFetchResult } from './fetch-request.js';
import { decodePartitionState } from './partition-codec.js';
import type { PartitionState } from './partition-state.js';

/** Partitions one registration may name (a fetch names at most as many). */
export const MAX_WAIT_PARTITIONS = 1000;
/**
 * How long a registration outlives its write: longer than API Gateway keeps a WebSocket open
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

/** A partition told: the offset it was registered at, which the log has now passed. */
export interface ReadyPartition {
  topic: string;
  partition: number;
  fetchOffset: number;
}

/** The message a waiting connection gets: the registrations whose partitions have data past them. */
export interface ReadyMessage {
  type: 'ready';
  partitions: ReadyPartition[];
}

/** One position to register: a resolved topic's partition at the offset its reader would fetch next. */
export interface WaitPosition {
  topic: Topic;
  partition: number;
  fetchOffset: number;
}

/**
 * A partition item's change, as the table's stream has it: the item before and after the write (the
 * notifier's trigger has both images). No new image: the item was removed.
 */
export interface PartitionChange {
  topicId: string;
  partition: number;
  oldImage?: Item;
  newImage?: Item;
}

export interface WaitersOptions {
  store: MetadataStore;
  catalog: TopicRegistry;
  clock: Clock;
  /** Where `ready` goes; absent (the fetch function, which only registers and checks), none is sent. */
  notifier?: ConnectionNotifier;
}

/** What one registration or one notifier pass did, for logs and tests. */
export interface NotifyReport {
  /** Connections sent a `ready` message. */
  notified: number;
  /** Connections found gone (their items removed). */
  gone: number;
}

const NOBODY: NotifyReport = { notified: 0, gone: 0 };

/** Where a waiter's fetch would stop: the high watermark, or the last stable offset for read_committed. */
const readLimit = (state: PartitionState, isolation: string | undefined): number =>
  isolation === 'read_committed' ? lastStableOffset(state) : highWatermarkOf(state);

/** Whether a fetch from `offset` would answer at once: data past it, or the offset left the log. */
const hasAnswer = (state: PartitionState, offset: number, isolation: string | undefined): boolean =>
  offset < readLimit(state, isolation) || offset < state.logStartOffset;

const live = (item: Item | undefined): PartitionState | undefined =>
  item && item['deleted'] !== true ? decodePartitionState(item) : undefined;

const hashToken = (token: string): string => createHash('sha256').update(token).digest('base64url');

const invalid = (message: string): SluiceError => new SluiceError('INVALID_REQUEST', message);

/** Connections whose token a warm function remembers (about 100 bytes each). */
const VERIFIED_CONNECTIONS = 10_000;

export class Waiters {
  /**
   * Connection → the token hash and caller this instance read last: a connection's token changes only
   * on a new hello, so a fetch repeating the token it presented before needs no read. A connection
   * closed meanwhile may then still be registered on; the notifier finds it gone (or TTL expires it).
   */
  private readonly verified = new Map<string, { tokenHash: string; principalArn: unknown }>();

  constructor(private readonly options: WaitersOptions) {}

  /**
   * A connection's `hello`: a new random token for it, kept only as a hash on the connection's item.
   * Whoever holds the token (only the connection is sent it) may register waits on the connection
   * through a fetch; a second `hello` replaces the token.
   */
  async hello(connectionId: string): Promise<string> {
    const token = randomBytes(24).toString('base64url');
    this.verified.delete(connectionId);
    await this.options.store.update(keys.connectionCaller(connectionId), [
      { set: 'tokenHash', value: hashToken(token) },
      { set: 'expiresAt', value: Math.ceil((this.options.clock.now() + WAIT_TTL_MS) / 1000) },
    ]);
    return token;
  }

  /**
   * Refuses a fetch naming a connection it may not register on: no such connection (or it never said
   * `hello`), a token that is not the connection's, or (with `principalArn`) a connection another
   * caller opened. One eventually consistent read (none when this instance verified the same token
   * before); a consistent one only when that finds no token (a `hello` a moment ago).
   */
  async verify(connectionId: string, token: string, principalArn?: string): Promise<void> {
    const { store } = this.options;
    const tokenHash = hashToken(token);
    const known = this.verified.get(connectionId);
    if (known?.tokenHash === tokenHash && (principalArn === undefined || known.principalArn === principalArn))
      return;
    const key = keys.connectionCaller(connectionId);
    let item = await store.get(key);
    if (typeof item?.['tokenHash'] !== 'string') item = await store.get(key, { consistent: true });
    const stored = item?.['tokenHash'];
    if (typeof stored !== 'string')
      throw invalid(`wait.connectionId ${connectionId} is not an open wait connection that said hello`);
    const given = Buffer.from(tokenHash);
    const expected = Buffer.from(stored);
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw invalid(`wait.token is not the token of connection ${connectionId}`);
    if (principalArn !== undefined && item?.['principalArn'] !== principalArn)
      throw invalid(`connection ${connectionId} was opened by another caller`);
    if (this.verified.size >= VERIFIED_CONNECTIONS) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(connectionId, { tokenHash, principalArn: item?.['principalArn'] });
  }

  /**
   * Registers `connectionId` at these positions (one item each, replacing the connection's earlier
   * one on the same partition), then checks them: the positions whose partition already has data past
   * them (or is gone) are returned, and the caller fetches again rather than wait for them.
   */
  async register(
    connectionId: string,
    positions: readonly WaitPosition[],
    isolation: IsolationLevel = 'read_uncommitted',
  ): Promise<ReadyPartition[]> {
    if (positions.length === 0) return [];
    const { store, clock } = this.options;
    const expiresAt = Math.ceil((clock.now() + WAIT_TTL_MS) / 1000);
    await store.batchWrite({
      puts: positions.map((p) => ({
        ...keys.waiter(p.topic.topicId, p.partition, connectionId),
        topic: p.topic.name,
        off: p.fetchOffset,
        ...(isolation === 'read_committed' ? { iso: isolation } : {}),
        expiresAt,
      })),
    });
    // The check, after the items are stored (see the module comment).
    const states = await Promise.all(
      positions.map((p) =>
        store.get(keys.partitionState(p.topic.topicId, p.partition), { consistent: true }).then(live),
      ),
    );
    return positions
      .filter((p, i) => {
        const state = states[i];
        // A deleted topic answers at once: the fetch says UNKNOWN_TOPIC_OR_PARTITION.
        return !state || hasAnswer(state, p.fetchOffset, isolation);
      })
      .map((p) => ({ topic: p.topic.name, partition: p.partition, fetchOffset: p.fetchOffset }));
  }

  /**
   * After a fetch that names a connection: registers each partition the fetch left at its read limit
   * (high watermark, or LSO for read_committed), except one the client says is registered at the
   * offset it fetched from and that the fetch did not move (its item stands), then checks the ones
   * written. Answers, per partition of the fetch, the offset it is registered at; none for a partition
   * not caught up, with an error, or that the check found data on (the client fetches again).
   */
  async registerFetched(
    connectionId: string,
    asked: readonly PartitionFetch[],
    results: readonly PartitionFetchResult[],
    isolation: IsolationLevel = 'read_uncommitted',
  ): Promise<(number | undefined)[]> {
    const waitingAt: (number | undefined)[] = results.map(() => undefined);
    const positions: (WaitPosition & { index: number })[] = [];
    for (const [index, result] of results.entries()) {
      if ('error' in result) continue;
      const limit =
        isolation === 'read_committed'
          ? (result.lastStableOffset ?? result.highWatermark)
          : result.highWatermark;
      if (result.nextOffset < limit) continue;
      const request = asked[index];
      if (request?.waitingAt === request?.offset && result.nextOffset === request?.offset) {
        waitingAt[index] = result.nextOffset;
        continue;
      }
      // The catalog caches topics: the fetch has just resolved these.
      const topic = await this.options.catalog.get(result.topic);
      positions.push({ topic, partition: result.partition, fetchOffset: result.nextOffset, index });
    }
    const ready = await this.register(connectionId, positions, isolation);
    const found = new Set(ready.map((r) => `${r.topic}\u0000${r.partition}`));
    for (const p of positions)
      if (!found.has(`${p.topic.name}\u0000${p.partition}`)) waitingAt[p.index] = p.fetchOffset;
    return waitingAt;
  }

  /**
   * A `wait` frame: registers these partitions (unknown topics or partitions refuse the whole frame,
   * and nothing is stored) and tells the connection at once of those the check finds data on.
   */
  async registerFrame(connectionId: string, request: WaitRequest): Promise<NotifyReport> {
    const { catalog } = this.options;
    if (request.partitions.length === 0 || request.partitions.length > MAX_WAIT_PARTITIONS)
      throw invalid(`partitions must list 1 to ${MAX_WAIT_PARTITIONS} partitions to wait on`);
    const positions = await Promise.all(
      request.partitions.map(async (p): Promise<WaitPosition> => {
        const topic = await catalog.get(p.topic);
        checkPartition(topic, p.partition);
        return { topic, partition: p.partition, fetchOffset: p.fetchOffset };
      }),
    );
    const ready = await this.register(connectionId, positions, request.isolationLevel);
    if (ready.length === 0) return NOBODY;
    return this.tell(connectionId, ready, []);
  }

  /**
   * The notifier: these partition items changed (one stream batch, in order). Each registration whose
   * offset one change's old → new high watermark (or LSO) range holds is told; every registration of a
   * partition whose topic is gone is told (its fetch says so). One Query per partition, no other read.
   */
  async partitionsChanged(changes: readonly PartitionChange[]): Promise<NotifyReport> {
    const { store } = this.options;
    const byPartition = new Map<string, { topicId: string; partition: number; changes: PartitionChange[] }>();
    for (const c of changes) {
      const id = `${c.topicId}#${c.partition}`;
      const entry = byPartition.get(id) ?? { topicId: c.topicId, partition: c.partition, changes: [] };
      entry.changes.push(c);
      byPartition.set(id, entry);
    }
    // connection → what to tell it, and its items seen (removed if it is gone)
    const told = new Map<string, { ready: ReadyPartition[]; items: Item[] }>();
    for (const { topicId, partition, changes: mine } of byPartition.values()) {
      // The ranges this batch moved the partition's limits over, per isolation level.
      const moved = mine.map((c) => ({ before: live(c.oldImage), after: live(c.newImage) }));
      const tells = (offset: number, isolation: string | undefined): boolean =>
        moved.some(({ before, after }) => {
          if (!after) return true; // deleted (or removed): the fetch will say so
          const from = before ? readLimit(before, isolation) : 0;
          return from <= offset && offset < readLimit(after, isolation);
        });
      // Most writes to a partition item (replica state, producer state) move neither limit: no Query.
      const movesAny = moved.some(
        ({ before, after }) =>
          !after ||
          !before ||
          highWatermarkOf(before) !== highWatermarkOf(after) ||
          lastStableOffset(before) !== lastStableOffset(after),
      );
      if (!movesAny) continue;
      const waiters = await queryAll(store, { pk: keys.waitersPk(topicId, partition), consistent: true });
      for (const w of waiters) {
        const offset = Number(w['off']);
        const isolation = typeof w['iso'] === 'string' ? w['iso'] : undefined;
        if (!Number.isSafeInteger(offset) || !tells(offset, isolation)) continue;
        const connectionId = w.sk.slice(2);
        const entry = told.get(connectionId) ?? { ready: [], items: [] };
        entry.ready.push({ topic: String(w['topic'] ?? ''), partition, fetchOffset: offset });
        entry.items.push(w);
        told.set(connectionId, entry);
      }
    }
    const report: NotifyReport = { notified: 0, gone: 0 };
    await Promise.all(
      [...told].map(async ([connectionId, { ready, items }]) => {
        const outcome = await this.tell(connectionId, ready, items);
        report.notified += outcome.notified;
        report.gone += outcome.gone;
      }),
    );
    return report;
  }

  /**
   * The connection closed: its token goes, so no fetch registers on it again. Its partition items are
   * not listed anywhere; the notifier removes them when it finds the connection gone, or TTL does.
   */
  async disconnect(connectionId: string): Promise<void> {
    this.verified.delete(connectionId);
    await this.options.store.delete(keys.connectionCaller(connectionId));
  }

  /** Sends `ready`; a connection that is gone loses its token and `items` (the ones found for it). */
  private async tell(
    connectionId: string,
    partitions: ReadyPartition[],
    items: Item[],
  ): Promise<NotifyReport> {
    const { notifier } = this.options;
    if (!notifier) throw new SluiceError('UNKNOWN_SERVER_ERROR', 'these waiters have no connection notifier');
    const message: ReadyMessage = { type: 'ready', partitions };
    const outcome = await notifier.post(connectionId, JSON.stringify(message));
    if (outcome !== 'gone') return { notified: 1, gone: 0 };
    await this.options.store.delete(keys.connectionCaller(connectionId));
    if (items.length > 0)
      await this.options.store.batchWrite({ deletes: items.map((i) => ({ pk: i.pk, sk: i.sk })) });
    return { notified: 0, gone: 1 };
  }
}

/** The partition state items among a stream batch's keys (`P#{topicId}#{partition}` / `STATE`). */
export const partitionKeyOf = (
  pk: string | undefined,
  sk: string | undefined,
): { topicId: string; partition: number } | undefined => {
  if (sk !== 'STATE' || !pk?.startsWith('P#')) return undefined;
  const at = pk.lastIndexOf('#');
  const partition = Number(pk.slice(at + 1));
  const topicId = pk.slice(2, at);
  return topicId && Number.isSafeInteger(partition) && partition >= 0 ? { topicId, partition } : undefined;
};
