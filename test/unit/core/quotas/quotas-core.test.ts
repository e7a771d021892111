/**
 * Client quotas' core: KIP-55's precedence, entity keys and validation, the stored configs and the
 * shared rate's arithmetic (test/sim/quota-rate.test.ts runs it under concurrency and skew).
 */
import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import type { MetadataStore } from '../../../../lib/ports/metadata-store.js';
import type { ClientQuotaEntry, QuotaEntity } from '../../../../lib/core/quotas/index.js';
import {
  ClientQuotaConfigs,
  ClientQuotaManager,
  QUOTA_TYPES,
  QuotaRates,
  checkEntity,
  checkQuotaValue,
  entityFromKey,
  entityKey,
  matchesFilter,
  rateKey,
  resolveQuota,
} from '../../../../lib/core/quotas/index.js';
import { SCHEMAS } from '../../../../lib/wire/schemas.js';
import { TestClock } from '../../../support/log-support.js';

const principal = { user: 'arn:aws:iam::1:user/alice', clientId: 'app-1' };

/** KIP-55's order, most specific first. */
const LEVELS: QuotaEntity[] = [
  { user: principal.user, 'client-id': principal.clientId },
  { user: principal.user, 'client-id': null },
  { user: principal.user },
  { user: null, 'client-id': principal.clientId },
  { user: null, 'client-id': null },
  { user: null },
  { 'client-id': principal.clientId },
  { 'client-id': null },
];

const configsOf = (entities: QuotaEntity[]): Map<string, ClientQuotaEntry> =>
  new Map(
    entities.map((entity, i) => [entityKey(entity), { entity, values: { producer_byte_rate: 1000 + i } }]),
  );

/** Counts every call a store receives. */
const counting = (inner: MetadataStore) => {
  const calls: string[] = [];
  const store = new Proxy(inner, {
    get: (target, name, receiver) => {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(String(name));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, calls };
};

describe('quota entities (KIP-55)', () => {
  it('resolves the most specific configured entity, level by level', () => {
    for (let level = 0; level < LEVELS.length; level++) {
      const quota = resolveQuota(configsOf(LEVELS.slice(level)), principal, 'producer_byte_rate');
      expect(quota?.entity).toEqual(LEVELS[level]);
      expect(quota?.limit).toBe(1000);
    }
    expect(resolveQuota(new Map(), principal, 'producer_byte_rate')).toBeUndefined();
  });

  it('resolves each quota type on its own', () => {
    const configs = new Map<string, ClientQuotaEntry>([
      [entityKey(LEVELS[0]!), { entity: LEVELS[0]!, values: { consumer_byte_rate: 5 } }],
      [entityKey(LEVELS[7]!), { entity: LEVELS[7]!, values: { producer_byte_rate: 7 } }],
    ]);
    expect(resolveQuota(configs, principal, 'producer_byte_rate')?.entity).toEqual({ 'client-id': null });
    expect(resolveQuota(configs, principal, 'consumer_byte_rate')?.entity).toEqual(LEVELS[0]);
  });

  it('counts a default entity per principal, a named one for all it covers', () => {
    const byDefault = resolveQuota(configsOf([{ user: null }]), principal, 'producer_byte_rate')!;
    expect(byDefault.counterKey).toBe(entityKey({ user: principal.user }));
    const other = resolveQuota(
      configsOf([{ user: null }]),
      { ...principal, user: 'bob' },
      'producer_byte_rate',
    )!;
    expect(other.counterKey).not.toBe(byDefault.counterKey);
    const named = resolveQuota(configsOf([{ user: principal.user }]), principal, 'producer_byte_rate')!;
    const sameUserOtherClient = resolveQuota(
      configsOf([{ user: principal.user }]),
      { ...principal, clientId: 'app-2' },
      'producer_byte_rate',
    )!;
    expect(named.counterKey).toBe(sameUserOtherClient.counterKey);
  });

  it('keys entities reversibly, whatever characters the names hold', () => {
    for (const entity of [...LEVELS, { user: 'a;b=c', 'client-id': '<default>' }, { 'client-id': '%;=' }]) {
      expect(entityFromKey(entityKey(entity))).toEqual(entity);
    }
    expect(entityKey({ 'client-id': '<default>' })).not.toBe(entityKey({ 'client-id': null }));
  });

  it('refuses malformed entities and values with INVALID_REQUEST', () => {
    for (const bad of [{}, { group: 'g' }, { user: '' }, { user: 5 }, { user: 'x'.repeat(513) }]) {
      expect(() => checkEntity(bad)).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST' }));
    }
    for (const [key, value] of [
      ['producer_byte_rate', 0],
      ['producer_byte_rate', -1],
      ['producer_byte_rate', 1.5],
      ['consumer_byte_rate', Number.NaN],
      ['request_percentage', Number.POSITIVE_INFINITY],
      ['fetch_byte_rate', 10],
      ['controller_mutation_rate', '5'],
    ] as const) {
      expect(() => checkQuotaValue(key, value)).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST' }));
    }
    expect(checkQuotaValue('controller_mutation_rate', 0.5)).toBe(0.5);
  });

  it('filters as DescribeClientQuotas does: exact, default, any, strict', () => {
    const user = { user: 'u' };
    const both = { user: 'u', 'client-id': 'c' };
    const defaults = { user: null, 'client-id': null };
    expect(matchesFilter(user, { user: { name: 'u' } })).toBe(true);
    expect(matchesFilter(both, { user: { name: 'u' } })).toBe(true);
    expect(matchesFilter(both, { user: { name: 'u' }, strict: true })).toBe(false);
    expect(matchesFilter(defaults, { user: { default: true } })).toBe(true);
    expect(matchesFilter(user, { user: { default: true } })).toBe(false);
    expect(matchesFilter(defaults, { 'client-id': { any: true } })).toBe(true);
    expect(matchesFilter(user, { 'client-id': { any: true } })).toBe(false);
  });

  it('names the same quota configs as the wire schema', () => {
    const ops = JSON.stringify(SCHEMAS['AlterClientQuotas']);
    for (const type of QUOTA_TYPES) expect(ops).toContain(`"${type}"`);
  });
});

describe('stored quota configs', () => {
  it('checks every entry before writing any: one bad entry changes nothing', async () => {
    const store = new MemoryMetadataStore();
    const configs = new ClientQuotaConfigs({ store, clock: new TestClock() });
    await expect(
      configs.alter([
        { entity: { user: 'a' }, ops: [{ key: 'producer_byte_rate', value: 10 }] },
        { entity: { user: 'b' }, ops: [{ key: 'producer_byte_rate', value: -1 }] },
      ]),
    ).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    await expect(
      configs.alter([
        { entity: { user: 'a' }, ops: [{ key: 'producer_byte_rate', value: 10 }] },
        { entity: { user: 'a' }, ops: [{ key: 'consumer_byte_rate', value: 10 }] },
      ]),
    ).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    expect(await configs.describe({})).toEqual([]);
    expect(
      await configs.alter([{ entity: { user: 'a' }, ops: [{ key: 'producer_byte_rate', value: 10 }] }], {
        validateOnly: true,
      }),
    ).toEqual([]);
    expect(await configs.describe({})).toEqual([]);
  });

  it('sets, reads back, and removes; an entity with no quota left is gone', async () => {
    const configs = new ClientQuotaConfigs({ store: new MemoryMetadataStore(), clock: new TestClock() });
    const entity = { user: 'a', 'client-id': null };
    expect(
      await configs.alter([
        {
          entity,
          ops: [
            { key: 'producer_byte_rate', value: 1024 },
            { key: 'request_percentage', value: 50 },
          ],
        },
      ]),
    ).toEqual([{ entity, values: { producer_byte_rate: 1024, request_percentage: 50 } }]);
    await configs.alter([{ entity, ops: [{ key: 'producer_byte_rate', value: null }] }]);
    expect(await configs.describe({ user: { name: 'a' } })).toEqual([
      { entity, values: { request_percentage: 50 } },
    ]);
    await configs.alter([{ entity, ops: [{ key: 'request_percentage', value: null }] }]);
    expect(await configs.describe({})).toEqual([]);
  });

  it('with no quota configured, a check costs no store call but one query per cache period', async () => {
    const clock = new TestClock();
    const { store, calls } = counting(new MemoryMetadataStore());
    const quotas = new ClientQuotaManager({ store, clock, configCacheTtlMs: 5_000 });
    for (let i = 0; i < 100; i++) {
      expect(await quotas.admit(principal, 'producer_byte_rate', 1_000_000)).toEqual({
        admitted: true,
        throttleTimeMs: 0,
      });
      expect(await quotas.requestTime(principal)).toBeUndefined();
    }
    expect(calls).toEqual(['query']);
    clock.time += 5_000;
    await quotas.admit(principal, 'producer_byte_rate', 1);
    expect(calls).toEqual(['query', 'query']);
  });

  it('serves a change made elsewhere once the cache period has passed', async () => {
    const clock = new TestClock();
    const store = new MemoryMetadataStore();
    const here = new ClientQuotaManager({ store, clock });
    const elsewhere = new ClientQuotaManager({ store, clock });
    expect(await here.resolve(principal, 'producer_byte_rate')).toBeUndefined();
    await elsewhere.configs.alter([
      { entity: { user: null }, ops: [{ key: 'producer_byte_rate', value: 10 }] },
    ]);
    expect(await here.resolve(principal, 'producer_byte_rate')).toBeUndefined();
    clock.time += 5_000;
    expect((await here.resolve(principal, 'producer_byte_rate'))?.limit).toBe(10);
  });
});

describe('shared rate (a token bucket in virtual time)', () => {
  const setup = () => {
    const clock = new TestClock();
    const store = new MemoryMetadataStore();
    return { clock, store, rates: new QuotaRates({ store, clock, windowMs: 1_000 }) };
  };

  it('admits a burst of one window, then tells the crossing request how long to wait', async () => {
    const { rates } = setup();
    // 1000 bytes/s: 500 + 500 fill the burst, the next 1000 bytes are a second of debt.
    expect(await rates.record('producer_byte_rate', 'k', 500, 1000, { admit: true })).toEqual({
      admitted: true,
      throttleTimeMs: 0,
    });
    expect(await rates.record('producer_byte_rate', 'k', 500, 1000, { admit: true })).toEqual({
      admitted: true,
      throttleTimeMs: 0,
    });
    expect(await rates.record('producer_byte_rate', 'k', 1000, 1000, { admit: true })).toEqual({
      admitted: true,
      throttleTimeMs: 1000,
    });
  });

  it('refuses a throttled entity without counting it, and admits it once the wait is over', async () => {
    const { rates, clock, store } = setup();
    await rates.record('producer_byte_rate', 'k', 3000, 1000, { admit: true });
    const before = await store.get(rateKey('producer_byte_rate', 'k'));
    expect(await rates.record('producer_byte_rate', 'k', 10, 1000, { admit: true })).toEqual({
      admitted: false,
      throttleTimeMs: 2000,
    });
    clock.time += 1_500;
    expect(await rates.record('producer_byte_rate', 'k', 10, 1000, { admit: true })).toEqual({
      admitted: false,
      throttleTimeMs: 500,
    });
    expect((await store.get(rateKey('producer_byte_rate', 'k')))?.['tat']).toBe(before?.['tat']);
    clock.time += 500;
    expect(await rates.record('producer_byte_rate', 'k', 10, 1000, { admit: true })).toMatchObject({
      admitted: true,
    });
    expect(await rates.throttled('producer_byte_rate', 'k')).toBe(10);
  });

  it('counts work already done even while throttled (request time)', async () => {
    const { rates } = setup();
    await rates.record('request_percentage', 'k', 3000, 1000, { admit: true });
    expect(await rates.record('request_percentage', 'k', 1000, 1000, { admit: false })).toEqual({
      admitted: true,
      throttleTimeMs: 3000,
    });
  });

  it('does not let idle time pile up credit: after a long pause a burst is still one window', async () => {
    const { rates, clock } = setup();
    await rates.record('producer_byte_rate', 'k', 100, 1000, { admit: true });
    clock.time += 60_000;
    expect(await rates.record('producer_byte_rate', 'k', 1000, 1000, { admit: true })).toEqual({
      admitted: true,
      throttleTimeMs: 0,
    });
    // Caught up to now: a second's worth more is a second of debt, not more credit.
    expect(await rates.record('producer_byte_rate', 'k', 2000, 1000, { admit: true })).toEqual({
      admitted: true,
      throttleTimeMs: 2000,
    });
  });

  it('keeps concurrent requests from one entity all counted (atomic adds, no lost update)', async () => {
    const { rates } = setup();
    const decisions = await Promise.all(
      Array.from({ length: 50 }, () => rates.record('producer_byte_rate', 'k', 100, 1000, { admit: true })),
    );
    const admitted = decisions.filter((d) => d.admitted).length;
    // 50 × 100 bytes = 5 s of quota; the bucket admits while tat ≤ now + 1 s: the first 11, whose
    // 1100 ms of quota leave the last of them 100 ms to wait, and every refusal the same.
    expect(admitted).toBe(11);
    expect(decisions.map((d) => d.throttleTimeMs)).toEqual([
      ...Array<number>(10).fill(0),
      ...Array<number>(40).fill(100),
    ]);
  });
});
