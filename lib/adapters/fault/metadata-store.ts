/**
 * A MetadataStore decorator that injects faults (see injector.ts) into any store: in-memory for
 * simulations, or the real DynamoDB adapter inside the Lambda handlers when SLUICE_FAULTS is set.
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
} from '../../ports/metadata-store.js';
import type { FaultInjector, FaultTarget } from './injector.js';

export class FaultyMetadataStore implements MetadataStore {
  constructor(
    readonly inner: MetadataStore,
    readonly injector: FaultInjector,
  ) {}

  get(key: ItemKey, options?: { consistent?: boolean }): Promise<Item | undefined> {
    return this.injector.around(target('get', key), () => this.inner.get(key, options));
  }

  put(item: Item, options?: WriteOptions): Promise<void> {
    return this.injector.around(target('put', item), () => this.inner.put(item, options));
  }

  update(key: ItemKey, actions: readonly UpdateAction[], options?: UpdateOptions): Promise<Item | undefined> {
    return this.injector.around(target('update', key), () => this.inner.update(key, actions, options));
  }

  delete(key: ItemKey, options?: WriteOptions): Promise<void> {
    return this.injector.around(target('delete', key), () => this.inner.delete(key, options));
  }

  query(input: QueryInput): Promise<QueryPage> {
    return this.injector.around({ store: 'metadata', op: 'query', pk: input.pk }, () =>
      this.inner.query(input),
    );
  }

  transact(ops: readonly TransactOp[]): Promise<void> {
    const first = ops[0];
    const key =
      first === undefined
        ? undefined
        : 'put' in first
          ? first.put
          : 'update' in first
            ? first.update
            : 'delete' in first
              ? first.delete
              : first.check;
    return this.injector.around(target('transact', key), () => this.inner.transact(ops));
  }

  /**
   * Batch writes are not atomic, so their "after" fault is partial: a random prefix of the writes
   * lands, then the caller gets the ambiguous error.
   */
  async batchWrite(writes: { puts?: readonly Item[]; deletes?: readonly ItemKey[] }): Promise<void> {
    const first = writes.puts?.[0] ?? writes.deletes?.[0];
    const t = target('batchWrite', first);
    const kind = this.injector.decide(t);
    if (kind === undefined) return this.inner.batchWrite(writes);
    if (kind === 'failBefore') throw this.injector.beforeError(t);
    if (kind === 'delay') {
      await this.injector.pause();
      return this.inner.batchWrite(writes);
    }
    const puts = writes.puts ?? [];
    const deletes = writes.deletes ?? [];
    const landed = Math.floor(this.injector.random() * (puts.length + deletes.length + 1));
    await this.inner
      .batchWrite({
        puts: puts.slice(0, landed),
        deletes: deletes.slice(0, Math.max(0, landed - puts.length)),
      })
      .catch(() => undefined);
    throw this.injector.afterError(t, kind);
  }
}

const target = (op: string, key: ItemKey | undefined): FaultTarget => ({
  store: 'metadata',
  op,
  ...(key ? { pk: key.pk, sk: key.sk } : {}),
});
