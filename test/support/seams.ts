/**
 * Seams for scenario and mutation tests: store decorators that let a test run code around one
 * operation (hold a commit, bump an epoch just before an object write) or rewrite what Sluice asks the
 * store to do (strip a condition — a planted bug). Production code has no flags for any of this.
 */
import type { MetadataCall, ObjectCall } from '../../lib/adapters/forwarding.js';
import { ForwardingMetadataStore, ForwardingObjectStore } from '../../lib/adapters/forwarding.js';
import type {
  Condition,
  Item,
  ItemKey,
  MetadataStore,
  UpdateAction,
  UpdateOptions,
  WriteOptions,
} from '../../lib/ports/metadata-store.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';

export type { MetadataCall, ObjectCall };

/** Runs `around(call, run)` for every operation; `run` performs it (a put or update with rewritten options). */
export class InterceptedMetadataStore extends ForwardingMetadataStore {
  constructor(
    inner: MetadataStore,
    private readonly hook: <T>(
      call: MetadataCall,
      run: (options?: UpdateOptions) => Promise<T>,
    ) => Promise<T>,
  ) {
    super(inner);
  }

  protected override around<T>(call: MetadataCall, run: () => Promise<T>): Promise<T> {
    return this.hook(call, () => run());
  }

  override put(item: Item, options?: WriteOptions): Promise<void> {
    return this.hook({ op: 'put', key: item, ...(options ? { options } : {}) }, (o) =>
      this.inner.put(item, o ?? options),
    );
  }

  override update(
    key: ItemKey,
    actions: readonly UpdateAction[],
    options?: UpdateOptions,
  ): Promise<Item | undefined> {
    return this.hook({ op: 'update', key, actions, ...(options ? { options } : {}) }, (o) =>
      this.inner.update(key, actions, o ?? options),
    );
  }
}

export class InterceptedObjectStore extends ForwardingObjectStore {
  constructor(
    inner: ObjectStore,
    private readonly hook: <T>(call: ObjectCall, run: () => Promise<T>) => Promise<T>,
  ) {
    super(inner);
  }

  protected override around<T>(call: ObjectCall, run: () => Promise<T>): Promise<T> {
    return this.hook(call, run);
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
