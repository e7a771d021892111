/**
 * A replicated Sluice on in-memory stores for replication unit tests: three object stores that a
 * test can take down (every call fails) or freeze (no call answers), a metadata store whose partition
 * state updates a test can fail or rewrite, and a hand-driven clock.
 */
import { expect } from 'vitest';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../../../lib/adapters/memory/object-store.js';
import { createSluice } from '../../../../functions/app.js';
import { keys } from '../../../../lib/core/keys.js';
import { readPartitionState } from '../../../../lib/core/log/context.js';
import type { UpdateAction } from '../../../../lib/ports/metadata-store.js';
import type { Telemetry } from '../../../../lib/ports/telemetry.js';
import { storageUnavailable } from '../../../../lib/ports/storage-errors.js';
import type { MetadataCall, ObjectCall } from '../../../support/seams.js';
import { InterceptedMetadataStore, InterceptedObjectStore, isStateUpdate } from '../../../support/seams.js';
import { TestClock } from '../../../support/log-support.js';
import { stateAttr } from '../../../../lib/core/log/partition-codec.js';

export const LAG_MS = 1_000;

/** A LIST as a store saw it (the seams do not carry list options). */
export interface ListCall {
  store: string;
  prefix: string;
  limit: number | undefined;
}

class ListRecordingStore extends MemoryObjectStore {
  constructor(
    id: string,
    clock: ReplicaTestClock,
    private readonly lists: ListCall[],
  ) {
    super(id, undefined, clock);
  }

  override list(prefix: string, options: { cursor?: string; limit?: number } = {}) {
    this.lists.push({ store: this.id, prefix, limit: options.limit });
    return super.list(prefix, options);
  }
}

/** What a test may do with a partition state update before it reaches the store. */
export type StateUpdateHook = (call: MetadataCall, run: () => Promise<unknown>) => Promise<unknown>;

/**
 * Every store call races a sleep of replica.lag.time.max.ms (withinLag); TestClock moves time by a
 * sleep at once, which would age every caught-up time by the limit on each call that answered at
 * once. Here that sleep ends without moving the clock: a frozen store still times out.
 */
class ReplicaTestClock extends TestClock {
  override async sleep(ms: number): Promise<void> {
    if (ms === LAG_MS) await new Promise((r) => setImmediate(r));
    else await super.sleep(ms);
  }
}

export const replicationCluster = (
  storeCount = 3,
  { segments = false, telemetry }: { segments?: boolean; telemetry?: Telemetry } = {},
) => {
  const clock = new ReplicaTestClock();
  const segmentStore = segments ? new MemoryObjectStore('segments', undefined, clock) : undefined;
  const store = new MemoryMetadataStore();
  const lists: ListCall[] = [];
  const hooks = {
    stateUpdate: undefined as StateUpdateHook | undefined,
    /** Runs before every object store call reaches its store. */
    objectCall: undefined as ((call: ObjectCall & { store: string }) => Promise<void>) | undefined,
  };
  const calls: (ObjectCall & { store: string })[] = [];
  const raw = Array.from({ length: storeCount }, (_, i) => new ListRecordingStore(`s${i}`, clock, lists));
  const down = new Set<string>();
  const frozen = new Set<string>();
  /** `${store}:${op}` pairs that fail while the store's other calls answer. */
  const refused = new Set<string>();
  const objectStores = raw.map(
    (s) =>
      new InterceptedObjectStore(s, async (call, run) => {
        calls.push({ store: s.id, ...call });
        await hooks.objectCall?.({ store: s.id, ...call });
        if (down.has(s.id) || refused.has(`${s.id}:${call.op}`)) throw storageUnavailable(`store ${s.id}`);
        if (frozen.has(s.id)) return new Promise<never>(() => undefined);
        return run();
      }),
  );
  /** Reads of partition state items (each a consistent DynamoDB read). */
  const stateReads = { count: 0 };
  const metadata = new InterceptedMetadataStore(store, (call, run) => {
    if (call.op === 'get' && call.key?.sk === 'STATE') stateReads.count++;
    return hooks.stateUpdate && isStateUpdate(call) ? (hooks.stateUpdate(call, run) as never) : run();
  });
  let id = 0;
  const sluice = createSluice({
    store: metadata,
    objectStores,
    ...(segmentStore ? { segmentStore } : {}),
    clock,
    config: { clusterId: 'test', topicCacheTtlMs: 60_000, replicaLagTimeMaxMs: LAG_MS },
    newId: () => `id-${++id}`,
    ...(telemetry ? { telemetry } : {}),
  });
  const http = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const [pathname, search = ''] = path.split('?');
    const response = await sluice.router().handle({
      method,
      path: pathname!,
      query: Object.fromEntries(new URLSearchParams(search)),
      headers,
      body: body === undefined ? new Uint8Array() : new Uint8Array(Buffer.from(JSON.stringify(body))),
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return response as { status: number; body: any };
  };
  const create = async (configs: Record<string, string> = {}, replicationFactor = 3) => {
    const r = await http('POST', '/v1/topics', { name: 't', replicationFactor, configs });
    expect(r.status).toBe(201);
    const topic = await sluice.catalog.get('t');
    /** Arranges the partition item as a test needs it, past every hook. */
    const arrange = (actions: UpdateAction[]) =>
      store.update(keys.partitionState(topic.topicId, 0), actions).then(() => undefined);
    return { topic, state: () => readPartitionState(store, topic, 0), arrange };
  };
  const send = (value: string, acks: 'all' | '1' = 'all', headers: Record<string, string> = {}) =>
    http('POST', '/v1/topics/t/records', { records: [{ value, partition: 0 }], acks }, headers);
  const read = async (replica?: string) => {
    const r = await http(
      'GET',
      `/v1/topics/t/partitions/0/records?offset=0${replica ? `&replica=${replica}` : ''}`,
    );
    return {
      status: r.status,
      values: (r.body.records ?? []).map((x: { value: string }) => x.value),
      body: r.body,
    };
  };
  return {
    clock,
    store,
    raw,
    down,
    frozen,
    refused,
    stateReads,
    lists,
    calls,
    hooks,
    sluice,
    ctx: sluice.log,
    http,
    create,
    send,
    read,
    segmentStore,
  };
};

export interface ArrangedPartition {
  /** The followers' LEOs, the first follower's first. */
  leos: [number, number];
  /** How long ago each follower last caught up (ms). */
  caughtUpAgo?: [number, number];
  /** The HW (default: the smaller follower LEO). */
  hw?: number;
  configs?: Record<string, string>;
  /** The values produced with acks=1 before the arrangement (default five). */
  values?: string[];
  telemetry?: Telemetry;
}

/**
 * Topic `t` with records produced on the leader only, then its followers arranged at chosen LEOs and
 * caught-up times: the state an ISR change or an election starts from. `writes()` counts the partition
 * state updates made after the arrangement.
 */
export const arrangedPartition = async ({
  leos,
  caughtUpAgo = [0, 0],
  hw = Math.min(...leos),
  configs = { 'min.insync.replicas': '1' },
  values = ['a', 'b', 'c', 'd', 'e'],
  telemetry,
}: ArrangedPartition) => {
  const c = replicationCluster(3, telemetry ? { telemetry } : {});
  const t = await c.create(configs);
  for (const v of values) await c.send(v, '1');
  const { leader, replicas } = await t.state();
  const [f1, f2] = replicas.filter((r) => r !== leader) as [string, string];
  const now = c.clock.now();
  await t.arrange([
    { set: [stateAttr.logEndOffsets, f1], value: leos[0] },
    { set: [stateAttr.logEndOffsets, f2], value: leos[1] },
    { set: [stateAttr.lastCaughtUpTimeMs, leader], value: now },
    { set: [stateAttr.lastCaughtUpTimeMs, f1], value: now - caughtUpAgo[0] },
    { set: [stateAttr.lastCaughtUpTimeMs, f2], value: now - caughtUpAgo[1] },
    { set: stateAttr.highWatermark, value: hw },
  ]);
  let writes = 0;
  c.hooks.stateUpdate = (_call, run) => {
    writes++;
    return run();
  };
  return { c, ...t, leader, replicas, f1, f2, writes: () => writes };
};
