/**
 * The local stand-in for the metadata table's DynamoDB Stream and the event source mapping that
 * invokes the wait notifier: every write this process makes to a partition state item
 * (`P#{topicId}#{partition}` / `STATE`) becomes a stream record, and records gathered over one turn
 * of the event loop are handed to the handler as one batch, after the writes took effect (a stream
 * never shows a write that did not happen). The handler is the deployed notifier's own
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
import type { StreamRecordLike } from '../lib/http/wait-socket.js';

export type StreamBatchHandler = (records: StreamRecordLike[]) => Promise<unknown>;

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
  let pending: StreamRecordLike[] = [];
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
  const record = (keys: readonly ItemKey[]) => {
    const changed = keys.filter(isPartitionState);
    if (changed.length === 0 || !feed.handler) return;
    for (const { pk, sk } of changed)
      pending.push({ eventSource: 'aws:dynamodb', dynamodb: { Keys: { pk: { S: pk }, sk: { S: sk } } } });
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  const keyOf = (item: Item): ItemKey => ({ pk: item.pk, sk: item.sk });
  const wrapped: MetadataStore = {
    get: (key, options) => store.get(key, options),
    query: (input) => store.query(input),
    put: async (item: Item, options?: WriteOptions) => {
      await store.put(item, options);
      record([keyOf(item)]);
    },
    update: async (key: ItemKey, actions: readonly UpdateAction[], options?: UpdateOptions) => {
      const out = await store.update(key, actions, options);
      record([key]);
      return out;
    },
    delete: async (key: ItemKey, options?: WriteOptions) => {
      await store.delete(key, options);
      record([key]);
    },
    transact: async (ops: readonly TransactOp[]) => {
      await store.transact(ops);
      record(
        ops.flatMap((op) =>
          'put' in op ? [keyOf(op.put)] : 'update' in op ? [op.update] : 'delete' in op ? [op.delete] : [],
        ),
      );
    },
    batchWrite: async (writes) => {
      await store.batchWrite(writes);
      record([...(writes.puts ?? []).map(keyOf), ...(writes.deletes ?? [])]);
    },
  };
  return { store: wrapped, feed };
};
