/**
 * State stores in Sluice's metadata table (DynamoDB in AWS and in the local stack): one item per
 * entry, partition key `S#{application}#{task}#{store}`, sort key the entry's key, so a task's store
 * is one item collection and range reads are one Query. Window and session entries carry the table's
 * TTL attribute, so DynamoDB deletes them after they expire. A task moving to another instance
 * restores nothing: its state is already here.
 */
import type { Item, MetadataStore } from '../../lib/ports/metadata-store.js';
import type { StateBackend, StateWrite, StoredEntry } from './backend.js';

/** DynamoDB rejects an empty sort key, and an entry's key may be empty (an empty string key). */
const SK_PREFIX = 'k';
/** The table's TTL attribute (epoch seconds), as lib/adapters/aws/schema.ts enables it. */
const TTL_ATTRIBUTE = 'expiresAt';

export class MetadataStateBackend implements StateBackend {
  constructor(
    readonly store: MetadataStore,
    readonly applicationId: string,
  ) {}

  async get(task: string, store: string, key: string): Promise<StoredEntry | undefined> {
    const item = await this.store.get(
      { pk: this.pk(task, store), sk: SK_PREFIX + key },
      { consistent: true },
    );
    return item && entryOf(item);
  }

  /** Entries with `from` ≤ key < `to` in key order; at most `limit` of them when given (queries). */
  async range(
    task: string,
    store: string,
    from: string,
    to: string,
    limit = Infinity,
  ): Promise<StoredEntry[]> {
    const entries: StoredEntry[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.store.query({
        pk: this.pk(task, store),
        sk: { between: [SK_PREFIX + from, SK_PREFIX + to] },
        consistent: true,
        // One more than asked: the inclusive upper bound may take a place.
        ...(Number.isFinite(limit) ? { limit: limit - entries.length + 1 } : {}),
        ...(cursor === undefined ? {} : { cursor }),
      });
      for (const item of page.items) {
        const entry = entryOf(item);
        // BETWEEN is inclusive; ranges are half-open.
        if (entry.key < to && entries.length < limit) entries.push(entry);
      }
      cursor = entries.length < limit ? page.cursor : undefined;
    } while (cursor !== undefined);
    return entries;
  }

  async write(task: string, writes: StateWrite[]): Promise<void> {
    await this.store.batchWrite({
      puts: writes.flatMap((w) => (w.entry === null ? [] : [this.itemOf(task, w.store, w.entry)])),
      deletes: writes
        .filter((w) => w.entry === null)
        .map((w) => ({ pk: this.pk(task, w.store), sk: SK_PREFIX + w.key })),
    });
  }

  /** The item a state write puts (exactly-once commits carry these in a transaction). */
  itemOf(task: string, store: string, entry: StoredEntry): Item {
    return {
      pk: this.pk(task, store),
      sk: SK_PREFIX + entry.key,
      v: entry.value,
      ts: entry.timestamp,
      ...(entry.expiresAtMs === undefined ? {} : { [TTL_ATTRIBUTE]: Math.ceil(entry.expiresAtMs / 1000) }),
    };
  }

  sk(key: string): string {
    return SK_PREFIX + key;
  }

  pk(task: string, store: string): string {
    return `S#${this.applicationId}#${task}#${store}`;
  }
}

const entryOf = (item: Item): StoredEntry => {
  const { sk, v, ts } = item;
  const expires = item[TTL_ATTRIBUTE];
  return {
    key: sk.slice(SK_PREFIX.length),
    value: v instanceof Uint8Array ? v : new Uint8Array(0),
    timestamp: typeof ts === 'number' ? ts : 0,
    ...(typeof expires === 'number' ? { expiresAtMs: expires * 1000 } : {}),
  };
};
