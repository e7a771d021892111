/**
 * The local stand-in for the metadata table's DynamoDB Stream and the event source mapping that
 * invokes the wait notifier: every write this process makes to a partition state item
 * (`P#{topicId}#{partition}` / `STATE`) becomes a stream record with the item before and after it
 * (NEW_AND_OLD_IMAGES), and records gathered over one turn of the event loop are handed to the handler
 * as one batch, after the writes took effect (a stream never shows a write that did not happen). Each
 * record's old image is the previous record's new image, so consecutive records chain. The handler is the deployed notifier's own
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
  /** Each partition item's image as of its last record: the next record's old image. */
  const lastImage = new Map<string, Item | undefined>();
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
  /**
   * Runs `write`; each partition item it touches becomes a record whose old image is the new image of
   * that item's previous record (read once, before the first write seen) and whose new image is read
   * after the write. Writes are not held back: when two race, both reads may see the later one, and
   * the records still chain (each old image is the one before it), so the ranges the notifier tests
   * (old ≤ p < new) cover every change once between them. Holding each write until its images were
   * read queued the replicator's ISR expansion behind slow partition writes (replication-live's
   * followers never rejoined).
   */
  const recorded = async <T>(keys: readonly ItemKey[], write: () => Promise<T>): Promise<T> => {
    const changed = [
      ...new Map(keys.filter(isPartitionState).map((k) => [`${k.pk}\u0000${k.sk}`, k])).values(),
    ];
    if (changed.length === 0 || !feed.handler) return write();
    await Promise.all(
      changed.map(async (k) => {
        const id = `${k.pk}\u0000${k.sk}`;
        if (!lastImage.has(id)) lastImage.set(id, await store.get(k, { consistent: true }));
      }),
    );
    const out = await write();
    const newImages = await Promise.all(changed.map((k) => store.get(k, { consistent: true })));
    for (const [i, { pk, sk }] of changed.entries()) {
      const id = `${pk}\u0000${sk}`;
      pending.push({ pk, sk, oldImage: lastImage.get(id), newImage: newImages[i] });
      lastImage.set(id, newImages[i]);
    }
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
    return out;
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
