/**
 * The Waiters class (lib/core/log/waiters.ts) driven directly over the memory stores, pinned exactly:
 * - hello: the connection item it writes (token hash, TTL to the second);
 * - verify: which reads it makes (none for a token this instance verified for the same caller, an
 *   eventually consistent one, a consistent one only when that finds no token), the errors it refuses
 *   with, and the cache of verified connections (its bound, the oldest evicted);
 * - register / registerFetched / registerFrame: the items written (key, topic, offset, isolation, TTL),
 *   the check's consistent reads, which positions it finds ready (high watermark, LSO, log start, a
 *   deleted partition), which fetched partitions are registered, and the partitions-count bounds;
 * - partitionsChanged: exactly which registrations one stream batch's old → new images tell, which
 *   changes cost a Query, the report's counts, and a gone connection's cleanup (its token and the
 *   items found for it, nothing else);
 * - partitionKeyOf: which stream keys are partition items.
 */
import { createHash } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { keys } from '../../../../lib/core/keys.js';
import { encodePartitionItem } from '../../../../lib/core/log/partition-codec.js';
import type { PartitionState } from '../../../../lib/core/log/partition-state.js';
import { newPartitionState } from '../../../../lib/core/log/partition-state.js';
import type { PartitionFetch, PartitionFetchResult } from '../../../../lib/core/log/fetch-request.js';
import type { PartitionChange, WaitPosition } from '../../../../lib/core/log/waiters.js';
import {
  MAX_WAIT_PARTITIONS,
  WAIT_TTL_MS,
  Waiters,
  partitionKeyOf,
} from '../../../../lib/core/log/waiters.js';
import type { Topic } from '../../../../lib/core/topics/model.js';
import type { ConnectionNotifier } from '../../../../lib/ports/connections.js';
import type { Item, ItemKey, MetadataStore, QueryInput } from '../../../../lib/ports/metadata-store.js';
import { SluiceError } from '../../../../protocol/errors.js';
import { memorySluice, TestClock } from '../../../support/log-support.js';

/** Not on a whole second: the TTL's rounding up shows. */
const T0 = 1_700_000_000_400;
const TTL = Math.ceil((T0 + WAIT_TTL_MS) / 1000);

const hashOf = (token: string) => createHash('sha256').update(token).digest('base64url');

/** PostToConnection in memory: the frames each connection got, and the connections that are gone. */
class Connections implements ConnectionNotifier {
  readonly frames = new Map<string, unknown[]>();
  readonly gone = new Set<string>();
  post(connectionId: string, message: string): Promise<'sent' | 'gone'> {
    if (this.gone.has(connectionId)) return Promise.resolve('gone');
    this.frames.set(connectionId, [...(this.frames.get(connectionId) ?? []), JSON.parse(message)]);
    return Promise.resolve('sent');
  }
}

interface Calls {
  gets: { key: ItemKey; consistent: boolean | undefined }[];
  queries: QueryInput[];
  batchWrites: { puts?: readonly Item[]; deletes?: readonly ItemKey[] }[];
  deletes: ItemKey[];
}

/**
 * The memory store, recording the waiters' calls; `lagging` keys read as absent on an eventually
 * consistent get (a write a replica has not seen yet).
 */
const spying = (inner: MetadataStore, calls: Calls, lagging: Set<string>): MetadataStore => ({
  get: (key, options) => {
    calls.gets.push({ key, consistent: options?.consistent });
    if (!options?.consistent && lagging.has(`${key.pk}/${key.sk}`)) return Promise.resolve(undefined);
    return inner.get(key, options);
  },
  put: (item, options) => inner.put(item, options),
  update: (key, actions, options) => inner.update(key, actions, options),
  delete: (key, options) => {
    calls.deletes.push(key);
    return inner.delete(key, options);
  },
  query: (input) => {
    calls.queries.push(input);
    return inner.query(input);
  },
  transact: (ops) => inner.transact(ops),
  batchWrite: (writes) => {
    calls.batchWrites.push(writes);
    return inner.batchWrite(writes);
  },
});

const setup = async (options: { notifier?: boolean; partitions?: number } = {}) => {
  const s = memorySluice({}, { clock: new TestClock(T0) });
  expect(
    (await s.http('POST', '/v1/topics', { name: 't', partitions: options.partitions ?? 2 })).status,
  ).toBe(201);
  const calls: Calls = { gets: [], queries: [], batchWrites: [], deletes: [] };
  const lagging = new Set<string>();
  const store = spying(s.store, calls, lagging);
  const connections = new Connections();
  const waiters = new Waiters({
    store,
    catalog: s.sluice.catalog,
    clock: s.clock,
    ...(options.notifier === false ? {} : { notifier: connections }),
  });
  const topic: Topic = await s.sluice.catalog.get('t');
  const { topicId } = topic;
  const reset = () => {
    calls.gets.length = 0;
    calls.queries.length = 0;
    calls.batchWrites.length = 0;
    calls.deletes.length = 0;
  };
  /** A partition's state with these fields changed. */
  const stateOf = (partition: number, changes: Partial<PartitionState>): PartitionState => ({
    ...newPartitionState('t', partition, ['s0']),
    ...changes,
  });
  const imageOf = (partition: number, changes: Partial<PartitionState>): Item =>
    encodePartitionItem(topicId, stateOf(partition, changes));
  /** Stores the partition item with these fields changed. */
  const setPartition = (partition: number, changes: Partial<PartitionState>) =>
    s.store.put(imageOf(partition, changes));
  /** A partition's registration items: connection → the item's attributes (its key left out). */
  const registrations = async (partition: number) =>
    Object.fromEntries(
      (await s.store.query({ pk: keys.waitersPk(topicId, partition) })).items.map(({ pk, sk, ...rest }) => {
        expect(pk).toBe(`W#${topicId}#${partition}`);
        return [sk, rest];
      }),
    );
  return {
    s,
    store,
    calls,
    lagging,
    connections,
    waiters,
    topic,
    topicId,
    reset,
    imageOf,
    setPartition,
    registrations,
  };
};

const refusal = async (work: Promise<unknown>) => {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SluiceError);
  const { code, message } = error as SluiceError;
  return { code, message };
};

describe('hello', () => {
  it('stores the token only as its hash, with a TTL three hours on, rounded up to the second', async () => {
    const { s, waiters } = await setup();
    const token = await waiters.hello('c1');
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(await s.store.get(keys.connectionCaller('c1'))).toEqual({
      pk: 'WC#c1',
      sk: 'CALLER',
      tokenHash: hashOf(token),
      expiresAt: TTL,
    });
  });
});

describe('verify', () => {
  it('reads once, eventually consistent, and not at all for a token it verified for the same caller', async () => {
    const { s, waiters, calls, reset } = await setup();
    await s.store.put({ ...keys.connectionCaller('c1'), tokenHash: hashOf('tok'), principalArn: 'arn:a' });
    await waiters.verify('c1', 'tok', 'arn:a');
    expect(calls.gets).toEqual([{ key: keys.connectionCaller('c1'), consistent: undefined }]);
    reset();
    await waiters.verify('c1', 'tok', 'arn:a');
    await waiters.verify('c1', 'tok');
    expect(calls.gets).toEqual([]);
    // Another caller is refused from the cache as from the store.
    expect(await refusal(waiters.verify('c1', 'tok', 'arn:b'))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'connection c1 was opened by another caller',
    });
    // A wrong token is not taken from the cache.
    expect(await refusal(waiters.verify('c1', 'other', 'arn:a'))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'wait.token is not the token of connection c1',
    });
  });

  it('a verification without a caller caches none: a caller named later is read and checked', async () => {
    const { s, waiters, calls, reset } = await setup();
    await s.store.put({ ...keys.connectionCaller('c1'), tokenHash: hashOf('tok'), principalArn: 'arn:a' });
    await waiters.verify('c1', 'tok');
    reset();
    await waiters.verify('c1', 'tok', 'arn:a');
    expect(calls.gets).toEqual([]);
    expect(await refusal(waiters.verify('c1', 'tok', 'arn:b'))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'connection c1 was opened by another caller',
    });
  });

  it('reads again, consistently, only when the eventually consistent read finds no token', async () => {
    const { waiters, calls, lagging } = await setup();
    const token = await waiters.hello('c1');
    lagging.add('WC#c1/CALLER');
    await waiters.verify('c1', token);
    expect(calls.gets).toEqual([
      { key: keys.connectionCaller('c1'), consistent: undefined },
      { key: keys.connectionCaller('c1'), consistent: true },
    ]);
  });

  it('refuses a connection without a token, a wrong token (of any length) and another caller', async () => {
    const { s, waiters, calls } = await setup();
    expect(await refusal(waiters.verify('c0', 'tok'))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'wait.connectionId c0 is not an open wait connection that said hello',
    });
    expect(calls.gets.map((g) => g.consistent)).toEqual([undefined, true]);
    await s.store.put({ ...keys.connectionCaller('c1'), tokenHash: 'short' });
    expect(await refusal(waiters.verify('c1', 'tok'))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'wait.token is not the token of connection c1',
    });
    await s.store.put({ ...keys.connectionCaller('c2'), tokenHash: hashOf('tok'), principalArn: 'arn:a' });
    expect(await refusal(waiters.verify('c2', 'tok', 'arn:b'))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'connection c2 was opened by another caller',
    });
    // Without a caller to check, the connection's caller does not matter.
    await waiters.verify('c2', 'tok');
    await s.store.put({ ...keys.connectionCaller('c3'), tokenHash: hashOf('tok') });
    expect(await refusal(waiters.verify('c3', 'tok', 'arn:a'))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'connection c3 was opened by another caller',
    });
  });

  it('remembers 10,000 connections: the oldest is forgotten for the one past that, and only then', async () => {
    const { s, waiters, calls, reset } = await setup();
    const hash = hashOf('tok');
    const N = 10_000;
    for (let i = 0; i <= N; i++) await s.store.put({ ...keys.connectionCaller(`c${i}`), tokenHash: hash });
    await waiters.verify('c0', 'tok');
    await waiters.verify('c1', 'tok');
    reset();
    await waiters.verify('c0', 'tok');
    expect(calls.gets).toEqual([]);
    for (let i = 2; i < N; i++) await waiters.verify(`c${i}`, 'tok');
    reset();
    // 10,000 remembered: all without a read.
    await waiters.verify('c0', 'tok');
    await waiters.verify(`c${N - 1}`, 'tok');
    expect(calls.gets).toEqual([]);
    await waiters.verify(`c${N}`, 'tok');
    reset();
    await waiters.verify('c1', 'tok');
    expect(calls.gets).toEqual([]);
    await waiters.verify('c0', 'tok');
    expect(calls.gets).toEqual([{ key: keys.connectionCaller('c0'), consistent: undefined }]);
  });
});

describe('register', () => {
  let t: Awaited<ReturnType<typeof setup>>;
  beforeEach(async () => {
    t = await setup({ partitions: 4 });
  });
  const at = (partition: number, fetchOffset: number): WaitPosition => ({
    topic: t.topic,
    partition,
    fetchOffset,
  });

  it('registers nothing, with no write, for no positions', async () => {
    expect(await t.waiters.register('c1', [])).toEqual([]);
    expect(t.calls.batchWrites).toEqual([]);
    expect(t.calls.gets).toEqual([]);
  });

  it('writes one item per position (read_committed noted), then reads each partition consistently', async () => {
    await t.waiters.register('c1', [at(0, 3), at(1, 0)], 'read_committed');
    await t.waiters.register('c2', [at(0, 4)]);
    await t.waiters.register('c3', [at(0, 5)], 'read_uncommitted');
    expect(await t.registrations(0)).toEqual({
      'C#c1': { topic: 't', off: 3, iso: 'read_committed', expiresAt: TTL },
      'C#c2': { topic: 't', off: 4, expiresAt: TTL },
      'C#c3': { topic: 't', off: 5, expiresAt: TTL },
    });
    expect(await t.registrations(1)).toEqual({
      'C#c1': { topic: 't', off: 0, iso: 'read_committed', expiresAt: TTL },
    });
    expect(t.calls.gets.slice(0, 2)).toEqual([
      { key: keys.partitionState(t.topicId, 0), consistent: true },
      { key: keys.partitionState(t.topicId, 1), consistent: true },
    ]);
  });

  it('finds ready the positions below the read limit, below the log start, or on a deleted partition', async () => {
    // Partition 0: high watermark 10, a transaction open from 5 (LSO 5), the log starting at 2.
    await t.setPartition(0, { highWatermark: 10, ongoingTransactions: { '7': 5 }, logStartOffset: 2 });
    // Partition 1: the LSO (1) below the log start (4): records deleted past an open transaction.
    await t.setPartition(1, { highWatermark: 10, ongoingTransactions: { '7': 1 }, logStartOffset: 4 });
    // Partition 2: deleted.
    await t.setPartition(2, { highWatermark: 3, deleted: true });
    const positions = [at(0, 4), at(0, 5), at(0, 9), at(0, 10), at(1, 2), at(1, 4), at(2, 3), at(2, 7)];
    const ready = (level?: 'read_committed' | 'read_uncommitted') =>
      t.waiters.register('c1', positions, level).then((r) => r.map((p) => `${p.partition}@${p.fetchOffset}`));
    expect(await ready()).toEqual(['0@4', '0@5', '0@9', '1@2', '1@4', '2@3', '2@7']);
    expect(await ready('read_committed')).toEqual(['0@4', '1@2', '2@3', '2@7']);
    expect(await t.waiters.register('c1', [at(3, 0)])).toEqual([]);
    expect(await t.waiters.register('c1', [at(0, 1)])).toEqual([
      { topic: 't', partition: 0, fetchOffset: 1 },
    ]);
  });
});

describe('registerFetched', () => {
  let t: Awaited<ReturnType<typeof setup>>;
  beforeEach(async () => {
    t = await setup({ partitions: 4 });
  });
  const fetched = (
    partition: number,
    nextOffset: number,
    highWatermark: number,
    lastStableOffset?: number,
  ): PartitionFetchResult => ({
    topic: 't',
    partition,
    batches: [],
    nextOffset,
    highWatermark,
    logStartOffset: 0,
    ...(lastStableOffset === undefined ? {} : { lastStableOffset }),
  });
  const asked = (partition: number, offset: number, waitingAt?: number): PartitionFetch => ({
    topic: 't',
    partition,
    offset,
    maxBytes: 1000,
    ...(waitingAt === undefined ? {} : { waitingAt }),
  });

  it('registers the partitions left at the high watermark, or at the LSO for read_committed', async () => {
    await t.setPartition(0, { highWatermark: 10, ongoingTransactions: { '7': 5 } });
    await t.setPartition(1, { highWatermark: 6 });
    await t.setPartition(2, { highWatermark: 4 });
    const results = [fetched(0, 5, 10, 5), fetched(1, 6, 6), fetched(2, 4, 4, 4)];
    const requests = [asked(0, 5), asked(1, 6), asked(2, 4)];
    expect(await t.waiters.registerFetched('c1', requests, results)).toEqual([undefined, 6, 4]);
    expect(await t.waiters.registerFetched('c2', requests, results, 'read_committed')).toEqual([5, 6, 4]);
    expect(await t.registrations(0)).toEqual({
      'C#c2': { topic: 't', off: 5, iso: 'read_committed', expiresAt: TTL },
    });
    // No LSO in the answer: the high watermark is the limit.
    expect(
      await t.waiters.registerFetched('c3', [asked(1, 6)], [fetched(1, 6, 6)], 'read_committed'),
    ).toEqual([6]);
  });

  it('writes nothing for a partition answered with an error', async () => {
    const error: PartitionFetchResult = {
      topic: 't',
      partition: 0,
      error: new SluiceError('UNKNOWN_TOPIC_OR_PARTITION', 'gone'),
    };
    expect(await t.waiters.registerFetched('c1', [asked(0, 0)], [error])).toEqual([undefined]);
    expect(t.calls.batchWrites).toEqual([]);
    expect(await t.registrations(0)).toEqual({});
  });

  it('keeps the item of a partition registered at the offset fetched and not moved, and only that', async () => {
    await t.setPartition(0, { highWatermark: 5 });
    await t.setPartition(1, { highWatermark: 7 });
    await t.setPartition(2, { highWatermark: 3 });
    const results = [fetched(0, 5, 5), fetched(1, 7, 7), fetched(2, 3, 3)];
    // 0: registered at 5 and fetched from 5: kept. 1: registered at 5, fetched from 5 and moved to 7.
    // 2: registered at 1, fetched from 3.
    const requests = [asked(0, 5, 5), asked(1, 5, 5), asked(2, 3, 1)];
    expect(await t.waiters.registerFetched('c1', requests, results)).toEqual([5, 7, 3]);
    expect(
      t.calls.batchWrites.flatMap((w) => (w.puts ?? []).map((i) => `${i.pk}@${String(i['off'])}`)),
    ).toEqual([`W#${t.topicId}#1@7`, `W#${t.topicId}#2@3`]);
  });

  it('registers a result the request list does not cover', async () => {
    await t.setPartition(0, { highWatermark: 5 });
    expect(await t.waiters.registerFetched('c1', [], [fetched(0, 5, 5)])).toEqual([5]);
    expect(await t.registrations(0)).toEqual({ 'C#c1': { topic: 't', off: 5, expiresAt: TTL } });
  });

  it('answers no offset for a partition the check finds data on', async () => {
    await t.setPartition(0, { highWatermark: 8 });
    expect(await t.waiters.registerFetched('c1', [asked(0, 5)], [fetched(0, 5, 5)])).toEqual([undefined]);
    expect(await t.registrations(0)).toEqual({ 'C#c1': { topic: 't', off: 5, expiresAt: TTL } });
  });
});

describe('registerFrame', () => {
  it('refuses no partitions and more than 1,000, storing nothing; takes 1,000', async () => {
    const t = await setup({ partitions: MAX_WAIT_PARTITIONS + 1 });
    const refused = {
      code: 'INVALID_REQUEST',
      message: 'partitions must list 1 to 1000 partitions to wait on',
    };
    const partitions = (n: number) =>
      Array.from({ length: n }, (_, p) => ({ topic: 't', partition: p, fetchOffset: 0 }));
    expect(await refusal(t.waiters.registerFrame('c1', { partitions: [] }))).toEqual(refused);
    expect(await refusal(t.waiters.registerFrame('c1', { partitions: partitions(1001) }))).toEqual(refused);
    expect(t.calls.batchWrites).toEqual([]);
    expect(await t.waiters.registerFrame('c1', { partitions: partitions(1000) })).toEqual({
      notified: 0,
      gone: 0,
    });
    expect(t.calls.batchWrites.flatMap((w) => w.puts ?? [])).toHaveLength(1000);
  });

  it('tells the connection at once of the partitions the check finds data on', async () => {
    const t = await setup();
    await t.setPartition(1, { highWatermark: 4 });
    const partitions = [
      { topic: 't', partition: 0, fetchOffset: 0 },
      { topic: 't', partition: 1, fetchOffset: 2 },
    ];
    expect(await t.waiters.registerFrame('c1', { partitions })).toEqual({ notified: 1, gone: 0 });
    expect(t.connections.frames.get('c1')).toEqual([
      { type: 'ready', partitions: [{ topic: 't', partition: 1, fetchOffset: 2 }] },
    ]);
    expect(t.calls.deletes).toEqual([]);
    // Nothing ready: no frame.
    expect(await t.waiters.registerFrame('c2', { partitions: [partitions[0]!] })).toEqual({
      notified: 0,
      gone: 0,
    });
    expect(t.connections.frames.get('c2')).toBeUndefined();
  });

  it('a gone connection loses its token; the items just written are left to the notifier and TTL', async () => {
    const t = await setup();
    await t.waiters.hello('c1');
    await t.setPartition(0, { highWatermark: 4 });
    t.connections.gone.add('c1');
    t.reset();
    expect(
      await t.waiters.registerFrame('c1', { partitions: [{ topic: 't', partition: 0, fetchOffset: 1 }] }),
    ).toEqual({ notified: 0, gone: 1 });
    expect(t.calls.deletes).toEqual([keys.connectionCaller('c1')]);
    expect(t.calls.batchWrites.filter((w) => w.deletes !== undefined)).toEqual([]);
    expect(await t.s.store.get(keys.connectionCaller('c1'))).toBeUndefined();
  });

  it('without a notifier, a ready partition is a server error', async () => {
    const t = await setup({ notifier: false });
    await t.setPartition(0, { highWatermark: 4 });
    expect(
      await refusal(
        t.waiters.registerFrame('c1', { partitions: [{ topic: 't', partition: 0, fetchOffset: 1 }] }),
      ),
    ).toEqual({ code: 'UNKNOWN_SERVER_ERROR', message: 'these waiters have no connection notifier' });
  });
});

describe('partitionsChanged', () => {
  let t: Awaited<ReturnType<typeof setup>>;
  beforeEach(async () => {
    t = await setup();
  });
  /** Registration items written as the fetch writes them. */
  const registered = async (
    partition: number,
    entries: [string, number, ('read_committed' | undefined)?][],
  ) => {
    await t.s.store.batchWrite({
      puts: entries.map(([connectionId, off, iso]) => ({
        ...keys.waiter(t.topicId, partition, connectionId),
        topic: 't',
        off,
        ...(iso ? { iso } : {}),
        expiresAt: TTL,
      })),
    });
  };
  const change = (
    partition: number,
    before: Partial<PartitionState> | undefined,
    after: Partial<PartitionState> | undefined,
  ): PartitionChange => ({
    topicId: t.topicId,
    partition,
    ...(before ? { oldImage: t.imageOf(partition, before) } : {}),
    ...(after ? { newImage: t.imageOf(partition, after) } : {}),
  });
  /** Connection → the ready frames' partitions as `partition@offset`. */
  const told = () =>
    Object.fromEntries(
      [...t.connections.frames].map(([c, frames]) => [
        c,
        frames.flatMap((f) =>
          (f as { partitions: { topic: string; partition: number; fetchOffset: number }[] }).partitions.map(
            (p) => `${p.topic}-${p.partition}@${p.fetchOffset}`,
          ),
        ),
      ]),
    );

  it('tells the registrations in the old → new high watermark range, one frame per connection', async () => {
    await registered(0, [
      ['a', 2],
      ['b', 3],
      ['c', 5],
      ['d', 6],
    ]);
    await registered(1, [['a', 0]]);
    const report = await t.waiters.partitionsChanged([
      change(0, { highWatermark: 3 }, { highWatermark: 6 }),
      change(1, { highWatermark: 0 }, { highWatermark: 1 }),
    ]);
    expect(report).toEqual({ notified: 3, gone: 0 });
    expect(told()).toEqual({ a: ['t-1@0'], b: ['t-0@3'], c: ['t-0@5'] });
    expect(t.calls.queries).toEqual([
      { pk: keys.waitersPk(t.topicId, 0), consistent: true },
      { pk: keys.waitersPk(t.topicId, 1), consistent: true },
    ]);
  });

  it('tells registrations by their isolation: read_committed ones by the LSO', async () => {
    await registered(0, [
      ['u', 5],
      ['r', 5, 'read_committed'],
    ]);
    // The high watermark moves past an open transaction: the LSO stays at 5.
    await t.waiters.partitionsChanged([
      change(
        0,
        { highWatermark: 5, ongoingTransactions: { '7': 5 } },
        { highWatermark: 8, ongoingTransactions: { '7': 5 } },
      ),
    ]);
    expect(told()).toEqual({ u: ['t-0@5'] });
    // The transaction ends: the LSO moves to the high watermark, which does not move.
    await t.waiters.partitionsChanged([
      change(0, { highWatermark: 8, ongoingTransactions: { '7': 5 } }, { highWatermark: 8 }),
    ]);
    expect(told()).toEqual({ u: ['t-0@5'], r: ['t-0@5'] });
    expect(t.calls.queries).toHaveLength(2);
  });

  it('queries nothing for a batch moving neither limit, and queries for one change of several that does', async () => {
    await registered(0, [['a', 3]]);
    const still = change(0, { highWatermark: 3, leaderEpoch: 1 }, { highWatermark: 3, leaderEpoch: 2 });
    expect(await t.waiters.partitionsChanged([still])).toEqual({ notified: 0, gone: 0 });
    expect(t.calls.queries).toEqual([]);
    const moving = change(0, { highWatermark: 3 }, { highWatermark: 4 });
    expect(await t.waiters.partitionsChanged([still, moving])).toEqual({ notified: 1, gone: 0 });
    expect(await t.waiters.partitionsChanged([moving, still])).toEqual({ notified: 1, gone: 0 });
    expect(told()).toEqual({ a: ['t-0@3', 't-0@3'] });
  });

  it('tells every registration of a removed or deleted partition item, and from 0 for a new one', async () => {
    await registered(0, [
      ['a', 0],
      ['b', 9],
    ]);
    await registered(1, [
      ['a', 0],
      ['c', 2],
    ]);
    await t.waiters.partitionsChanged([change(0, { highWatermark: 3 }, undefined)]);
    expect(told()).toEqual({ a: ['t-0@0'], b: ['t-0@9'] });
    t.connections.frames.clear();
    await t.waiters.partitionsChanged([change(0, { highWatermark: 3 }, { highWatermark: 3, deleted: true })]);
    expect(told()).toEqual({ a: ['t-0@0'], b: ['t-0@9'] });
    t.connections.frames.clear();
    await t.waiters.partitionsChanged([change(1, undefined, { highWatermark: 1 })]);
    expect(told()).toEqual({ a: ['t-1@0'] });
  });

  it('a registration item without a topic is told with an empty one', async () => {
    await t.s.store.put({ ...keys.waiter(t.topicId, 0, 'a'), off: 0 });
    await t.waiters.partitionsChanged([change(0, { highWatermark: 0 }, { highWatermark: 1 })]);
    expect(told()).toEqual({ a: ['-0@0'] });
  });

  it('counts the connections told and gone; a gone one loses its token and the items found for it', async () => {
    await t.waiters.hello('gone');
    await registered(0, [
      ['a', 0],
      ['b', 1],
      ['gone', 0],
    ]);
    await registered(1, [
      ['gone', 0],
      ['gone2', 7],
    ]);
    t.connections.gone.add('gone');
    t.connections.gone.add('gone2');
    t.reset();
    const report = await t.waiters.partitionsChanged([
      change(0, { highWatermark: 0 }, { highWatermark: 2 }),
      change(1, { highWatermark: 0 }, { highWatermark: 1 }),
    ]);
    expect(report).toEqual({ notified: 2, gone: 1 });
    expect(t.calls.deletes).toEqual([keys.connectionCaller('gone')]);
    expect(t.calls.batchWrites).toEqual([
      { deletes: [keys.waiter(t.topicId, 0, 'gone'), keys.waiter(t.topicId, 1, 'gone')] },
    ]);
    expect(await t.s.store.get(keys.connectionCaller('gone'))).toBeUndefined();
    expect(Object.keys(await t.registrations(0))).toEqual(['C#a', 'C#b']);
    expect(Object.keys(await t.registrations(1))).toEqual(['C#gone2']);
  });
});

describe('partitionKeyOf', () => {
  it.each([
    ['P#t1#0', 'STATE', { topicId: 't1', partition: 0 }],
    ['P#a#b#12', 'STATE', { topicId: 'a#b', partition: 12 }],
    ['P#t1#0', 'B#00000000000000000000', undefined],
    ['P#t1#0', undefined, undefined],
    ['W#t1#0', 'STATE', undefined],
    [undefined, 'STATE', undefined],
    ['P##0', 'STATE', undefined],
    ['P#t1#x', 'STATE', undefined],
    ['P#t1#1.5', 'STATE', undefined],
    ['P#t1#-1', 'STATE', undefined],
  ])('%s / %s', (pk, sk, expected) => {
    expect(partitionKeyOf(pk, sk)).toEqual(expected);
  });
});
