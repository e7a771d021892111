/** A Sluice on in-memory storage with a hand-driven clock, for unit tests of the log. */
import { MemoryMetadataStore } from '../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import type { SluiceConfig } from '../../functions/app.js';
import { createSluice } from '../../functions/app.js';
import type { Clock } from '../../lib/ports/clock.js';
import type { MetadataStore } from '../../lib/ports/metadata-store.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';
import type { Telemetry } from '../../lib/ports/telemetry.js';

export class TestClock implements Clock {
  constructor(public time = 1_700_000_000_000) {}
  now(): number {
    return this.time;
  }
  async sleep(ms: number): Promise<void> {
    this.time += ms;
    await new Promise((r) => setImmediate(r));
  }
}

/**
 * A clock that is real time: for tests whose clients run on real timers (a Streams app's heartbeats),
 * where a TestClock that server-side waits advance would run sessions out between two heartbeats.
 */
export class RealTimeClock extends TestClock {
  override now(): number {
    return Date.now();
  }
  override async sleep(ms: number): Promise<void> {
    await new Promise((r) => setTimeout(r, ms));
  }
}

export interface MemorySluiceOptions {
  /** The clock (default a TestClock that only waits move). */
  clock?: TestClock;
  segmentStore?: boolean;
  /** Decorators between Sluice and the memory stores (fault injectors, interceptors). */
  wrapStore?: (store: MetadataStore) => MetadataStore;
  wrapSegmentStore?: (store: ObjectStore) => ObjectStore;
  /** What the core reports (default none). */
  telemetry?: Telemetry;
}

export const memorySluice = (config: Partial<SluiceConfig> = {}, options: MemorySluiceOptions = {}) => {
  const clock = options.clock ?? new TestClock();
  const store = new MemoryMetadataStore();
  const objects = new MemoryObjectStore('s0', undefined, clock);
  const segments = options.segmentStore ? new MemoryObjectStore('segments', undefined, clock) : undefined;
  let id = 0;
  const sluice = createSluice({
    store: options.wrapStore ? options.wrapStore(store) : store,
    objectStores: [objects],
    ...(segments
      ? { segmentStore: options.wrapSegmentStore ? options.wrapSegmentStore(segments) : segments }
      : {}),
    clock,
    config: { clusterId: 'test', topicCacheTtlMs: 60_000, ...config },
    newId: () => `id-${++id}`,
    ...(options.telemetry ? { telemetry: options.telemetry } : {}),
  });
  const http = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const [pathname, search = ''] = path.split('?');
    const raw =
      body instanceof Uint8Array
        ? body
        : body === undefined
          ? new Uint8Array()
          : new Uint8Array(Buffer.from(JSON.stringify(body)));
    const response = await sluice.router().handle({
      method,
      path: pathname!,
      query: Object.fromEntries(new URLSearchParams(search)),
      headers,
      body: raw,
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return response as { status: number; headers?: Record<string, string>; body: any };
  };
  return { sluice, store, objects, segments, clock, http };
};
