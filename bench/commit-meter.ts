/**
 * Counts commits on partition items as the produce path makes them, through a layer over the
 * handlers' metadata store: each commit `UpdateItem` (the one that advances `nextOffset`), whether
 * its condition failed (a retry follows), and whose it was, by the Idempotency-Key hash its condition
 * tests. Benchmarks only; the layer is set through the local stack's storage-layer hook.
 */
import type {
  Condition,
  ItemKey,
  MetadataStore,
  UpdateAction,
  UpdateOptions,
} from '../lib/ports/metadata-store.js';
import { ConditionFailedError } from '../lib/ports/metadata-store.js';
import type { StorageLayer } from '../local/runtime.js';
import { stateAttr } from '../lib/core/log/partition-codec.js';

export interface CommitCounts {
  attempts: number;
  /** Attempts whose condition failed: each is one server-side retry (or a definite refusal). */
  failed: number;
}

/** The Idempotency-Key hash a commit condition tests (`not ik contains hash`), if any. */
const keyHashOf = (c: Condition): string | undefined => {
  if ('not' in c) {
    const n = c.not;
    if ('contains' in n && n.path === stateAttr.idempotencyKeys && typeof n.contains === 'string')
      return n.contains;
    return keyHashOf(n);
  }
  const list = 'and' in c ? c.and : 'or' in c ? c.or : [];
  for (const x of list) {
    const found = keyHashOf(x);
    if (found !== undefined) return found;
  }
  return undefined;
};

const isCommit = (key: ItemKey, actions: readonly UpdateAction[]): boolean =>
  key.sk === 'STATE' && actions.some((a) => 'set' in a && a.set === 'nextOffset' && 'add' in a);

export class CommitMeter {
  /** Commits by who made them, as `classify` names them (undefined: not counted). */
  readonly counts = new Map<string, CommitCounts>();

  constructor(private readonly classify: (key: ItemKey, keyHash: string | undefined) => string | undefined) {}

  reset(): void {
    this.counts.clear();
  }

  get(who: string): CommitCounts {
    return this.counts.get(who) ?? { attempts: 0, failed: 0 };
  }

  layer(): StorageLayer {
    return (storage) => ({ ...storage, store: this.wrap(storage.store) });
  }

  private wrap(store: MetadataStore): MetadataStore {
    const update = async (key: ItemKey, actions: readonly UpdateAction[], options?: UpdateOptions) => {
      if (!isCommit(key, actions)) return store.update(key, actions, options);
      const who = this.classify(key, options?.condition && keyHashOf(options.condition));
      if (who === undefined) return store.update(key, actions, options);
      const c = this.counts.get(who) ?? { attempts: 0, failed: 0 };
      this.counts.set(who, c);
      c.attempts += 1;
      try {
        return await store.update(key, actions, options);
      } catch (error) {
        if (error instanceof ConditionFailedError) c.failed += 1;
        throw error;
      }
    };
    return new Proxy(store, {
      get: (target, prop, receiver) => {
        if (prop === 'update') return update;
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }
}
