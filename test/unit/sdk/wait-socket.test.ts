/**
 * Waiting on a WebSocket (lib/core/log/waiters.ts, lib/http/wait-socket.ts) on the memory stores,
 * with the SDK consumer waiting over an in-process channel and the stream emulated by the local
 * stack's change feed (local/stream-emulation.ts):
 * - the race: a woken consumer never misses a record that arrived while it was being woken. The
 *   interleavings are injected at the registration's write, not timed: a record committed (and its
 *   stream batch handled) after the consumer's empty fetch but before its registration is stored is
 *   found by the check after storing; one committed between the registration and the check is told
 *   once, not twice;
 * - hostile frames: malformed JSON, unknown actions and fields, too many partitions, a negative
 *   offset, unknown topics, topics the caller may not read: an error frame each, nothing stored;
 * - stale connections: a message to a connection that is gone removes its registration, as
 *   $disconnect does.
 */
import { describe, expect, it } from 'vitest';
import { encodeRecordBatch } from '../../../protocol/record-batch/index.js';
import { inProcessFetch } from '../../../functions/in-process-fetch.js';
import type { Authorizer } from '../../../lib/auth/acl.js';
import { keys } from '../../../lib/core/keys.js';
import { WaitSocket, notifyStreamBatch } from '../../../lib/http/wait-socket.js';
import type { WebSocketEvent } from '../../../lib/http/wait-socket.js';
import type { ConnectionNotifier } from '../../../lib/ports/connections.js';
import type { MetadataStore } from '../../../lib/ports/metadata-store.js';
import { withChangeFeed } from '../../../local/stream-emulation.js';
import type { ChangeFeed } from '../../../local/stream-emulation.js';
import type { ConsumedRecord } from '../../../sdk/index.js';
import { SluiceClient } from '../../../sdk/index.js';
import type { WaitChannel, WaitOutcome } from '../../../sdk/wait-socket.js';
import { memorySluice } from '../../support/log-support.js';

const BATCH = { 'content-type': 'application/vnd.kafka.record-batch' };

/** PostToConnection over an in-process map: each connection's frames, and connections that are gone. */
class Connections implements ConnectionNotifier {
  readonly frames = new Map<string, unknown[]>();
  readonly gone = new Set<string>();
  readonly listeners = new Map<string, (frame: { type: string }) => void>();
  post(connectionId: string, message: string): Promise<'sent' | 'gone'> {
    if (this.gone.has(connectionId)) return Promise.resolve('gone');
    const frame = JSON.parse(message) as { type: string };
    this.frames.set(connectionId, [...(this.frames.get(connectionId) ?? []), frame]);
    this.listeners.get(connectionId)?.(frame);
    return Promise.resolve('sent');
  }
  readies(connectionId: string): number {
    return (this.frames.get(connectionId) ?? []).filter((f) => (f as { type: string }).type === 'ready')
      .length;
  }
}

interface Hooks {
  /** Runs before a registration (its offsets) is stored. */
  beforeRegister?: () => Promise<void>;
  /** Runs after it is stored, before the check reads the partitions. */
  afterRegister?: () => Promise<void>;
}

/** A Sluice whose stream feeds the notifier, with hooks at the registration's write. */
const setup = async (authorizer?: Authorizer) => {
  const hooks: Hooks = {};
  let feed: ChangeFeed | undefined;
  const s = memorySluice(
    {},
    {
      wrapStore: (inner) => {
        const fed = withChangeFeed(inner);
        feed = fed.feed;
        const store: MetadataStore = {
          ...fed.store,
          put: async (item, options) => {
            const registering = item.pk.startsWith('WC#') && item.sk === 'WAIT';
            if (registering) await hooks.beforeRegister?.();
            await fed.store.put(item, options);
            if (registering) await hooks.afterRegister?.();
          },
        };
        return store;
      },
    },
  );
  const connections = new Connections();
  const { waiters } = s.sluice.waiting(connections);
  const socket = new WaitSocket({
    waiters,
    notifier: connections,
    store: s.store,
    clock: s.clock,
    ...(authorizer ? { authorizer } : {}),
  });
  feed!.handler = (records) => notifyStreamBatch(waiters, records);
  expect((await s.http('POST', '/v1/topics', { name: 't', partitions: 2 })).status).toBe(201);
  let n = 0;
  const produce = async (partition: number, value = `v${n++}`) => {
    const r = await s.http(
      'POST',
      `/v1/topics/t/partitions/${partition}/batches`,
      encodeRecordBatch([{ key: null, value: new Uint8Array(Buffer.from(value)), timestamp: 1 }]),
      BATCH,
    );
    expect(r.status).toBe(200);
    return value;
  };
  const send = (connectionId: string, body: unknown, routeKey = 'wait') =>
    socket.handle({
      requestContext: { routeKey, connectionId },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    } satisfies WebSocketEvent);
  return { ...s, hooks, feed: feed!, connections, waiters, socket, produce, send };
};

type Setup = Awaited<ReturnType<typeof setup>>;

/** The SDK's wait channel over the socket in this process: connection `id`. */
const channelOf = (s: Setup, id: string): WaitChannel & { registrations: number } => {
  const channel = {
    registrations: 0,
    wait: (frame: unknown, { signal, timeoutMs }: { signal: AbortSignal; timeoutMs: number }) =>
      new Promise<WaitOutcome>((resolve) => {
        const timer = setTimeout(() => done('timeout'), timeoutMs);
        const done = (outcome: WaitOutcome) => {
          clearTimeout(timer);
          s.connections.listeners.delete(id);
          resolve(outcome);
        };
        signal.addEventListener('abort', () => done('aborted'), { once: true });
        s.connections.listeners.set(id, (f) => done(f.type === 'ready' ? 'ready' : 'unavailable'));
        channel.registrations += 1;
        void s.send(id, frame);
      }),
    close: () => undefined,
  };
  return channel;
};

/** Consumes until `count` records arrived (or fails after `ms`): what it got, in order per partition. */
const consume = async (
  s: Setup,
  channel: WaitChannel,
  count: number,
  ms = 4_000,
  requests: { fetches: number } = { fetches: 0 },
  socketDirectAfterMs?: number,
) => {
  const inner = inProcessFetch(s.sluice.router());
  const client = new SluiceClient({
    url: 'http://sluice.internal',
    fetch: (input, init) => {
      if (String(input).endsWith('/v1/fetch')) requests.fetches += 1;
      return inner(input, init);
    },
    waitChannel: () => Promise.resolve(channel),
  });
  // A wake that is missed stays missed for the whole test: the re-check is far beyond it.
  const consumer = client.consumer({
    socketRecheckMs: 600_000,
    maxWaitMs: 20_000,
    ...(socketDirectAfterMs === undefined ? {} : { socketDirectAfterMs }),
  });
  consumer.subscribe({ topics: ['t'], fromBeginning: true });
  const got: ConsumedRecord[] = [];
  let reached: () => void = () => {};
  const enough = new Promise<void>((resolve) => (reached = resolve));
  const running = consumer.run({
    eachMessage: async ({ message }) => {
      got.push(message);
      if (got.length >= count) reached();
    },
  });
  const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms));
  const outcome = await Promise.race([enough.then(() => 'done' as const), timer]);
  await consumer.stop();
  await running;
  return { outcome, got };
};

describe('waiting on a WebSocket: the wake race', () => {
  it('finds a record committed (and its stream batch handled) before the registration was stored', async () => {
    const s = await setup();
    const sent: string[] = [];
    let injected = 0;
    // After each empty fetch, before the registration is stored: a record commits and the notifier
    // handles its stream batch, finding nobody waiting. Only the check after storing can see it.
    s.hooks.beforeRegister = async () => {
      if (injected >= 6) return;
      sent.push(await s.produce(injected++ % 2));
      await s.feed.drained();
      await new Promise((r) => setImmediate(r));
      await s.feed.drained();
    };
    const channel = channelOf(s, 'c1');
    const { outcome, got } = await consume(s, channel, 6);
    expect(outcome).toBe('done');
    expect(got.map((r) => Buffer.from(r.value!).toString()).sort()).toEqual([...sent].sort());
    // Every record came after a registration (6 rounds), and each wake was the check's.
    expect(channel.registrations).toBeGreaterThanOrEqual(6);
    expect(s.connections.readies('c1')).toBe(6);
  });

  it('tells once a consumer whose record commits between its registration and the check', async () => {
    const s = await setup();
    const sent: string[] = [];
    let injected = 0;
    // Registered, not yet checked: the record commits; both the check and the notifier see it.
    s.hooks.afterRegister = async () => {
      if (injected >= 6) return;
      sent.push(await s.produce(injected++ % 2));
      await s.feed.drained();
      await new Promise((r) => setImmediate(r));
      await s.feed.drained();
    };
    const channel = channelOf(s, 'c1');
    const { outcome, got } = await consume(s, channel, 6);
    expect(outcome).toBe('done');
    expect(got.map((r) => Buffer.from(r.value!).toString()).sort()).toEqual([...sent].sort());
    // One ready per registration that had data, never two for the same one.
    expect(s.connections.readies('c1')).toBe(6);
  });

  for (const [directAfterMs, fetchesPerWake] of [
    [0, 1],
    [600_000, 2],
  ] as const)
    it(`wakes a caught-up consumer from the stream when a record commits later: ${fetchesPerWake} fetch(es) a wake when socketDirectAfterMs is ${directAfterMs}`, async () => {
      const s = await setup();
      const channel = channelOf(s, 'c1');
      const requests = { fetches: 0 };
      const consumed = consume(s, channel, 3, 4_000, requests, directAfterMs);
      const sent: string[] = [];
      for (let i = 0; i < 3; i++) {
        // Wait until the consumer is registered at the end of the log and not yet told, then produce.
        const topicId = (await s.sluice.catalog.get('t')).topicId;
        for (let t = 0; t < 400; t++) {
          const item = await s.store.get(keys.waitingConnection('c1'));
          const offs = item?.['offs'] as Record<string, number> | undefined;
          if (item && item['told'] !== true && offs?.[`${topicId}#1`] === i) break;
          await new Promise((r) => setTimeout(r, 5));
        }
        sent.push(await s.produce(1));
      }
      const { outcome, got } = await consumed;
      expect(outcome).toBe('done');
      expect(got.map((r) => Buffer.from(r.value!).toString())).toEqual(sent);
      // The first fetch finds the log empty. After a long wait (sparse records) a wake's fetch reads
      // the record and, its answer at the high watermark, the consumer registers again at once; after
      // a short one it fetches once more (empty here) first, as records that come often would be found.
      // (The last wake's second fetch may not come before the consumer stops.)
      if (fetchesPerWake === 1) expect(requests.fetches).toBe(1 + sent.length);
      else expect(requests.fetches).toBeGreaterThanOrEqual(2 * sent.length);
      expect(channel.registrations).toBeGreaterThanOrEqual(sent.length);
      expect(channel.registrations).toBeLessThanOrEqual(1 + sent.length);
    });
});

describe('waiting on a WebSocket: frames', () => {
  const errorOf = (s: Setup, id: string) =>
    (s.connections.frames.get(id) ?? []).map((f) => (f as { error?: { code: string } }).error?.code);

  /** Partitions registered and not yet told, over every connection of the test. */
  const registered = async (s: Setup) => {
    let n = 0;
    for (const id of ['c', 'a', 'b', 'never', ...Array.from({ length: 20 }, (_, i) => `bad-${i}`)]) {
      const item = await s.store.get(keys.waitingConnection(id));
      if (item && item['told'] !== true) n += Object.keys(item['offs'] as object).length;
    }
    return n;
  };

  it('refuses malformed frames with an error frame each and stores nothing', async () => {
    const s = await setup();
    const partitions = [{ topic: 't', partition: 0, fetchOffset: 0 }];
    const cases: [unknown, string][] = [
      ['{"action":"wait",', 'INVALID_REQUEST'],
      ['[1,2]', 'INVALID_REQUEST'],
      [{ action: 'subscribe', partitions }, 'INVALID_REQUEST'],
      [{ partitions }, 'INVALID_REQUEST'],
      [{ action: 'wait', partitions, extra: 1 }, 'INVALID_REQUEST'],
      [{ action: 'wait', partitions: [] }, 'INVALID_REQUEST'],
      [{ action: 'wait', partitions: [{ topic: 't', partition: 0, fetchOffset: -1 }] }, 'INVALID_REQUEST'],
      [{ action: 'wait', partitions: [{ topic: 't', partition: 0, fetchOffset: 1.5 }] }, 'INVALID_REQUEST'],
      [{ action: 'wait', partitions: [{ topic: 't', partition: -1, fetchOffset: 0 }] }, 'INVALID_REQUEST'],
      [{ action: 'wait', partitions: [...partitions, ...partitions] }, 'INVALID_REQUEST'],
      [
        {
          action: 'wait',
          partitions: Array.from({ length: 1001 }, (_, i) => ({ topic: 't', partition: i, fetchOffset: 0 })),
        },
        'INVALID_REQUEST',
      ],
      [
        { action: 'wait', partitions: [{ topic: 'nope', partition: 0, fetchOffset: 0 }] },
        'UNKNOWN_TOPIC_OR_PARTITION',
      ],
      [
        {
          action: 'wait',
          partitions: [
            { topic: 't', partition: 0, fetchOffset: 0 },
            { topic: 't', partition: 2, fetchOffset: 0 },
          ],
        },
        'UNKNOWN_TOPIC_OR_PARTITION',
      ],
      ['x'.repeat(130 * 1024), 'RECORD_LIST_TOO_LARGE'],
    ];
    for (const [i, [body]] of cases.entries()) {
      expect((await s.send(`bad-${i}`, body)).statusCode).toBe(200);
    }
    expect(cases.map((_, i) => errorOf(s, `bad-${i}`))).toEqual(cases.map(([, code]) => [code]));
    expect(await registered(s)).toBe(0);
  });

  it('registers an offset past the high watermark (it waits) and tells it once the log reaches it', async () => {
    const s = await setup();
    await s.send('c', { action: 'wait', partitions: [{ topic: 't', partition: 0, fetchOffset: 2 }] });
    expect(s.connections.frames.get('c')).toBeUndefined();
    expect(await registered(s)).toBe(1);
    await s.produce(0);
    await s.feed.drained();
    await new Promise((r) => setImmediate(r));
    await s.feed.drained();
    expect(s.connections.readies('c')).toBe(0);
    await s.produce(0);
    await s.produce(0);
    await new Promise((r) => setImmediate(r));
    await s.feed.drained();
    expect(s.connections.frames.get('c')).toEqual([
      { type: 'ready', partitions: [{ topic: 't', partition: 0 }] },
    ]);
    expect(await registered(s)).toBe(0);
  });

  it('refuses topics the caller may not read, and unsigned connections, before looking anything up', async () => {
    const principal = 'arn:aws:iam::111122223333:user/alice';
    const authorizer: Authorizer = {
      allowed: (_caller, checks) =>
        Promise.resolve(checks.map((c) => c.resourceType === 'TOPIC' && c.resource === 't')),
    };
    const s = await setup(authorizer);
    expect(
      (await s.socket.handle({ requestContext: { routeKey: '$connect', connectionId: 'anon' } })).statusCode,
    ).toBe(401);
    const connect = (id: string) =>
      s.socket.handle({
        requestContext: { routeKey: '$connect', connectionId: id, identity: { userArn: principal } },
      });
    expect((await connect('a')).statusCode).toBe(200);
    expect((await connect('b')).statusCode).toBe(200);
    // A topic that does not exist and one that does answer the same to a caller who may read neither.
    await s.send('a', { action: 'wait', partitions: [{ topic: 'secret', partition: 0, fetchOffset: 0 }] });
    await s.send('b', {
      action: 'wait',
      partitions: [
        { topic: 't', partition: 0, fetchOffset: 0 },
        { topic: 'nope', partition: 0, fetchOffset: 0 },
      ],
    });
    expect(errorOf(s, 'a')).toEqual(['TOPIC_AUTHORIZATION_FAILED']);
    expect(errorOf(s, 'b')).toEqual(['TOPIC_AUTHORIZATION_FAILED']);
    // A connection that never came through $connect has no caller.
    await s.send('never', { action: 'wait', partitions: [{ topic: 't', partition: 0, fetchOffset: 0 }] });
    expect(errorOf(s, 'never')).toEqual(['SASL_AUTHENTICATION_FAILED']);
    expect(await registered(s)).toBe(0);
    // The allowed topic registers.
    await s.send('a', { action: 'wait', partitions: [{ topic: 't', partition: 1, fetchOffset: 0 }] });
    expect(await registered(s)).toBe(1);
  });
});

describe('waiting on a WebSocket: connections', () => {
  it('removes the registration of a connection that is gone when a message to it fails', async () => {
    const s = await setup();
    await s.send('c', {
      action: 'wait',
      partitions: [
        { topic: 't', partition: 0, fetchOffset: 0 },
        { topic: 't', partition: 1, fetchOffset: 0 },
      ],
    });
    const topicId = (await s.sluice.catalog.get('t')).topicId;
    expect((await s.store.query({ pk: keys.waitersPk(topicId, 1) })).items).toHaveLength(1);
    s.connections.gone.add('c');
    await s.produce(1);
    await new Promise((r) => setImmediate(r));
    await s.feed.drained();
    expect((await s.store.query({ pk: keys.waitersPk(topicId, 0) })).items).toHaveLength(0);
    expect((await s.store.query({ pk: keys.waitersPk(topicId, 1) })).items).toHaveLength(0);
    expect(await s.store.get(keys.waitingConnection('c'))).toBeUndefined();
    expect(await s.waiters.partitionsAdvanced([{ topicId, partition: 1 }])).toEqual({ notified: 0, gone: 0 });
  });

  it('removes the registration on $disconnect, and a re-registration replaces the last one', async () => {
    const s = await setup();
    const topicId = (await s.sluice.catalog.get('t')).topicId;
    await s.send('c', { action: 'wait', partitions: [{ topic: 't', partition: 0, fetchOffset: 0 }] });
    await s.send('c', { action: 'wait', partitions: [{ topic: 't', partition: 1, fetchOffset: 0 }] });
    // The first registration's partition is no longer waited on: a change to it tells nobody.
    await s.produce(0);
    await new Promise((r) => setImmediate(r));
    await s.feed.drained();
    expect(s.connections.readies('c')).toBe(0);
    await s.socket.handle({ requestContext: { routeKey: '$disconnect', connectionId: 'c' } });
    expect((await s.store.query({ pk: keys.waitersPk(topicId, 0) })).items).toHaveLength(0);
    expect((await s.store.query({ pk: keys.waitersPk(topicId, 1) })).items).toHaveLength(0);
    expect(await s.store.get(keys.waitingConnection('c'))).toBeUndefined();
  });

  it('tells a connection once when several notifier passes find it', async () => {
    const s = await setup();
    const topicId = (await s.sluice.catalog.get('t')).topicId;
    await s.send('c', {
      action: 'wait',
      partitions: [
        { topic: 't', partition: 0, fetchOffset: 0 },
        { topic: 't', partition: 1, fetchOffset: 0 },
      ],
    });
    s.feed.handler = undefined;
    await s.produce(0);
    await s.produce(1);
    const passes = await Promise.all([
      s.waiters.partitionsAdvanced([{ topicId, partition: 0 }]),
      s.waiters.partitionsAdvanced([{ topicId, partition: 1 }]),
      s.waiters.partitionsAdvanced([
        { topicId, partition: 0 },
        { topicId, partition: 1 },
      ]),
    ]);
    expect(passes.reduce((n, p) => n + p.notified, 0)).toBe(1);
    expect(s.connections.readies('c')).toBe(1);
  });
});
