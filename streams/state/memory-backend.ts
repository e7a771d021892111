/** State in process memory: the test driver's stores, and the runtime's in unit tests. */
import type { StateBackend, StateWrite, StoredEntry } from './backend.js';

export class MemoryStateBackend implements StateBackend {
  private readonly stores = new Map<string, Map<string, StoredEntry>>();

  get(task: string, store: string, key: string): Promise<StoredEntry | undefined> {
    return Promise.resolve(this.entries(task, store).get(key));
  }

  range(task: string, store: string, from: string, to: string): Promise<StoredEntry[]> {
    return Promise.resolve(this.rangeNow(task, store, from, to));
  }

  /** A synchronous range read, for the test driver's store views. */
  rangeNow(task: string, store: string, from: string, to: string): StoredEntry[] {
    return [...this.entries(task, store).values()]
      .filter((e) => e.key >= from && e.key < to)
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  getNow(task: string, store: string, key: string): StoredEntry | undefined {
    return this.entries(task, store).get(key);
  }

  write(task: string, writes: StateWrite[]): Promise<void> {
    for (const w of writes) {
      const entries = this.entries(task, w.store);
      if (w.entry === null) entries.delete(w.key);
      else entries.set(w.key, { ...w.entry, value: w.entry.value.slice() });
    }
    return Promise.resolve();
  }

  /** Every task that holds entries of `store`. */
  tasksOf(store: string): string[] {
    return [...this.stores.keys()]
      .filter((k) => k.endsWith(`\u0000${store}`) && (this.stores.get(k)?.size ?? 0) > 0)
      .map((k) => k.slice(0, k.indexOf('\u0000')))
      .sort();
  }

  private entries(task: string, store: string): Map<string, StoredEntry> {
    const id = `${task}\u0000${store}`;
    let entries = this.stores.get(id);
    if (!entries) this.stores.set(id, (entries = new Map()));
    return entries;
  }
}
