/**
 * Store decorators that wait as AWS would before answering (see model.ts): the local stack under
 * SLUICE_LATENCY_MODEL and the benchmarks under `--model` wrap the real adapters in these, so the
 * handlers' code path is unchanged and only the waiting is added. Waiting costs no CPU, which is the
 * point: on AWS a produce mostly waits on S3 and DynamoDB round trips.
 */
import type {
  Item,
  ItemKey,
  MetadataStore,
  QueryInput,
  QueryPage,
  TransactOp,
  UpdateAction,
  UpdateOptions,
  WriteOptions,
} from '../../ports/metadata-store.js';
import type { ByteRange, ObjectListPage, ObjectStore } from '../../ports/object-store.js';
import type { Random } from '../fault/random.js';
import { seededRandom } from '../fault/random.js';
import type { Distribution, LatencyModel } from './model.js';
import { sampleMs, transferMs } from './model.js';

/** Where the waits happen: real timers, or a simulation's clock (bench/latency-sim.ts). */
export interface Timer {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const realTimer: Timer = {
  now: () => performance.now(),
  sleep: (ms) => (ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms))),
};

/**
 * Answers `op` after a draw of `d` (plus `extraMs`) in all: half of it before the call reaches the store
 * (the request's way there, so concurrent calls still arrive reordered as on a network), the rest after,
 * less what the emulator itself took. The model's figure is the whole service time on AWS, and the
 * emulator's own time (CPU on the shared machine) stands for part of that same time: adding both would
 * count it twice, so the modelled time is a floor that a slower emulator can only lengthen.
 */
const after = async <T>(
  timer: Timer,
  d: Distribution,
  random: Random,
  op: () => Promise<T>,
  extraMs = 0,
): Promise<T> => {
  const totalMs = sampleMs(d, random) + extraMs;
  const started = timer.now();
  await timer.sleep(totalMs / 2);
  const rest = () => timer.sleep(totalMs - (timer.now() - started));
  let result: T;
  try {
    result = await op();
  } catch (error) {
    await rest();
    throw error;
  }
  await rest();
  return result;
};

export class LatencyObjectStore implements ObjectStore {
  constructor(
    readonly inner: ObjectStore,
    readonly model: LatencyModel,
    private readonly random: Random = seededRandom(1),
    private readonly timer: Timer = realTimer,
  ) {}

  get id(): string {
    return this.inner.id;
  }

  get location(): string {
    return this.inner.location;
  }

  put(key: string, body: Uint8Array): Promise<void> {
    return after(
      this.timer,
      this.model.object.put,
      this.random,
      () => this.inner.put(key, body),
      transferMs(this.model, body.length),
    );
  }

  async get(key: string, range?: ByteRange): Promise<Uint8Array> {
    // First byte, then the body at the per-request throughput.
    const bytes = await after(this.timer, this.model.object.get, this.random, () =>
      this.inner.get(key, range),
    );
    await this.timer.sleep(transferMs(this.model, bytes.length));
    return bytes;
  }

  delete(keys: readonly string[]): Promise<void> {
    return after(this.timer, this.model.object.delete, this.random, () => this.inner.delete(keys));
  }

  list(prefix: string, options?: { cursor?: string; limit?: number }): Promise<ObjectListPage> {
    return after(this.timer, this.model.object.list, this.random, () => this.inner.list(prefix, options));
  }
}

export class LatencyMetadataStore implements MetadataStore {
  constructor(
    readonly inner: MetadataStore,
    readonly model: LatencyModel,
    private readonly random: Random = seededRandom(0),
    private readonly timer: Timer = realTimer,
  ) {}

  get(key: ItemKey, options?: { consistent?: boolean }): Promise<Item | undefined> {
    return after(this.timer, this.model.metadata.get, this.random, () => this.inner.get(key, options));
  }

  put(item: Item, options?: WriteOptions): Promise<void> {
    return after(this.timer, this.model.metadata.put, this.random, () => this.inner.put(item, options));
  }

  update(key: ItemKey, actions: readonly UpdateAction[], options?: UpdateOptions): Promise<Item | undefined> {
    return after(this.timer, this.model.metadata.update, this.random, () =>
      this.inner.update(key, actions, options),
    );
  }

  delete(key: ItemKey, options?: WriteOptions): Promise<void> {
    return after(this.timer, this.model.metadata.delete, this.random, () => this.inner.delete(key, options));
  }

  query(input: QueryInput): Promise<QueryPage> {
    return after(this.timer, this.model.metadata.query, this.random, () => this.inner.query(input));
  }

  transact(ops: readonly TransactOp[]): Promise<void> {
    return after(this.timer, this.model.metadata.transact, this.random, () => this.inner.transact(ops));
  }

  batchWrite(writes: { puts?: readonly Item[]; deletes?: readonly ItemKey[] }): Promise<void> {
    return after(this.timer, this.model.metadata.batchWrite, this.random, () =>
      this.inner.batchWrite(writes),
    );
  }
}

/** Wraps a deployment's stores in the model (object store i seeded with seed + 1 + i). */
export const withLatency = (
  model: LatencyModel,
  stores: { store: MetadataStore; objectStores: readonly ObjectStore[] },
  seed = 1,
  timer: Timer = realTimer,
): { store: MetadataStore; objectStores: ObjectStore[] } => ({
  store: new LatencyMetadataStore(stores.store, model, seededRandom(seed), timer),
  objectStores: stores.objectStores.map(
    (s, i) => new LatencyObjectStore(s, model, seededRandom(seed + 1 + i), timer),
  ),
});
