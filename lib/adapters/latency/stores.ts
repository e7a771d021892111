/**
 * Store decorators that wait as AWS would before answering (see model.ts): the local stack under
 * SLUICE_LATENCY_MODEL and the benchmarks under `--model` wrap the real adapters in these, so the
 * handlers' code path is unchanged and only the waiting is added. Waiting costs no CPU, which is the
 * point: on AWS a produce mostly waits on S3 and DynamoDB round trips.
 */
import type { MetadataStore } from '../../ports/metadata-store.js';
import type { ByteRange, ObjectStore } from '../../ports/object-store.js';
import type { MetadataCall, ObjectCall } from '../forwarding.js';
import { ForwardingMetadataStore, ForwardingObjectStore } from '../forwarding.js';
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

export class LatencyObjectStore extends ForwardingObjectStore {
  constructor(
    inner: ObjectStore,
    readonly model: LatencyModel,
    private readonly random: Random = seededRandom(1),
    private readonly timer: Timer = realTimer,
  ) {
    super(inner);
  }

  protected override around<T>(call: ObjectCall, run: () => Promise<T>): Promise<T> {
    return after(this.timer, this.model.object[call.op], this.random, run);
  }

  /** The body's transfer adds to the request's time. */
  override put(key: string, body: Uint8Array): Promise<void> {
    return after(
      this.timer,
      this.model.object.put,
      this.random,
      () => this.inner.put(key, body),
      transferMs(this.model, body.length),
    );
  }

  override async get(key: string, range?: ByteRange): Promise<Uint8Array> {
    // First byte, then the body at the per-request throughput.
    const bytes = await super.get(key, range);
    await this.timer.sleep(transferMs(this.model, bytes.length));
    return bytes;
  }
}

export class LatencyMetadataStore extends ForwardingMetadataStore {
  constructor(
    inner: MetadataStore,
    readonly model: LatencyModel,
    private readonly random: Random = seededRandom(0),
    private readonly timer: Timer = realTimer,
  ) {
    super(inner);
  }

  protected override around<T>(call: MetadataCall, run: () => Promise<T>): Promise<T> {
    return after(this.timer, this.model.metadata[call.op], this.random, run);
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
