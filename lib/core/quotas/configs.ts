/**
 * The stored client quota configs (what `kafka-configs.sh --entity-type users|clients` sets): one item
 * per entity in the metadata store, read by the enforcement path from a per-instance cache. With no
 * quota configured anywhere, a request costs no DynamoDB call beyond one query per cache period.
 */
import { SluiceError } from '../../../protocol/errors.js';
import type { Clock } from '../../ports/clock.js';
import type { Item, MetadataStore, UpdateAction } from '../../ports/metadata-store.js';
import { ConditionFailedError } from '../../ports/metadata-store.js';
import { queryAll } from '../../ports/query-all.js';
import type { ClientQuotaEntry, QuotaEntity, QuotaFilter, QuotaType } from './entity.js';
import {
  QUOTA_TYPES,
  checkEntity,
  checkQuotaValue,
  entityFromKey,
  entityKey,
  matchesFilter,
} from './entity.js';

const PK = 'CLIENT_QUOTAS';

/** How long an instance serves the quota configs from memory (changes elsewhere apply within it). */
export const DEFAULT_QUOTA_CONFIG_TTL_MS = 5_000;

/** One AlterClientQuotas entry: set (a value) or remove (null) each named quota of the entity. */
export interface QuotaAlteration {
  entity: QuotaEntity;
  ops: { key: QuotaType; value: number | null }[];
}

export interface ClientQuotaConfigsOptions {
  store: MetadataStore;
  clock: Clock;
  cacheTtlMs?: number;
}

export class ClientQuotaConfigs {
  private readonly store: MetadataStore;
  private readonly clock: Clock;
  private readonly ttlMs: number;
  private cached: { at: number; configs: Promise<ReadonlyMap<string, ClientQuotaEntry>> } | undefined;

  constructor({ store, clock, cacheTtlMs = DEFAULT_QUOTA_CONFIG_TTL_MS }: ClientQuotaConfigsOptions) {
    this.store = store;
    this.clock = clock;
    this.ttlMs = cacheTtlMs;
  }

  /** Every configured entity by key, from the cache (refreshed once per period, shared by concurrent callers). */
  async all(): Promise<ReadonlyMap<string, ClientQuotaEntry>> {
    const now = this.clock.now();
    if (!this.cached || now - this.cached.at >= this.ttlMs) {
      const configs = this.read();
      this.cached = { at: now, configs };
      configs.catch(() => {
        if (this.cached?.configs === configs) this.cached = undefined;
      });
    }
    return this.cached.configs;
  }

  /** DescribeClientQuotas: the entities matching the filter, read fresh. */
  async describe(filter: QuotaFilter): Promise<ClientQuotaEntry[]> {
    const configs = await this.read();
    return [...configs.values()].filter((entry) => matchesFilter(entry.entity, filter));
  }

  /**
   * AlterClientQuotas. Every entry is checked before anything is written, so bad input changes
   * nothing; `validateOnly` stops there.
   */
  async alter(
    alterations: readonly QuotaAlteration[],
    { validateOnly = false } = {},
  ): Promise<ClientQuotaEntry[]> {
    const checked = alterations.map(({ entity, ops }) => {
      const valid = checkEntity(entity as Record<string, unknown>);
      const seen = new Set<string>();
      for (const op of ops) {
        if (seen.has(op.key))
          throw new SluiceError(
            'INVALID_REQUEST',
            `quota ${op.key} is altered twice for ${entityKey(valid)}`,
          );
        seen.add(op.key);
        if (op.value !== null) checkQuotaValue(op.key, op.value);
        else checkQuotaValue(op.key, 1);
      }
      return { entity: valid, ops };
    });
    const keys = new Set<string>();
    for (const { entity } of checked) {
      const key = entityKey(entity);
      if (keys.has(key)) throw new SluiceError('INVALID_REQUEST', `entity ${key} appears twice`);
      keys.add(key);
    }
    if (validateOnly) return [];
    const results: ClientQuotaEntry[] = [];
    for (const { entity, ops } of checked) {
      if (ops.length === 0) continue;
      const key = { pk: PK, sk: entityKey(entity) };
      const actions: UpdateAction[] = ops.map((op) =>
        op.value === null ? { remove: op.key } : { set: op.key, value: op.value },
      );
      const after = await this.store.update(key, actions, { returnValues: 'allNew' });
      results.push({ entity, values: after ? entryOf(after).values : {} });
      if (QUOTA_TYPES.every((type) => after?.[type] === undefined)) {
        // Nothing left: the entity goes, unless a concurrent alteration set a quota meanwhile.
        await this.store
          .delete(key, { condition: { and: QUOTA_TYPES.map((type) => ({ notExists: type })) } })
          .catch((error: unknown) => {
            if (!(error instanceof ConditionFailedError)) throw error;
          });
      }
    }
    this.cached = undefined;
    return results;
  }

  private async read(): Promise<ReadonlyMap<string, ClientQuotaEntry>> {
    const items = await queryAll(this.store, { pk: PK, consistent: true });
    return new Map(items.map((item) => [item.sk, entryOf(item)]));
  }
}

const entryOf = (item: Item): ClientQuotaEntry => {
  const values: Partial<Record<QuotaType, number>> = {};
  for (const type of QUOTA_TYPES) if (typeof item[type] === 'number') values[type] = item[type];
  return { entity: entityFromKey(item.sk), values };
};
