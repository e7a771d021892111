/**
 * Waiting on a WebSocket (lib/core/log/waiters.ts, lib/http/wait-socket.ts, POST /v1/fetch's `wait`)
 * on the memory stores, with the SDK consumer waiting over an in-process channel and the stream
 * emulated by the local stack's change feed (local/stream-emulation.ts, with both images):
 * - the race: a woken consumer never misses a record that arrived while it was being woken. The
 *   interleavings are injected at the registration's write (the fetch's), not timed: a record
 *   committed (and its stream record handled) after the fetch read the partition but before the
 *   registration is stored is found by the check after storing; one committed between the
 *   registration and the check is told (at least once: both may see it);
 * - a wake costs one fetch and no frame in: the fetch that reads what woke the consumer registers it
 *   again; a registration is told by the one stream record whose high-watermark range holds it;
 * - hostile input: malformed frames and `wait` fields, unknown actions and fields, too many
 *   partitions, negative offsets, unknown topics, topics the caller may not read, oversized frames,
 *   unsigned connections, a fetch naming another connection, a wrong token or another caller's
 *   connection: refused with an error each, nothing stored;
 * - read_committed: a registration is told when the LSO passes it, not when an open transaction moves
 *   the high watermark;
 * - paced fetches: while records keep coming the consumer fetches on its pace without registering,
 *   and registers again once they stop;
 * - stale connections: a message to a connection that is gone removes the items found for it;
 *   $disconnect takes its token; items carry their TTL.
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
import type { ConsumedRecord, ConsumerOptions } from '../../../sdk/index.js';
import { SluiceClient } from '../../../sdk/index.js';
import type { ReadyPartition, WaitChannel, WaitConnection, WaitOutcome } from '../../../sdk/wait-socket.js';
import { memorySluice } from '../../support/log-support.js';
import { routerFetch } from '../../support/router-fetch.js';

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
  /** Runs before a registration (its partitions' items) is stored: the partitions it registers. */
  beforeRegister?: (partitions: number[]) => Promise<void>;
  /** Runs after it is stored, before the check reads the partitions. */
  afterRegister?: (partitions: number[]) => Promise<void>;
}

/** Stored counts: registration items written, and puts of them. */
interface Writes {
  registrationPuts: number;
}

/** A Sluice whose stream feeds the notifier, with hooks at the registration's write. */
const setup = async (authorizer?: Authorizer) => {
  const hooks: Hooks = {};
  const writes: Writes = { registrationPuts: 0 };
  let feed: ChangeFeed | undefined;
  const s = memorySluice(
    {},
    {
      wrapStore: (inner) => {
        const fed = withChangeFeed(inner);
        feed = fed.feed;
        const store: MetadataStore = {
          ...fed.store,
          batchWrite: async (w) => {
            const registering = (w.puts ?? [])
              .filter((i) => i.pk.startsWith('W#'))
              .map((i) => Number(i.pk.slice(i.pk.lastIndexOf('#') + 1)));
            writes.registrationPuts += registering.length;
            if (registering.length > 0) await hooks.beforeRegister?.(registering);
            await fed.store.batchWrite(w);
            if (registering.length > 0) await hooks.afterRegister?.(registering);
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
  const topicId = (await s.sluice.catalog.get('t')).topicId;
  /** The registration items of both partitions: connection → offset, per partition. */
  const registrations = async () => {
    const out: Record<string, number>[] = [];
    for (const p of [0, 1])
      out.push(
        Object.fromEntries(
          (await s.store.query({ pk: keys.waitersPk(topicId, p) })).items.map((i) => [
            i.sk.slice(2),
            Number(i['off']),
          ]),
        ),
      );
    return out;
  };
  /** Says hello on connection `id`: the token the socket handed it. */
  const hello = async (id: string): Promise<WaitConnection> => {
    await send(id, { action: 'hello' });
    const frame = (connections.frames.get(id) ?? []).findLast(
      (f: unknown) => (f as { type: string }).type === 'hello',
    ) as (WaitConnection & { type: string }) | undefined;
    if (!frame) throw new Error(`no hello answer on ${id}`);
    return { connectionId: frame.connectionId, token: frame.token };
  };
  return {
    ...s,
    hooks,
    writes,
    feed: feed!,
    connections,
    waiters,
    socket,
    produce,
    send,
    topicId,
    registrations,
    hello,
  };
};

type Setup = Awaited<ReturnType<typeof setup>>;

/** The SDK's wait channel over the socket in this process: connection `id`, greeted on first use. */
const channelOf = (s: Setup, id: string): WaitChannel & { waits: number } => {
  let ready: ReadyPartition[] = [];
  let current: ((outcome: WaitOutcome) => void) | undefined;
  let greeted: Promise<WaitConnection> | undefined;
  s.connections.listeners.set(id, (f) => {
    if (f.type !== 'ready') return;
    ready.push(...(f as unknown as { partitions: ReadyPartition[] }).partitions);
    current?.('ready');
  });
  const channel = {
    waits: 0,
    connection: () => (greeted ??= s.hello(id)),
    takeReady: () => {
      const taken = ready;
      ready = [];
      return taken;
    },
    wait: ({ signal, timeoutMs }: { signal: AbortSignal; timeoutMs: number }) =>
      new Promise<WaitOutcome>((resolve) => {
        channel.waits += 1;
        if (ready.length > 0) return resolve('ready');
        const timer = setTimeout(() => done('timeout'), timeoutMs);
        const done = (outcome: WaitOutcome) => {
          clearTimeout(timer);
          current = undefined;
          resolve(outcome);
        };
        signal.addEventListener('abort', () => done('aborted'), { once: true });
        current = done;
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
  options: ConsumerOptions = {},
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
  const consumer = client.consumer({ socketRecheckMs: 600_000, maxWaitMs: 20_000, ...options });
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

/** Lets the emulated stream hand its batches to the notifier. */
const settle = async (s: Setup) => {
  await s.feed.drained();
  await new Promise((r) => setImmediate(r));
  await s.feed.drained();
};

/** Records here come faster than a consumer would pace at: these tests are of the registering fetch. */
const registerAlways: ConsumerOptions = { pacedFetchMs: 0 };

const text = (records: ConsumedRecord[]) => records.map((r) => Buffer.from(r.value!).toString());

describe('waiting on a WebSocket: the wake race', () => {
  it('finds a record committed (and its stream record handled) before the registration was stored', async () => {
    const s = await setup();
    const sent: string[] = [];
    let injected = 0;
    // After a fetch read the partitions, before its registration is stored: a record commits and the
    // notifier handles its stream record, finding nobody registered. Only the check after storing
    // sees it (without the check the consumer would wait for a tell that never comes).
    s.hooks.beforeRegister = async (partitions) => {
      if (injected >= 6) return;
      injected += 1;
      sent.push(await s.produce(partitions[0]!));
      await settle(s);
    };
    const channel = channelOf(s, 'c1');
    const { outcome, got } = await consume(s, channel, 6, 4_000, { fetches: 0 }, registerAlways);
    expect(outcome).toBe('done');
    expect(text(got).sort()).toEqual([...sent].sort());
    // The stream found nobody to tell each time: every one of them was the check's.
    expect(s.connections.readies('c1')).toBe(0);
  });

  it('tells a consumer whose record commits between its registration and the check', async () => {
    const s = await setup();
    const sent: string[] = [];
    let injected = 0;
    // Registered, not yet checked: the record commits and its stream record is handled; both the
    // check and the notifier see it (told at least once, twice only in this race).
    s.hooks.afterRegister = async (partitions) => {
      if (injected >= 6) return;
      injected += 1;
      sent.push(await s.produce(partitions[0]!));
      await settle(s);
    };
    const channel = channelOf(s, 'c1');
    const { outcome, got } = await consume(s, channel, 6, 4_000, { fetches: 0 }, registerAlways);
    expect(outcome).toBe('done');
    expect(text(got).sort()).toEqual([...sent].sort());
    // Each raced record's stream record told its registration once.
    expect(s.connections.readies('c1')).toBe(6);
  });

  it('wakes a caught-up consumer from the stream: one fetch and one registration write a wake, no frame in', async () => {
    const s = await setup();
    const channel = channelOf(s, 'c1');
    const requests = { fetches: 0 };
    const consumed = consume(s, channel, 3, 4_000, requests, registerAlways);
    const sent: string[] = [];
    for (let i = 0; i < 3; i++) {
      // Wait until the consumer is registered at the end of partition 1, then produce.
      for (let t = 0; t < 400; t++) {
        const [, p1] = await s.registrations();
        if (Object.values(p1 ?? {})[0] === i && channel.waits > i) break;
        await new Promise((r) => setTimeout(r, 5));
      }
      sent.push(await s.produce(1));
    }
    const { outcome, got } = await consumed;
    expect(outcome).toBe('done');
    expect(text(got)).toEqual(sent);
    // The first fetch finds the log empty and registers both partitions; each wake's fetch reads the
    // record and registers partition 1 again at its new end; partition 0, not moved, keeps its item.
    expect(requests.fetches).toBe(1 + sent.length);
    expect(s.writes.registrationPuts).toBe(2 + sent.length);
    // Frames in: the hello, nothing per wake.
    expect(
      s.connections.frames.get('c1')?.filter((f) => (f as { type: string }).type === 'hello'),
    ).toHaveLength(1);
  });
});

describe('waiting on a WebSocket: paced fetches', () => {
  it('while records keep coming fetches on its interval without registering, and registers once they stop', async () => {
    const s = await setup();
    const channel = channelOf(s, 'c1');
    const requests = { fetches: 0 };
    const burst = 160;
    const consumed = consume(s, channel, burst + 1, 8_000, requests, { pacedFetchMs: 100 });
    const sent: string[][] = [[], []];
    // About 200 records a second over both partitions (a loaded machine's timers make it 50 or more):
    // a fetch 100 ms after the last finds ~20 (5 or more: the rule paces from 3).
    for (let i = 0; i < burst; i++) {
      sent[i % 2]!.push(await s.produce(i % 2));
      await new Promise((r) => setTimeout(r, 5));
    }
    const duringBurst = { puts: s.writes.registrationPuts, fetches: requests.fetches };
    // Registering on every wake would write about one item per record; paced, only the first fetches
    // (before a rate was seen) register.
    expect(duringBurst.puts).toBeLessThanOrEqual(8);
    expect(duringBurst.fetches).toBeGreaterThanOrEqual(5);
    // The producers stop: the next paced fetch brings nothing, the one after registers both
    // partitions at their ends, and the consumer waits on the socket.
    for (let t = 0; t < 400; t++) {
      const [p0, p1] = await s.registrations();
      if (Object.values(p0 ?? {})[0] === sent[0]!.length && Object.values(p1 ?? {})[0] === sent[1]!.length)
        break;
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(await s.registrations()).toEqual([{ c1: sent[0]!.length }, { c1: sent[1]!.length }]);
    const waits = channel.waits;
    for (let t = 0; t < 400 && channel.waits === waits; t++) await new Promise((r) => setTimeout(r, 5));
    const idle = requests.fetches;
    await new Promise((r) => setTimeout(r, 200));
    // Waiting on the socket: no fetch while nothing arrives (paced fetches would come every 100 ms).
    expect(requests.fetches).toBe(idle);
    // A record now is told on the socket and fetched.
    const readies = s.connections.readies('c1');
    sent[1]!.push(await s.produce(1));
    const { outcome, got } = await consumed;
    expect(outcome).toBe('done');
    expect(s.connections.readies('c1')).toBeGreaterThan(readies);
    for (const partition of [0, 1])
      expect(text(got.filter((r) => r.partition === partition))).toEqual(sent[partition]);
  });

  it('with pacedFetchMs 0 registers on every wake of the same burst', async () => {
    const s = await setup();
    const channel = channelOf(s, 'c1');
    const burst = 80;
    const consumed = consume(s, channel, burst, 8_000, { fetches: 0 }, registerAlways);
    for (let i = 0; i < burst; i++) {
      await s.produce(i % 2);
      await new Promise((r) => setTimeout(r, 5));
    }
    const { outcome } = await consumed;
    expect(outcome).toBe('done');
    // The burst the paced consumer registers for at most 8 times costs a registration a wake here.
    expect(s.writes.registrationPuts).toBeGreaterThan(8);
  });
});

describe('waiting on a WebSocket: frames', () => {
  const errorOf = (s: Setup, id: string) =>
    (s.connections.frames.get(id) ?? []).map((f) => (f as { error?: { code: string } }).error?.code);

  /** Registration items stored, over both partitions. */
  const registered = async (s: Setup) =>
    (await s.registrations()).reduce((n, p) => n + Object.keys(p).length, 0);

  it('refuses malformed frames with an error frame each and stores nothing', async () => {
    const s = await setup();
    const partitions = [{ topic: 't', partition: 0, fetchOffset: 0 }];
    const cases: [unknown, string][] = [
      ['{"action":"wait",', 'INVALID_REQUEST'],
      ['[1,2]', 'INVALID_REQUEST'],
      [{ action: 'subscribe', partitions }, 'INVALID_REQUEST'],
      [{ partitions }, 'INVALID_REQUEST'],
      [{ action: 'wait', partitions, extra: 1 }, 'INVALID_REQUEST'],
      [{ action: 'hello', partitions }, 'INVALID_REQUEST'],
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

  it('registers an offset past the high watermark and tells it by the one stream record that passes it', async () => {
    const s = await setup();
    await s.send('c', { action: 'wait', partitions: [{ topic: 't', partition: 0, fetchOffset: 2 }] });
    expect(s.connections.frames.get('c')).toBeUndefined();
    expect(await registered(s)).toBe(1);
    await s.produce(0);
    await s.produce(0);
    await settle(s);
    expect(s.connections.readies('c')).toBe(0);
    await s.produce(0);
    await settle(s);
    expect(s.connections.frames.get('c')).toEqual([
      { type: 'ready', partitions: [{ topic: 't', partition: 0, fetchOffset: 2 }] },
    ]);
    // Later records' ranges start past it: no second tell, and no write was needed to know that.
    await s.produce(0);
    await s.produce(0);
    await settle(s);
    expect(s.connections.readies('c')).toBe(1);
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
    // A connection that never came through $connect has no caller: no wait, no hello.
    await s.send('never', { action: 'wait', partitions: [{ topic: 't', partition: 0, fetchOffset: 0 }] });
    await s.send('never', { action: 'hello' });
    expect(errorOf(s, 'never')).toEqual(['SASL_AUTHENTICATION_FAILED', 'SASL_AUTHENTICATION_FAILED']);
    expect(await s.store.get(keys.connectionCaller('never'))).toBeUndefined();
    expect(await registered(s)).toBe(0);
    // The allowed topic registers.
    await s.send('a', { action: 'wait', partitions: [{ topic: 't', partition: 1, fetchOffset: 0 }] });
    expect(await registered(s)).toBe(1);
  });
});

describe('waiting on a WebSocket: the fetch registers', () => {
  const fetchBody = (
    wait: unknown,
    partitions: { partition: number; offset: number; waitingAt?: number; maxBytes?: number }[] = [
      { partition: 0, offset: 0 },
      { partition: 1, offset: 0 },
    ],
  ) => ({
    maxWaitMs: 0,
    partitions: partitions.map((p) => ({ topic: 't', ...p })),
    ...(wait === undefined ? {} : { wait }),
  });

  it('registers the partitions it leaves at their high watermark, keeps the unmoved ones, and skips the rest', async () => {
    const s = await setup();
    const c = await s.hello('c');
    const first = await s.http('POST', '/v1/fetch', fetchBody(c));
    expect(first.status).toBe(200);
    expect(first.body.partitions.map((p: { waitingAt?: number }) => p.waitingAt)).toEqual([0, 0]);
    expect(await s.registrations()).toEqual([{ c: 0 }, { c: 0 }]);
    expect(s.writes.registrationPuts).toBe(2);
    // Registered already and not moved: kept, nothing written.
    const again = await s.http(
      'POST',
      '/v1/fetch',
      fetchBody(c, [
        { partition: 0, offset: 0, waitingAt: 0 },
        { partition: 1, offset: 0, waitingAt: 0 },
      ]),
    );
    expect(again.body.partitions.map((p: { waitingAt?: number }) => p.waitingAt)).toEqual([0, 0]);
    expect(s.writes.registrationPuts).toBe(2);
    // Partition 1 gets two batches; a fetch that reads only the first leaves it short of its end.
    await s.produce(1);
    await s.produce(1);
    await settle(s);
    const short = await s.http(
      'POST',
      '/v1/fetch',
      fetchBody(c, [
        { partition: 0, offset: 0, waitingAt: 0 },
        { partition: 1, offset: 0, waitingAt: 0, maxBytes: 1 },
      ]),
    );
    const [p0, p1] = short.body.partitions as { waitingAt?: number; nextOffset: number }[];
    expect(p0!.waitingAt).toBe(0);
    expect(p1!.nextOffset).toBe(1);
    expect(p1!.waitingAt).toBeUndefined();
    expect(s.writes.registrationPuts).toBe(2);
    // The fetch that reaches the end registers it there.
    const rest = await s.http(
      'POST',
      '/v1/fetch',
      fetchBody(c, [
        { partition: 0, offset: 0, waitingAt: 0 },
        { partition: 1, offset: 1 },
      ]),
    );
    expect(rest.body.partitions.map((p: { waitingAt?: number }) => p.waitingAt)).toEqual([0, 2]);
    expect(await s.registrations()).toEqual([{ c: 0 }, { c: 2 }]);
    // Its items expire after the TTL (longer than API Gateway keeps a connection).
    const item = await s.store.get(keys.waiter(s.topicId, 1, c.connectionId));
    expect(item?.['expiresAt']).toBe(Math.ceil((s.clock.now() + 3 * 3600_000) / 1000));
  });

  it('refuses a fetch naming a connection it may not register on, and stores nothing', async () => {
    const s = await setup();
    const c = await s.hello('c');
    const d = await s.hello('d');
    const cases: unknown[] = [
      { connectionId: 'nobody', token: c.token },
      { connectionId: c.connectionId, token: d.token },
      { connectionId: c.connectionId, token: `${c.token}x` },
      { connectionId: c.connectionId },
      { connectionId: c.connectionId, token: c.token, extra: 1 },
      { connectionId: 7, token: c.token },
      { connectionId: c.connectionId, token: 'x'.repeat(129) },
      'c',
      null,
    ];
    for (const wait of cases) {
      const r = await s.http('POST', '/v1/fetch', fetchBody(wait));
      expect([r.status, r.body.error?.code]).toEqual([400, 'INVALID_REQUEST']);
    }
    // waitingAt without a wait, or not an offset.
    for (const body of [
      fetchBody(undefined, [{ partition: 0, offset: 0, waitingAt: 0 }]),
      fetchBody(c, [{ partition: 0, offset: 0, waitingAt: -1 }]),
    ]) {
      const r = await s.http('POST', '/v1/fetch', body);
      expect([r.status, r.body.error?.code]).toEqual([400, 'INVALID_REQUEST']);
    }
    // A connection that closed keeps no token.
    await s.socket.handle({ requestContext: { routeKey: '$disconnect', connectionId: 'c' } });
    const closed = await s.http('POST', '/v1/fetch', fetchBody(c));
    expect([closed.status, closed.body.error?.code]).toEqual([400, 'INVALID_REQUEST']);
    expect(await s.registrations()).toEqual([{}, {}]);
    expect(s.writes.registrationPuts).toBe(0);
  });

  it("refuses a fetch naming another caller's connection, even with its token", async () => {
    const alice = 'arn:aws:iam::111122223333:user/alice';
    const s = await setup({ allowed: (_caller, checks) => Promise.resolve(checks.map(() => true)) });
    await s.socket.handle({
      requestContext: { routeKey: '$connect', connectionId: 'a', identity: { userArn: alice } },
    });
    const a = await s.hello('a');
    const as = (principalArn: string) =>
      s.sluice.router().handle({
        method: 'POST',
        path: '/v1/fetch',
        query: {},
        headers: {},
        body: new Uint8Array(Buffer.from(JSON.stringify(fetchBody(a)))),
        caller: { principalArn, accountId: '111122223333', apiId: 'api', stage: '$default' },
      }) as Promise<{ status: number; body: { error?: { code: string } } }>;
    const bob = await as('arn:aws:iam::111122223333:user/bob');
    expect([bob.status, bob.body.error?.code]).toEqual([400, 'INVALID_REQUEST']);
    expect(s.writes.registrationPuts).toBe(0);
    expect((await as(alice)).status).toBe(200);
    expect(s.writes.registrationPuts).toBe(2);
  });
});

describe('waiting on a WebSocket: read_committed', () => {
  it('tells a read_committed registration when the last stable offset passes it, not when an open transaction moves the high watermark', async () => {
    const s = await setup();
    const client = new SluiceClient({
      url: 'http://sluice.internal',
      fetch: routerFetch(s.sluice.router()),
      waitUrl: false,
    });
    const committed = client.consumer({ isolationLevel: 'read_committed' });
    const uncommitted = client.consumer();
    const at0 = [{ topic: 't', partition: 0, offset: 0 }];
    // Each registers partition 0 at its end (0) on its own connection.
    const [c] = await committed.fetchMany(at0, { wait: await s.hello('committed') });
    const [u] = await uncommitted.fetchMany(at0, { wait: await s.hello('uncommitted') });
    expect(c && 'records' in c ? c.waitingAt : undefined).toBe(0);
    expect(u && 'records' in u ? u.waitingAt : undefined).toBe(0);
    const producer = client.producer({ transactionalId: 'tx' });
    await producer.initTransactions();
    producer.beginTransaction();
    await producer.sendBatch('t', 0, [{ value: 'a' }]);
    await settle(s);
    // The open transaction moved the high watermark (0 → 1) but not the LSO (still 0).
    expect(s.connections.readies('uncommitted')).toBe(1);
    expect(s.connections.readies('committed')).toBe(0);
    await producer.commitTransaction();
    await settle(s);
    // The commit marker moved the LSO past 0: told now, once; the read_uncommitted one not again.
    expect(s.connections.readies('committed')).toBe(1);
    expect(s.connections.readies('uncommitted')).toBe(1);
    const [after] = await committed.fetchMany(at0);
    expect(after && 'records' in after ? text(after.records) : []).toEqual(['a']);
  });
});

describe('waiting on a WebSocket: connections', () => {
  it('removes the items it finds of a connection that is gone when a message to it fails', async () => {
    const s = await setup();
    await s.send('c', {
      action: 'wait',
      partitions: [
        { topic: 't', partition: 0, fetchOffset: 0 },
        { topic: 't', partition: 1, fetchOffset: 0 },
      ],
    });
    expect(await s.registrations()).toEqual([{ c: 0 }, { c: 0 }]);
    s.connections.gone.add('c');
    await s.produce(1);
    await settle(s);
    // Partition 1's item went with the failed message; partition 0's goes when it is found, or by TTL.
    expect(await s.registrations()).toEqual([{ c: 0 }, {}]);
    expect(
      await s.waiters.partitionsChanged([
        {
          topicId: s.topicId,
          partition: 1,
          newImage: (await s.store.get(keys.partitionState(s.topicId, 1)))!,
        },
      ]),
    ).toEqual({ notified: 0, gone: 0 });
  });

  it('takes the token on $disconnect, and a hello replaces the token', async () => {
    const s = await setup();
    const first = await s.hello('c');
    const second = await s.hello('c');
    expect(second.token).not.toBe(first.token);
    await expect(s.waiters.verify('c', first.token)).rejects.toThrow(/token/);
    await s.waiters.verify('c', second.token);
    // A warm instance remembers the token it read: the same fetch again costs no read.
    let reads = 0;
    const get = s.store.get.bind(s.store);
    s.store.get = (key, options) => {
      if (key.pk === 'WC#c') reads += 1;
      return get(key, options);
    };
    await s.waiters.verify('c', second.token);
    expect(reads).toBe(0);
    await expect(s.waiters.verify('c', first.token)).rejects.toThrow(/token/);
    expect(reads).toBeGreaterThan(0);
    await s.socket.handle({ requestContext: { routeKey: '$disconnect', connectionId: 'c' } });
    expect(await s.store.get(keys.connectionCaller('c'))).toBeUndefined();
    await expect(s.waiters.verify('c', second.token)).rejects.toThrow(/hello/);
  });

  it('tells nobody for a write that moves no high watermark, without a Query', async () => {
    const s = await setup();
    await s.send('c', { action: 'wait', partitions: [{ topic: 't', partition: 0, fetchOffset: 0 }] });
    const state = (await s.store.get(keys.partitionState(s.topicId, 0)))!;
    let queries = 0;
    const query = s.store.query.bind(s.store);
    s.store.query = (input) => {
      queries += 1;
      return query(input);
    };
    expect(
      await s.waiters.partitionsChanged([
        { topicId: s.topicId, partition: 0, oldImage: state, newImage: state },
      ]),
    ).toEqual({ notified: 0, gone: 0 });
    expect(queries).toBe(0);
    expect(s.connections.readies('c')).toBe(0);
  });
});
