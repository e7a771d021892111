import type { ByteRange, ObjectListPage, ObjectStore } from '../../ports/object-store.js';
import { ObjectNotFoundError } from '../../ports/storage-errors.js';
import type { Clock } from '../../ports/clock.js';
import { systemClock } from '../../ports/clock.js';
import { StorageMeter } from '../../ports/meter.js';

/** In-memory object store; bytes are copied in and out so callers cannot mutate stored data. */
export class MemoryObjectStore implements ObjectStore {
  private readonly objects = new Map<string, { body: Uint8Array; lastModified: number }>();

  constructor(
    readonly id = 's0',
    readonly meter: StorageMeter = new StorageMeter(),
    private readonly clock: Clock = systemClock,
  ) {}

  get location(): string {
    return `memory://${this.id}`;
  }

  async put(key: string, body: Uint8Array): Promise<void> {
    this.objects.set(key, { body: new Uint8Array(body), lastModified: this.clock.now() });
    this.meter.add({ objectPuts: 1, objectPutBytes: body.length });
  }

  async get(key: string, range?: ByteRange): Promise<Uint8Array> {
    const found = this.objects.get(key);
    this.meter.add({ objectGets: 1 });
    if (!found) throw new ObjectNotFoundError(key);
    const bytes = range
      ? found.body.slice(range.start, Math.min(range.end, found.body.length))
      : new Uint8Array(found.body);
    this.meter.add({ objectGetBytes: bytes.length });
    return bytes;
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (const key of keys) this.objects.delete(key);
    this.meter.add({ objectDeletes: Math.ceil(keys.length / 1000) });
  }

  async list(prefix: string, options: { cursor?: string; limit?: number } = {}): Promise<ObjectListPage> {
    const limit = Math.min(options.limit ?? 1000, 1000);
    const keys = [...this.objects.keys()]
      .filter((k) => k.startsWith(prefix) && (options.cursor === undefined || k > options.cursor))
      .sort();
    const page = keys.slice(0, limit);
    this.meter.add({ objectLists: 1 });
    const objects = page.map((key) => {
      const o = this.objects.get(key)!;
      return { key, size: o.body.length, lastModified: o.lastModified };
    });
    const last = page.at(-1);
    return { objects, ...(keys.length > limit && last !== undefined ? { cursor: last } : {}) };
  }

  /** Every key, for tests and checkers. */
  keys(): string[] {
    return [...this.objects.keys()].sort();
  }
}
