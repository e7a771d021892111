/**
 * A task's view of its state: reads see the task's own uncommitted writes (read-your-writes), and
 * writes stay in a per-commit cache in which repeated updates of one key coalesce into one change, so
 * a commit writes each touched key once. Only the task that holds the lease writes its keys, so read
 * entries can be cached too.
 */
import type { StateBackend, StateWrite, StoredEntry } from './backend.js';

const READ_CACHE_LIMIT = 10_000;

export class TaskStores {
  private readonly dirty = new Map<string, StateWrite>();
  private readonly clean = new Map<string, StoredEntry | null>();

  constructor(
    private readonly backend: StateBackend,
    readonly taskId: string,
  ) {}

  async get(store: string, key: string): Promise<StoredEntry | null> {
    const id = cacheKey(store, key);
    const written = this.dirty.get(id);
    if (written) return written.entry;
    const cached = this.clean.get(id);
    if (cached !== undefined) return cached;
    const entry = (await this.backend.get(this.taskId, store, key)) ?? null;
    if (this.clean.size >= READ_CACHE_LIMIT) this.clean.clear();
    this.clean.set(id, entry);
    return entry;
  }

  put(store: string, key: string, entry: StoredEntry | null): void {
    this.dirty.set(cacheKey(store, key), { store, key, entry });
  }

  /** Entries with `from` ≤ key < `to` in key order, uncommitted writes included. */
  async range(store: string, from: string, to: string): Promise<StoredEntry[]> {
    const merged = new Map<string, StoredEntry>();
    for (const e of await this.backend.range(this.taskId, store, from, to)) merged.set(e.key, e);
    for (const w of this.dirty.values()) {
      if (w.store !== store || w.key < from || w.key >= to) continue;
      if (w.entry === null) merged.delete(w.key);
      else merged.set(w.key, w.entry);
    }
    return [...merged.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** The coalesced changes since the last commit, in first-write order. */
  pending(): StateWrite[] {
    return [...this.dirty.values()];
  }

  /** Writes the pending changes to the backend (at-least-once commits). */
  async flush(): Promise<void> {
    const writes = this.pending();
    if (writes.length > 0) await this.backend.write(this.taskId, writes);
    this.committed();
  }

  /** The pending changes are durable (written by flush or by a transaction that carried them). */
  committed(): void {
    for (const [id, w] of this.dirty) this.clean.set(id, w.entry);
    this.dirty.clear();
  }

  /** Forgets everything uncommitted and cached: after a failed commit the backend is the truth. */
  reset(): void {
    this.dirty.clear();
    this.clean.clear();
  }
}

const cacheKey = (store: string, key: string): string => `${store}\u0000${key}`;
