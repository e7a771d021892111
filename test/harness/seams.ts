/**
 * Seams for scenario and mutation tests: store decorators that let a test run code around one
 * operation (hold a commit, bump an epoch just before an object write) or rewrite what Sluice asks the
 * store to do (strip a condition — a planted bug). Production code has no flags for any of this.
 */
import type {
  Condition,
  Item,
  ItemKey,
  MetadataStore,
  QueryInput,
  QueryPage,
  TransactOp,
  UpdateAction,
  UpdateOptions,
  WriteOptions,
} from '../../lib/ports/metadata-store.js';
import type { ByteRange, ObjectListPage, ObjectStore } from '../../lib/ports/object-store.js';

export interface MetadataCall {
  op: 'get' | 'put' | 'update' | 'delete' | 'query' | 'transact' | 'batchWrite';
  key?: ItemKey;
  actions?: readonly UpdateAction[];
  options?: UpdateOptions;
}

/** Runs `around(call, run)` for every operation; `run` performs it (possibly with rewritten options). */
export class InterceptedMetadataStore implements MetadataStore {
  constructor(
    readonly inner: MetadataStore,
    private readonly around: <T>(
      call: MetadataCall,
      run: (options?: UpdateOptions) => Promise<T>,
    ) => Promise<T>,
  ) {}

  get(key: ItemKey, options?: { consistent?: boolean }): Promise<Item | undefined> {
    return this.around({ op: 'get', key }, () => this.inner.get(key, options));
  }

  put(item: Item, options?: WriteOptions): Promise<void> {
    return this.around({ op: 'put', key: item, ...(options ? { options } : {}) }, (o) =>
      this.inner.put(item, o ?? options),
    );
  }

  update(key: ItemKey, actions: readonly UpdateAction[], options?: UpdateOptions): Promise<Item | undefined> {
    return this.around({ op: 'update', key, actions, ...(options ? { options } : {}) }, (o) =>
      this.inner.update(key, actions, o ?? options),
    );
  }

  delete(key: ItemKey, options?: WriteOptions): Promise<void> {
    return this.around({ op: 'delete', key }, () => this.inner.delete(key, options));
  }

  query(input: QueryInput): Promise<QueryPage> {
    return this.around({ op: 'query' }, () => this.inner.query(input));
  }

  transact(ops: readonly TransactOp[]): Promise<void> {
    return this.around({ op: 'transact' }, () => this.inner.transact(ops));
  }

  batchWrite(writes: { puts?: readonly Item[]; deletes?: readonly ItemKey[] }): Promise<void> {
    return this.around({ op: 'batchWrite' }, () => this.inner.batchWrite(writes));
  }
}

export interface ObjectCall {
  op: 'put' | 'get' | 'delete' | 'list';
  key?: string;
}

export class InterceptedObjectStore implements ObjectStore {
  constructor(
    readonly inner: ObjectStore,
    private readonly around: <T>(call: ObjectCall, run: () => Promise<T>) => Promise<T>,
  ) {}

  get id(): string {
    return this.inner.id;
  }

  get location(): string {
    return this.inner.location;
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

/** True when the call is an update of a partition state item (a commit, a trim). */
export const isStateUpdate = (call: MetadataCall): boolean =>
  call.op === 'update' && call.key?.sk === 'STATE';

/** True when the update appends to the tail: a produce commit. */
export const isCommit = (call: MetadataCall): boolean =>
  isStateUpdate(call) && (call.actions ?? []).some((a) => 'append' in a && a.set === 'tail');

/** The condition without the parts that test `root` (e.g. 'leaderEpoch' or stateAttr.producers); undefined if nothing is left. */
export const stripCondition = (condition: Condition | undefined, root: string): Condition | undefined => {
  if (condition === undefined) return undefined;
  if ('and' in condition) {
    const kept = condition.and
      .map((c) => stripCondition(c, root))
      .filter((c): c is Condition => c !== undefined);
    return kept.length === 0 ? undefined : { and: kept };
  }
  if ('or' in condition) {
    const kept = condition.or.map((c) => stripCondition(c, root));
    // A disjunct that tested root now always holds: the whole `or` does.
    return kept.some((c) => c === undefined) ? undefined : { or: kept as Condition[] };
  }
  if ('not' in condition) {
    const inner = stripCondition(condition.not, root);
    return inner === undefined ? undefined : { not: inner };
  }
  const path =
    'exists' in condition
      ? condition.exists
      : 'notExists' in condition
        ? condition.notExists
        : condition.path;
  const first = typeof path === 'string' ? path : path[0];
  return first === root ? undefined : condition;
};

/** A store that drops `root` from every commit's condition: a planted bug for mutation tests. */
export const stripFromCommits = (store: MetadataStore, root: string): MetadataStore =>
  new InterceptedMetadataStore(store, (call, run) => {
    if (!isCommit(call)) return run();
    const condition = stripCondition(call.options?.condition, root);
    return run({ ...call.options, ...(condition ? { condition } : { condition: { exists: 'pk' } }) });
  });

/** A promise with its resolver, for holding an operation until the test lets it go. */
export const gate = (): { promise: Promise<void>; open: () => void } => {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
};
