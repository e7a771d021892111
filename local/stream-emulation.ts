/**
 * The local stand-in for the metadata table's DynamoDB Stream and the event source mapping that
 * invokes the wait notifier: every write this process makes to a partition state item
 * (`P#{topicId}#{partition}` / `STATE`) becomes a stream record with the item before and after it
 * (NEW_AND_OLD_IMAGES), and records gathered over one turn of the event loop are handed to the handler
 * as one batch, after the writes took effect (a stream never shows a write that did not happen). So
 * that each record's images are exactly its write's, the writes to one partition item are made one at
 * a time here, each between a consistent read before and after it. The handler is the deployed notifier's own
 * (lib/http/wait-socket.ts notifyStreamBatch). Writes made by other processes (the Connect runtime's
 * child invocations) are not seen here; their readers are woken by the consumer's periodic re-check.
 */
import type {
  Item,
  ItemKey,
  MetadataStore,
  TransactOp,
  UpdateAction,
  UpdateOptions,
  WriteOptions,
} from '../lib/ports/metadata-store.js';
import type { StreamChangeRecord } from '../lib/http/wait-socket.js';

export type StreamBatchHandler = (records: StreamChangeRecord[]) => Promise<unknown>;

export interface ChangeFeed {
  /** Where batches go; none: records are dropped (nothing waits). */
  handler: StreamBatchHandler | undefined;
  /** Resolves once every batch gathered so far was handled (tests). */
  drained(): Promise<void>;
}

const isPartitionState = (key: ItemKey): boolean => key.sk === 'STATE' && key.pk.startsWith('P#');

/** Wraps `store` so its partition state writes feed `feed`'s handler. */
export const withChangeFeed = (
  store: MetadataStore,
  log: (line: string) => void = () => {},
): { store: MetadataStore; feed: ChangeFeed } => {
  let pending: StreamChangeRecord[] = [];
  /** The write under way on each partition item (its images are read around it). */
  const busy = new Map<string, Promise<void>>();
  let scheduled = false;
  let running: Promise<void> = Promise.resolve();
  const feed: ChangeFeed = {
    handler: undefined,
    drained: () => running,
  };
  const flush = () => {
    scheduled = false;
    const records = pending;
    pending = [];
    const handler = feed.handler;
    if (!handler || records.length === 0) return;
    // One batch at a time, in order, as a stream shard's mapping invokes its function.
    running = running.then(() =>
      handler(records).then(
        () => undefined,
        (error: unknown) =>
          log(`wait notifier failed: ${error instanceof Error ? error.message : String(error)}`),
      ),
    );
  };
  /** Runs `write`; each partition item it touches becomes a record with its images around it. */
  const recorded = async <T>(keys: readonly ItemKey[], write: () => Promise<T>): Promise<T> => {
    const changed = [
      ...new Map(keys.filter(isPartitionState).map((k) => [`${k.pk}\u0000${k.sk}`, k])).entries(),
    ]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([, k]) => k);
    if (changed.length === 0 || !feed.handler) return write();
    // One write at a time per partition item, taken in key order (no two writes wait on each other).
    const releases: (() => void)[] = [];
    for (const key of changed) {
      const id = `${key.pk}\u0000${key.sk}`;
      const before = busy.get(id) ?? Promise.resolve();
      let release: () => void = () => {};
      const mine = new Promise<void>((resolve) => (release = resolve));
      const tail = before.then(() => mine);
      busy.set(id, tail);
      await before;
      releases.push(() => {
        release();
        if (busy.get(id) === tail) busy.delete(id);
      });
    }
    try {
      const oldImages = await Promise.all(changed.map((k) => store.get(k, { consistent: true })));
      const out = await write();
      const newImages = await Promise.all(changed.map((k) => store.get(k, { consistent: true })));
      for (const [i, { pk, sk }] of changed.entries())
        pending.push({ pk, sk, oldImage: oldImages[i], newImage: newImages[i] });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
      return out;
    } finally {
      for (const release of releases) release();
    }
  };
  const keyOf = (item: Item): ItemKey => ({ pk: item.pk, sk: item.sk });
  const wrapped: MetadataStore = {
    get: (key, options) => store.get(key, options),
    query: (input) => store.query(input),
    put: (item: Item, options?: WriteOptions) => recorded([keyOf(item)], () => store.put(item, options)),
    update: (key: ItemKey, actions: readonly UpdateAction[], options?: UpdateOptions) =>
      recorded([key], () => store.update(key, actions, options)),
    delete: (key: ItemKey, options?: WriteOptions) => recorded([key], () => store.delete(key, options)),
    transact: (ops: readonly TransactOp[]) =>
      recorded(
        ops.flatMap((op) =>
          'put' in op ? [keyOf(op.put)] : 'update' in op ? [op.update] : 'delete' in op ? [op.delete] : [],
        ),
        () => store.transact(ops),
      ),
    batchWrite: (writes) =>
      recorded([...(writes.puts ?? []).map(keyOf), ...(writes.deletes ?? [])], () =>
        store.batchWrite(writes),
      ),
  };
  return { store: wrapped, feed };
};
