/**
 * A Streams task in a simulated world: an in-process Sluice (memory stores) reached through the SDK,
 * state in a memory metadata store, and "instances" whose side effects (transactions, state writes,
 * produce and offset requests) are counted so that one can be frozen at a chosen step, before or after
 * the effect, as a process that stops dead would be. A frozen effect can be released later to play
 * the zombie.
 */
import { MemoryMetadataStore } from '../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { createSluice } from '../../functions/app.js';
import type { MetadataStore } from '../../lib/ports/metadata-store.js';
import { systemClock } from '../../lib/ports/clock.js';
import type { FetchLike } from '../../sdk/index.js';
import { SluiceClient } from '../../sdk/index.js';

export interface CrashPlan {
  /** The side effect (counted from 1) at which the instance stops; none when undefined. */
  at: number | undefined;
  /** Whether the frozen effect happens before the instance stops. */
  after: boolean;
}

export class Instance {
  steps = 0;
  frozen = false;
  /** The side effect the instance stopped at. */
  frozenOn: string | undefined;
  private release: (() => void) | undefined;
  private readonly released = new Promise<void>((resolve) => (this.release = resolve));

  constructor(private readonly plan: CrashPlan) {}

  /** Runs a side effect under the plan; a frozen instance never finishes it, unless thawed as a zombie. */
  async effect<T>(label: string, run: () => Promise<T>): Promise<T> {
    if (this.frozen) return new Promise<T>(() => undefined);
    this.steps += 1;
    if (this.steps !== this.plan.at) return run();
    this.frozen = true;
    this.frozenOn = label;
    if (this.plan.after) {
      await run().catch(() => undefined);
      return new Promise<T>(() => undefined);
    }
    await this.released;
    return run();
  }

  /** Lets the effect the instance froze on go ahead (a paused zombie waking up); after-effects stay lost. */
  thaw(): void {
    this.frozen = false;
    this.release?.();
  }
}

const MUTATIONS = ['put', 'update', 'delete', 'transact', 'batchWrite'] as const;

/** The metadata store as one instance sees it: every mutation is a counted side effect. */
export const instanceStore = (store: MetadataStore, instance: Instance): MetadataStore =>
  new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function') return value;
      const bound = (value as (...a: unknown[]) => Promise<unknown>).bind(target);
      return (MUTATIONS as readonly (string | symbol)[]).includes(name)
        ? (...args: unknown[]) => instance.effect(String(name), () => bound(...args))
        : bound;
    },
  });

export interface StreamsWorld {
  /** Sluice's own metadata (the log, groups); the Streams state lives in `state`. */
  state: MemoryMetadataStore;
  /** An SDK client of the in-process Sluice whose POSTs are side effects of `instance`. */
  client(instance?: Instance): SluiceClient;
}

export const createStreamsWorld = (): StreamsWorld => {
  const sluice = createSluice({
    store: new MemoryMetadataStore(),
    objectStores: [new MemoryObjectStore('s0')],
    clock: systemClock,
    config: { clusterId: 'streams-sim', pollIntervalMs: 5 },
  });
  const router = sluice.router();
  const inProcess: FetchLike = async (input, init) => {
    // A request is a macrotask, as over a socket: a loop of in-process calls must not starve timers.
    await new Promise((resolve) => setImmediate(resolve));
    const url = new URL(input);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => (headers[k] = v));
    const body =
      init.body === undefined || init.body === null
        ? new Uint8Array()
        : typeof init.body === 'string'
          ? new TextEncoder().encode(init.body)
          : new Uint8Array(init.body as ArrayBuffer);
    const response = await router.handle({
      method: init.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      body,
    });
    const payload =
      response.body instanceof Uint8Array
        ? response.body
        : response.body === undefined
          ? null
          : JSON.stringify(response.body);
    const type: Record<string, string> =
      response.body instanceof Uint8Array ? {} : { 'content-type': 'application/json' };
    return new Response(payload, {
      status: response.status,
      headers: { ...type, ...(response.headers ?? {}) },
    });
  };
  return {
    state: new MemoryMetadataStore(),
    client: (instance) =>
      new SluiceClient({
        url: 'http://sluice.sim',
        retry: { retries: 3, initialRetryTimeMs: 1, maxRetryTimeMs: 5 },
        fetch: instance
          ? (input, init) =>
              (init.method ?? 'GET') === 'POST'
                ? instance.effect(`POST ${new URL(input).pathname}`, () => inProcess(input, init))
                : inProcess(input, init)
          : inProcess,
      }),
  };
};
