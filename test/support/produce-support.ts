/**
 * A Sluice of several in-memory replica stores for tests of the produce path (lib/core/log/produce.ts):
 * a test can fail, hold or watch each object write and each metadata call, and read back the partition
 * item and the stored batches exactly.
 */
import { MemoryMetadataStore } from '../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import type { SluiceConfig } from '../../functions/app.js';
import { createSluice } from '../../functions/app.js';
import { keys } from '../../lib/core/keys.js';
import type { LogContext } from '../../lib/core/log/context.js';
import type { PartitionState } from '../../lib/core/log/partition-state.js';
import { decodePartitionState } from '../../lib/core/log/partition-codec.js';
import type { ProduceRecord } from '../../lib/core/log/produce.js';
import { LogAppender } from '../../lib/core/log/produce.js';
import type { Telemetry } from '../../lib/ports/telemetry.js';
import type { EncodeOptions } from '../../protocol/record-batch/index.js';
import { decodeRecordBatch, encodeRecordBatch, splitBatches } from '../../protocol/record-batch/index.js';
import type { MetadataCall } from './seams.js';
import { InterceptedMetadataStore, InterceptedObjectStore } from './seams.js';
import { TestClock } from './log-support.js';

export const T0 = 1_700_000_000_000;

type Around = <T>(call: MetadataCall, run: () => Promise<T>) => Promise<T>;

export interface ClusterOptions {
  stores?: number;
  replicationFactor?: number;
  partitions?: number;
  configs?: Record<string, string>;
  config?: Partial<SluiceConfig>;
}

export const produceCluster = async (options: ClusterOptions = {}) => {
  const clock = new TestClock(T0);
  const store = new MemoryMetadataStore();
  const raw = Array.from(
    { length: options.stores ?? 1 },
    (_, i) => new MemoryObjectStore(`s${i}`, undefined, clock),
  );
  /** Runs before every object write, with the store's id and the key; may throw, wait or move the clock. */
  let beforePut: (store: string, key: string) => Promise<void> | void = () => undefined;
  /** Wraps every metadata call (after the test's `around`, the call reaches the memory store). */
  let around: Around = (_call, run) => run();
  /** Every metadata call in order, with the consistency a get asked for. */
  const calls: (MetadataCall & { consistent?: boolean })[] = [];
  const intercepted = new InterceptedMetadataStore(store, (call, run) => {
    calls.push(call);
    return around(call, run);
  });
  const recording = Object.assign(Object.create(intercepted) as InterceptedMetadataStore, {
    get: (key: Parameters<MemoryMetadataStore['get']>[0], o?: { consistent?: boolean }) => {
      const result = intercepted.get(key, o);
      calls.at(-1)!.consistent = o?.consistent === true;
      return result;
    },
  });
  const objectStores = raw.map(
    (s) =>
      new InterceptedObjectStore(s, async (call, run) => {
        if (call.op === 'put') await beforePut(s.id, call.key!);
        return run();
      }),
  );
  let id = 0;
  const sluice = createSluice({
    store: recording,
    objectStores,
    clock,
    // Every store write of a replicated partition races a replica.lag.time.max.ms sleep, which moves
    // this clock: a short limit keeps commits well inside the commit deadline.
    config: { clusterId: 'test', topicCacheTtlMs: 600_000, replicaLagTimeMaxMs: 1_000, ...options.config },
    newId: () => `id-${++id}`,
  });
  const topic = await sluice.catalog.create({
    name: 't',
    partitions: options.partitions ?? 1,
    replicationFactor: options.replicationFactor ?? 1,
    configs: options.configs ?? {},
  });
  const state = async (partition = 0): Promise<PartitionState> =>
    decodePartitionState((await store.get(keys.partitionState(topic.topicId, partition)))!);
  /** The batches stored under `key` in store `storeId`, decoded. */
  const stored = async (storeId: string, key: string) => {
    const body = await raw.find((s) => s.id === storeId)!.get(key);
    return splitBatches(body).map(({ start, end }) => decodeRecordBatch(body.subarray(start, end)));
  };
  /** Keys of the objects each store holds, by store id. */
  const objectKeys = () => Object.fromEntries(raw.map((s) => [s.id, s.keys()]));
  /** The commits (conditional updates appending to a partition's tail) seen so far. */
  const commits = () =>
    calls.filter(
      (c) =>
        c.op === 'update' &&
        c.key?.sk === 'STATE' &&
        c.actions!.some((a) => 'append' in a && a.set === 'tail'),
    );
  /** A LogAppender on this cluster's storage with some of the log context's settings changed. */
  const producerWith = (changes: Partial<LogContext>) => new LogAppender({ ...sluice.log, ...changes });
  return {
    clock,
    store,
    raw,
    sluice,
    topic,
    calls,
    state,
    stored,
    objectKeys,
    commits,
    producerWith,
    onPut: (f: typeof beforePut) => void (beforePut = f),
    onMetadata: (f: Around) => void (around = f),
  };
};

export type Cluster = Awaited<ReturnType<typeof produceCluster>>;

export const bytes = (s: string): Uint8Array => new Uint8Array(Buffer.from(s));

/** Records with values `values`, no key unless `key` names one for all. */
export const records = (values: string[], extra: Partial<ProduceRecord> = {}): ProduceRecord[] =>
  values.map((v) => ({ key: null, value: bytes(v), headers: [], ...extra }));

/** One RecordBatch v2 of `values` (timestamps T0, T0 + 1, …), with `options` (producer, sequence). */
export const batch = (values: string[], options: EncodeOptions = {}, timestamp = T0): Uint8Array =>
  encodeRecordBatch(
    values.map((v, i) => ({ key: bytes(`k-${v}`), value: bytes(v), timestamp: timestamp + i })),
    options,
  );

export const concat = (...parts: Uint8Array[]): Uint8Array => new Uint8Array(Buffer.concat(parts));

/** A Telemetry that keeps every metric point, as [name, value, dimensions], for `producerWith`. */
export const metricPoints = () => {
  const points: [string, number, Record<string, unknown>][] = [];
  const telemetry: Telemetry = {
    metric: (name, value, dimensions) => void points.push([name, value, dimensions]),
    log: () => undefined,
    annotate: () => undefined,
  };
  return { telemetry, points };
};
