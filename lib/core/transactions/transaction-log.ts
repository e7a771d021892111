/**
 * The transaction coordinator's log (Kafka's __transaction_state, kept as items): each transactional.id's
 * metadata is one item (state.ts) read strongly consistent and written by compare-and-set on its
 * version, and each producer id allocated to a transactional.id remembers its owner.
 */
import type { Item, MetadataStore } from '../../ports/metadata-store.js';
import { keys } from '../keys.js';
import type { TransactionMetadata } from './state.js';
import { TRANSACTION_SHARDS, decodeTransaction, encodeTransaction, transactionKey } from './state.js';

export class TransactionLog {
  /** Producer id → transactional.id: written once when the id is allocated, so safe to keep. */
  private readonly owners = new Map<number, string>();

  constructor(private readonly store: MetadataStore) {}

  /** Every transactional.id's metadata, by id. */
  async list(): Promise<TransactionMetadata[]> {
    const out: TransactionMetadata[] = [];
    for (let shard = 0; shard < TRANSACTION_SHARDS; shard++) {
      let cursor: string | undefined;
      do {
        const page = await this.store.query({
          pk: keys.transactionPk(shard),
          consistent: true,
          ...(cursor === undefined ? {} : { cursor }),
        });
        out.push(...page.items.map(decodeTransaction));
        cursor = page.cursor;
      } while (cursor !== undefined);
    }
    return out.sort((a, b) => (a.transactionalId < b.transactionalId ? -1 : 1));
  }

  async read(transactionalId: string): Promise<TransactionMetadata | undefined> {
    const item = await this.store.get(transactionKey(transactionalId), { consistent: true });
    return item && decodeTransaction(item);
  }

  /** The write of every transition: it holds only if nobody moved the item since `before` was read. */
  async save(before: TransactionMetadata | undefined, after: TransactionMetadata): Promise<void> {
    const item: Item = encodeTransaction({ ...after, version: before ? before.version + 1 : 0 });
    await this.store.put(item, {
      condition: before ? { path: 'version', op: '=', value: before.version } : { notExists: 'pk' },
    });
  }

  /** A new producer id, owned by this transactional.id from now on. */
  async allocateProducerId(transactionalId: string): Promise<number> {
    const item = await this.store.update(keys.producerIds, [{ set: 'next', add: 1, initial: 0 }], {
      returnValues: 'allNew',
    });
    const producerId = (item!['next'] as number) - 1;
    await this.store.put({ ...keys.transactionalProducer(producerId), transactionalId });
    this.owners.set(producerId, transactionalId);
    return producerId;
  }

  /** The transactional.id a producer id was allocated to. */
  async ownerOf(producerId: number): Promise<string | undefined> {
    const known = this.owners.get(producerId);
    if (known !== undefined) return known;
    const item = await this.store.get(keys.transactionalProducer(producerId), { consistent: true });
    const owner = item?.['transactionalId'] as string | undefined;
    if (owner !== undefined) this.owners.set(producerId, owner);
    return owner;
  }
}
