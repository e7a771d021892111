/**
 * A MetadataStore decorator that injects faults (see injector.ts) into any store: in-memory for
 * simulations, or the real DynamoDB adapter inside the Lambda handlers when SLUICE_FAULTS is set.
 */
import type { MetadataCall } from '../forwarding.js';
import { ForwardingMetadataStore } from '../forwarding.js';
import type { Item, ItemKey, MetadataStore } from '../../ports/metadata-store.js';
import type { FaultInjector, FaultTarget } from './injector.js';

export class FaultyMetadataStore extends ForwardingMetadataStore {
  constructor(
    inner: MetadataStore,
    readonly injector: FaultInjector,
  ) {
    super(inner);
  }

  protected override around<T>(call: MetadataCall, run: () => Promise<T>): Promise<T> {
    return this.injector.around(target(call), run);
  }

  /**
   * Batch writes are not atomic, so their "after" fault is partial: a random prefix of the writes
   * lands, then the caller gets the ambiguous error.
   */
  override async batchWrite(writes: { puts?: readonly Item[]; deletes?: readonly ItemKey[] }): Promise<void> {
    const first = writes.puts?.[0] ?? writes.deletes?.[0];
    const t = target({ op: 'batchWrite', ...(first ? { key: first } : {}) });
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

/** The item a call names (a query names its partition key only). */
const target = (call: MetadataCall): FaultTarget => ({
  store: 'metadata',
  op: call.op,
  ...(call.key ? { pk: call.key.pk, sk: call.key.sk } : call.input ? { pk: call.input.pk } : {}),
});
