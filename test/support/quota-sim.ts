/**
 * A seeded simulation of client quotas across several app instances: each instance has its own
 * ClientQuotaManager (its own caches) and its own clock, skewed from true time; all share one metadata
 * store whose calls take a seeded latency, so requests of one client overlap and interleave. A noisy
 * client sends at many times its quota from concurrent loops spread over the instances, honouring the
 * throttle time as Kafka's clients do (or, `compliant: false`, retrying at once); the run reports the
 * bytes it was admitted against what its quota allows over the same span.
 */
import { ManualClock, drive } from '../../lib/adapters/fault/manual-clock.js';
import type { MetadataCall } from '../../lib/adapters/forwarding.js';
import { ForwardingMetadataStore } from '../../lib/adapters/forwarding.js';
import type { Random } from '../../lib/adapters/fault/random.js';
import { seededRandom } from '../../lib/adapters/fault/random.js';
import { MemoryMetadataStore } from '../../lib/adapters/memory/metadata-store.js';
import type { Clock } from '../../lib/ports/clock.js';
import type { MetadataStore } from '../../lib/ports/metadata-store.js';
import { ClientQuotaManager } from '../../lib/core/quotas/index.js';
import type { QuotaPrincipal } from '../../lib/core/quotas/index.js';

export interface QuotaSimOptions {
  seed: number;
  instances?: number;
  /** Each instance's clock is off true time by a seeded amount in ±skewMs. */
  skewMs?: number;
  /** The noisy client's producer_byte_rate. */
  quota?: number;
  /** It offers this many times its quota. */
  overload?: number;
  /** Concurrent request loops of the noisy client. */
  concurrency?: number;
  /** Simulated run length. */
  durationMs?: number;
  /** Honours throttle_time_ms (Kafka's clients), or retries a refusal at once. */
  compliant?: boolean;
  /** Store latency per call, uniform in [min, max] ms, before and after the call takes effect. */
  latencyMs?: readonly [number, number];
  /**
   * The store instance i counts its rates in (default: the one shared store). A planted bug passes a
   * store per instance: a per-instance bucket.
   */
  rateStoreFor?: (instance: number, shared: MetadataStore) => MetadataStore;
}

export interface QuotaSimResult {
  /** Bytes admitted over the run divided by quota × run length: 1 is exact. */
  ratio: number;
  admittedBytes: number;
  refused: number;
  /** Answers (admitted or refused) that told the client to wait. */
  throttledAnswers: number;
  /** Throttled answers that said how long to wait (all of them, or the edge is broken). */
  throttledWithDelay: number;
  requests: number;
}

/** A store whose every call waits a seeded latency before and after it takes effect. */
class LatentStore extends ForwardingMetadataStore {
  constructor(
    inner: MetadataStore,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly latencyMs: readonly [number, number],
  ) {
    super(inner);
  }

  protected override async around<T>(_call: MetadataCall, run: () => Promise<T>): Promise<T> {
    const [min, max] = this.latencyMs;
    const wait = () => this.clock.sleep(min + this.random() * (max - min));
    await wait();
    try {
      return await run();
    } finally {
      await wait();
    }
  }
}

export const runQuotaSim = async ({
  seed,
  instances = 3,
  skewMs = 0,
  quota = 100_000,
  overload = 10,
  concurrency = 8,
  durationMs = 60_000,
  compliant = true,
  latencyMs = [2, 15],
  rateStoreFor = (_i, shared) => shared,
}: QuotaSimOptions): Promise<QuotaSimResult> => {
  const random = seededRandom(seed);
  const truth = new ManualClock();
  const shared = new MemoryMetadataStore();
  const principal: QuotaPrincipal = { user: 'ANONYMOUS', clientId: 'noisy' };
  const managers = Array.from({ length: instances }, (_, i) => {
    const skew = (random() * 2 - 1) * skewMs;
    const clock: Clock = { now: () => truth.now() + skew, sleep: (ms) => truth.sleep(ms) };
    const store = new LatentStore(shared, truth, random, latencyMs);
    const rates = new LatentStore(rateStoreFor(i, shared), truth, random, latencyMs);
    // The configs come from the shared store; the rates from the one the instance counts in.
    const configs = new ClientQuotaManager({ store, clock });
    const counting = new ClientQuotaManager({ store: rates, clock });
    return { clock, configs, counting };
  });
  await drive(
    truth,
    managers[0]!.configs.configs.alter([
      { entity: { 'client-id': 'noisy' }, ops: [{ key: 'producer_byte_rate', value: quota }] },
    ]),
  );
  const start = truth.now();
  const end = start + durationMs;
  // Each loop offers overload × quota / concurrency bytes per second.
  const meanSize = 16_384;
  const gapMs = (meanSize / ((overload * quota) / concurrency)) * 1000;
  const result: QuotaSimResult = {
    ratio: 0,
    admittedBytes: 0,
    refused: 0,
    throttledAnswers: 0,
    throttledWithDelay: 0,
    requests: 0,
  };
  const loop = async (): Promise<void> => {
    await truth.sleep(random() * gapMs);
    while (truth.now() < end) {
      const m = managers[Math.floor(random() * managers.length)]!;
      // Mostly ordinary batches, now and then one bigger than a whole window's share.
      const size =
        random() < 0.05 ? Math.round(quota * (1 + 2 * random())) : Math.round(meanSize * (0.5 + random()));
      const sent = truth.now();
      const limit = (await m.configs.resolve(principal, 'producer_byte_rate'))?.limit;
      const decision =
        limit === undefined
          ? { admitted: true, throttleTimeMs: 0 }
          : await m.counting.rates.record('producer_byte_rate', 'client-id=noisy', size, limit, {
              admit: true,
            });
      result.requests++;
      // Admission is decided when the write takes effect; count it at the true time the answer left.
      if (decision.admitted && sent < end) result.admittedBytes += size;
      if (!decision.admitted) result.refused++;
      if (decision.throttleTimeMs > 0 || !decision.admitted) {
        result.throttledAnswers++;
        if (decision.throttleTimeMs > 0) result.throttledWithDelay++;
      }
      const elapsed = truth.now() - sent;
      const wait = compliant
        ? Math.max(decision.throttleTimeMs, gapMs - elapsed)
        : Math.max(1, gapMs - elapsed);
      await truth.sleep(wait);
    }
  };
  await drive(truth, Promise.all(Array.from({ length: concurrency }, loop)));
  result.ratio = result.admittedBytes / ((quota * durationMs) / 1000);
  return result;
};
