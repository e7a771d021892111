/**
 * Forwarding bases for store decorators (fault injection, latency models, the test seams, counting
 * and tracing wrappers): every method of the port passes to `inner` unchanged, so a decorator
 * overrides only what it changes. A decorator that treats every call alike overrides `around` alone;
 * one that changes a single operation overrides that method. The object store's identity (`id`,
 * `location`, `kind`, `zone`) is read through from `inner`, so a wrapped S3 Express store still says
 * what it is.
 */
import type {
  Item,
  ItemKey,
  MetadataStore,
  QueryInput,
  QueryPage,
  TransactOp,
  UpdateAction,
  UpdateOptions,
  WriteOptions,
} from '../ports/metadata-store.js';
import type { ByteRange, ObjectListPage, ObjectStore } from '../ports/object-store.js';

/**
 * One metadata call as a decorator sees it: the operation, the item it names (a transaction's or a
 * batch's first, a query's partition key), and an update's actions and a write's options.
 */
export interface MetadataCall {
  op: keyof MetadataStore;
  key?: ItemKey;
  /** A query's input. */
  input?: QueryInput;
  actions?: readonly UpdateAction[];
  options?: UpdateOptions;
}

/** The partition and sort key a transaction op names. */
const opKey = (op: TransactOp): ItemKey =>
  'put' in op ? op.put : 'update' in op ? op.update : 'delete' in op ? op.delete : op.check;

export class ForwardingMetadataStore implements MetadataStore {
  constructor(readonly inner: MetadataStore) {}

  /** Runs one call (`run` performs it on `inner`); the base runs it as it is. */
  protected around<T>(_call: MetadataCall, run: () => Promise<T>): Promise<T> {
    return run();
  }

  get(key: ItemKey, options?: { consistent?: boolean }): Promise<Item | undefined> {
    return this.around({ op: 'get', key }, () => this.inner.get(key, options));
  }

  put(item: Item, options?: WriteOptions): Promise<void> {
    return this.around({ op: 'put', key: item, ...(options ? { options } : {}) }, () =>
      this.inner.put(item, options),
    );
  }

  update(key: ItemKey, actions: readonly UpdateAction[], options?: UpdateOptions): Promise<Item | undefined> {
    return this.around({ op: 'update', key, actions, ...(options ? { options } : {}) }, () =>
      this.inner.update(key, actions, options),
    );
  }

  delete(key: ItemKey, options?: WriteOptions): Promise<void> {
    return this.around({ op: 'delete', key, ...(options ? { options } : {}) }, () =>
      this.inner.delete(key, options),
    );
  }

  query(input: QueryInput): Promise<QueryPage> {
    return this.around({ op: 'query', input }, () => this.inner.query(input));
  }

  transact(ops: readonly TransactOp[]): Promise<void> {
    const first = ops[0];
    return this.around({ op: 'transact', ...(first ? { key: opKey(first) } : {}) }, () =>
      this.inner.transact(ops),
    );
  }

  batchWrite(writes: { puts?: readonly Item[]; deletes?: readonly ItemKey[] }): Promise<void> {
    const first = writes.puts?.[0] ?? writes.deletes?.[0];
    return this.around({ op: 'batchWrite', ...(first ? { key: first } : {}) }, () =>
      this.inner.batchWrite(writes),
    );
  }
}

/** The object store's operations (its methods, not its identity fields). */
export type ObjectOp = {
  [K in keyof ObjectStore]-?: ObjectStore[K] extends (...args: never[]) => unknown ? K : never;
}[keyof ObjectStore];

/** One object call: the operation and the key it names (a delete's first, a list's prefix). */
export interface ObjectCall {
  op: ObjectOp;
  key?: string;
}

export class ForwardingObjectStore implements ObjectStore {
  constructor(readonly inner: ObjectStore) {}

  get id(): string {
    return this.inner.id;
  }

  get location(): string {
    return this.inner.location;
  }

  get kind(): ObjectStore['kind'] {
    return this.inner.kind;
  }

  get zone(): ObjectStore['zone'] {
    return this.inner.zone;
  }

  /** Runs one call (`run` performs it on `inner`); the base runs it as it is. */
  protected around<T>(_call: ObjectCall, run: () => Promise<T>): Promise<T> {
    return run();
  }

  put(key: string, body: Uint8Array): Promise<void> {
    return this.around({ op: 'put', key }, () => this.inner.put(key, body));
  }

  get(key: string, range?: ByteRange): Promise<Uint8Array> {
    return this.around({ op: 'get', key }, () => this.inner.get(key, range));
  }

  delete(keys: readonly string[]): Promise<void> {
    return this.around({ op: 'delete', ...(keys[0] !== undefined ? { key: keys[0] } : {}) }, () =>
      this.inner.delete(keys),
    );
  }

  list(prefix: string, options?: { cursor?: string; limit?: number }): Promise<ObjectListPage> {
    return this.around({ op: 'list', key: prefix }, () => this.inner.list(prefix, options));
  }
}
