/**
 * A replicated Sluice on in-memory stores for replication unit tests: three object stores that a
 * test can take down (every call fails) or freeze (no call answers), a metadata store whose partition
 * state updates a test can fail or rewrite, and a hand-driven clock.
 */
import { expect } from 'vitest';
import { MemoryMetadataStore } from '../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { createSluice } from '../../lib/app.js';
import { keys } from '../../lib/core/keys.js';
import { readPartitionState } from '../../lib/core/log/context.js';
import type { UpdateAction } from '../../lib/ports/metadata-store.js';
import { storageUnavailable } from '../../lib/ports/storage-errors.js';
import type { MetadataCall, ObjectCall } from '../harness/seams.js';
import { InterceptedMetadataStore, InterceptedObjectStore, isStateUpdate } from '../harness/seams.js';
import { TestClock } from './log-support.js';

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
    clock: TestClock,
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

export const replicationCluster = (storeCount = 3, { segments = false } = {}) => {
  const clock = new TestClock();
  const segmentStore = segments ? new MemoryObjectStore('segments', undefined, clock) : undefined;
  const store = new MemoryMetadataStore();
  const lists: ListCall[] = [];
  const calls: (ObjectCall & { store: string })[] = [];
  const raw = Array.from({ length: storeCount }, (_, i) => new ListRecordingStore(`s${i}`, clock, lists));
  const down = new Set<string>();
  const frozen = new Set<string>();
  const objectStores = raw.map(
    (s) =>
      new InterceptedObjectStore(s, async (call, run) => {
        calls.push({ store: s.id, ...call });
        if (down.has(s.id)) throw storageUnavailable(`store ${s.id}`);
        if (frozen.has(s.id)) return new Promise<never>(() => undefined);
        return run();
      }),
  );
  const hooks = { stateUpdate: undefined as StateUpdateHook | undefined };
  const metadata = new InterceptedMetadataStore(store, (call, run) =>
    hooks.stateUpdate && isStateUpdate(call) ? (hooks.stateUpdate(call, run) as never) : run(),
  );
  let id = 0;
  const sluice = createSluice({
    store: metadata,
    objectStores,
    ...(segmentStore ? { segmentStore } : {}),
    clock,
    config: { clusterId: 'test', topicCacheTtlMs: 60_000, replicaLagTimeMaxMs: LAG_MS },
    newId: () => `id-${++id}`,
  });
  const http = async (method: string, path: string, body?: unknown) => {
    const [pathname, search = ''] = path.split('?');
    const response = await sluice.router().handle({
      method,
      path: pathname!,
      query: Object.fromEntries(new URLSearchParams(search)),
      headers: {},
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
  const send = (value: string, acks: 'all' | '1' = 'all') =>
    http('POST', '/v1/topics/t/records', { records: [{ value, partition: 0 }], acks });
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
