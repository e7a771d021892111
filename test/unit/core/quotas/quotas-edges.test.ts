/**
 * Client quotas at their edges: the exact messages AlterClientQuotas' validation gives, the boundaries
 * of each check, which entity a rate is counted under at every KIP-55 level, the stored layout (sort
 * keys, rate items and their TTL), throttle times at the catch-up boundary, and what the configs and
 * the rate do when the store fails, races or answers without the item.
 */
import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import type {
  Item,
  ItemKey,
  QueryInput,
  QueryPage,
  UpdateAction,
  UpdateOptions,
  WriteOptions,
} from '../../../../lib/ports/metadata-store.js';
import { ConditionFailedError } from '../../../../lib/ports/metadata-store.js';
import type { ClientQuotaEntry, QuotaEntity } from '../../../../lib/core/quotas/index.js';
import {
  ClientQuotaConfigs,
  ClientQuotaManager,
  MAX_ENTITY_NAME_LENGTH,
  QuotaRates,
  checkEntity,
  checkQuotaValue,
  entityFromKey,
  entityKey,
  rateKey,
  resolveQuota,
} from '../../../../lib/core/quotas/index.js';
import { TestClock } from '../../../support/log-support.js';

const principal = { user: 'alice', clientId: 'app-1' };

/** A memory store whose calls are recorded and whose answers a test may replace one call at a time. */
class ScriptedStore extends MemoryMetadataStore {
  readonly calls: { op: string; args: unknown[] }[] = [];
  onUpdate:
    | ((key: ItemKey, actions: readonly UpdateAction[], options: UpdateOptions) => Promise<Item | undefined>)
    | undefined;
  onDelete: ((key: ItemKey, options: WriteOptions) => Promise<void>) | undefined;
  onQuery: ((input: QueryInput) => Promise<QueryPage>) | undefined;

  override async get(key: ItemKey, options: { consistent?: boolean } = {}): Promise<Item | undefined> {
    this.calls.push({ op: 'get', args: [key, options] });
    return super.get(key, options);
  }
  override async update(key: ItemKey, actions: readonly UpdateAction[], options: UpdateOptions = {}) {
    this.calls.push({ op: 'update', args: [key, actions, options] });
    return this.onUpdate ? this.onUpdate(key, actions, options) : super.update(key, actions, options);
  }
  override async delete(key: ItemKey, options: WriteOptions = {}): Promise<void> {
    this.calls.push({ op: 'delete', args: [key, options] });
    return this.onDelete ? this.onDelete(key, options) : super.delete(key, options);
  }
  override async query(input: QueryInput): Promise<QueryPage> {
    this.calls.push({ op: 'query', args: [input] });
    return this.onQuery ? this.onQuery(input) : super.query(input);
  }
  ops(): string[] {
    return this.calls.map((c) => c.op);
  }
  /** The store's own update, bypassing the script (a write by someone else). */
  async plainUpdate(key: ItemKey, actions: readonly UpdateAction[], options: UpdateOptions = {}) {
    return super.update(key, actions, options);
  }
}

const invalid = (message: string) => expect.objectContaining({ code: 'INVALID_REQUEST', message });

describe('AlterClientQuotas validation names the bad key or value', () => {
  it('names an unknown entity type, an empty entity and a bad name', () => {
    expect(() => checkEntity({ user: 'u', group: 'g' })).toThrow(
      invalid('unknown quota entity type group; use user or client-id'),
    );
    expect(() => checkEntity({})).toThrow(invalid('a quota entity names a user, a client-id, or both'));
    expect(() => checkEntity({ 'client-id': '' })).toThrow(
      invalid('quota entity client-id must be a name of 1 to 512 characters, or null for the default'),
    );
  });

  it('takes a name of exactly the maximum length and refuses one more', () => {
    const longest = 'x'.repeat(MAX_ENTITY_NAME_LENGTH);
    expect(checkEntity({ user: longest, 'client-id': null })).toEqual({ user: longest, 'client-id': null });
    expect(() => checkEntity({ user: `${longest}x` })).toThrow(
      expect.objectContaining({ code: 'INVALID_REQUEST' }),
    );
  });

  it('names an unknown quota config and lists the valid ones', () => {
    expect(() => checkQuotaValue('fetch_byte_rate', 10)).toThrow(
      invalid(
        'unknown quota config fetch_byte_rate; use one of producer_byte_rate, consumer_byte_rate, request_percentage, controller_mutation_rate',
      ),
    );
  });

  it('says which kind of number each quota takes, and the value it got', () => {
    expect(() => checkQuotaValue('producer_byte_rate', 1.5)).toThrow(
      invalid('producer_byte_rate must be a positive integer (bytes per second), got 1.5'),
    );
    expect(() => checkQuotaValue('consumer_byte_rate', 2.5)).toThrow(
      invalid('consumer_byte_rate must be a positive integer (bytes per second), got 2.5'),
    );
    expect(() => checkQuotaValue('request_percentage', -1)).toThrow(
      invalid('request_percentage must be a positive number, got -1'),
    );
    expect(() => checkQuotaValue('controller_mutation_rate', '5')).toThrow(
      invalid('controller_mutation_rate must be a positive number, got "5"'),
    );
    // Fractions are fine where Kafka takes a double.
    expect(checkQuotaValue('request_percentage', 12.5)).toBe(12.5);
  });

  it('refuses NaN and values beyond the safe integers for the fractional quotas too', () => {
    for (const type of ['request_percentage', 'controller_mutation_rate']) {
      expect(() => checkQuotaValue(type, Number.NaN)).toThrow(
        expect.objectContaining({ code: 'INVALID_REQUEST' }),
      );
      expect(() => checkQuotaValue(type, 1e20)).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST' }));
    }
  });

  it('takes Number.MAX_SAFE_INTEGER bytes per second and nothing above it', () => {
    expect(checkQuotaValue('producer_byte_rate', Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => checkQuotaValue('producer_byte_rate', Number.MAX_SAFE_INTEGER + 2)).toThrow(
      expect.objectContaining({ code: 'INVALID_REQUEST' }),
    );
  });

  it('refuses a quota altered twice in one entry, naming it and the entity, and writes nothing', async () => {
    const store = new ScriptedStore();
    const configs = new ClientQuotaConfigs({ store, clock: new TestClock() });
    await expect(
      configs.alter([
        {
          entity: { user: 'a', 'client-id': null },
          ops: [
            { key: 'producer_byte_rate', value: 10 },
            { key: 'producer_byte_rate', value: null },
          ],
        },
      ]),
    ).rejects.toEqual(invalid('quota producer_byte_rate is altered twice for user=a;client-id=<default>'));
    await expect(
      configs.alter([
        { entity: { 'client-id': 'c' }, ops: [{ key: 'producer_byte_rate', value: 10 }] },
        { entity: { 'client-id': 'c' }, ops: [] },
      ]),
    ).rejects.toEqual(invalid('entity client-id=c appears twice'));
    expect(store.ops()).toEqual([]);
  });

  it('refuses removing an unknown quota config', async () => {
    const configs = new ClientQuotaConfigs({ store: new MemoryMetadataStore(), clock: new TestClock() });
    await expect(
      configs.alter([{ entity: { user: 'a' }, ops: [{ key: 'fetch_byte_rate' as never, value: null }] }]),
    ).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
  });
});

describe('entity keys and KIP-55 counting', () => {
  it('stores each entity under a fixed sort key (names escaped, the default spelled <default>)', () => {
    expect(entityKey({ user: 'a' })).toBe('user=a');
    expect(entityKey({ 'client-id': null })).toBe('client-id=<default>');
    expect(entityKey({ user: 'a b;c', 'client-id': 'x=y' })).toBe('user=a%20b%3Bc;client-id=x%3Dy');
    expect(entityKey({ user: null, 'client-id': null })).toBe('user=<default>;client-id=<default>');
  });

  it('ignores a key part of a type it does not know', () => {
    expect(entityFromKey('group=g')).toEqual({});
    expect(entityFromKey('user=a;group=g')).toEqual({ user: 'a' });
  });

  it('counts each level under the entity Kafka counts it for', () => {
    const { user, clientId } = principal;
    const both = `user=${user};client-id=${clientId}`;
    const levels: [QuotaEntity, string][] = [
      [{ user, 'client-id': clientId }, both],
      [{ user, 'client-id': null }, both],
      [{ user }, `user=${user}`],
      [{ user: null, 'client-id': clientId }, both],
      [{ user: null, 'client-id': null }, both],
      [{ user: null }, `user=${user}`],
      [{ 'client-id': clientId }, `client-id=${clientId}`],
      [{ 'client-id': null }, `client-id=${clientId}`],
    ];
    for (const [entity, counted] of levels) {
      const configs = new Map<string, ClientQuotaEntry>([
        [entityKey(entity), { entity, values: { consumer_byte_rate: 100 } }],
      ]);
      expect(resolveQuota(configs, principal, 'consumer_byte_rate')).toEqual({
        type: 'consumer_byte_rate',
        limit: 100,
        entity,
        counterKey: counted,
      });
    }
  });
});

describe('stored configs: writes, removal, cache and failures', () => {
  const alterOne = (configs: ClientQuotaConfigs, entity: QuotaEntity, value: number | null) =>
    configs.alter([{ entity, ops: [{ key: 'producer_byte_rate', value }] }]);

  it('reads back only the quotas that are set (no undefined entries) and reads consistently', async () => {
    const store = new ScriptedStore();
    const configs = new ClientQuotaConfigs({ store, clock: new TestClock() });
    await configs.alter([
      {
        entity: { user: 'a' },
        ops: [
          { key: 'producer_byte_rate', value: 10 },
          { key: 'controller_mutation_rate', value: 0.5 },
        ],
      },
    ]);
    expect(await configs.describe({})).toStrictEqual([
      { entity: { user: 'a' }, values: { producer_byte_rate: 10, controller_mutation_rate: 0.5 } },
    ]);
    const query = store.calls.find((c) => c.op === 'query');
    expect(query?.args[0]).toMatchObject({ consistent: true });
  });

  it('an entry with no operations writes nothing and answers nothing', async () => {
    const store = new ScriptedStore();
    const configs = new ClientQuotaConfigs({ store, clock: new TestClock() });
    expect(await configs.alter([{ entity: { user: 'a' }, ops: [] }])).toEqual([]);
    expect(store.ops()).toEqual([]);
  });

  it('setting a quota is one write: no delete while a quota is left', async () => {
    const store = new ScriptedStore();
    const configs = new ClientQuotaConfigs({ store, clock: new TestClock() });
    await configs.alter([
      {
        entity: { user: 'a' },
        ops: [
          { key: 'producer_byte_rate', value: 10 },
          { key: 'consumer_byte_rate', value: 20 },
        ],
      },
    ]);
    await alterOne(configs, { user: 'a' }, null);
    expect(store.ops()).toEqual(['update', 'update']);
    expect(await configs.describe({})).toEqual([
      { entity: { user: 'a' }, values: { consumer_byte_rate: 20 } },
    ]);
  });

  it('keeps an entity a concurrent alteration gave a quota between the removal and the delete', async () => {
    const store = new ScriptedStore();
    const configs = new ClientQuotaConfigs({ store, clock: new TestClock() });
    await alterOne(configs, { user: 'a' }, 10);
    store.onUpdate = async (key, actions, options) => {
      const after = await store.plainUpdate(key, actions, options);
      // Someone else sets consumer_byte_rate right after our removal.
      await store.plainUpdate(key, [{ set: 'consumer_byte_rate', value: 30 }]);
      return after;
    };
    expect(await alterOne(configs, { user: 'a' }, null)).toEqual([{ entity: { user: 'a' }, values: {} }]);
    store.onUpdate = undefined;
    expect(await configs.describe({})).toEqual([
      { entity: { user: 'a' }, values: { consumer_byte_rate: 30 } },
    ]);
  });

  it('passes on a store failure while deleting an emptied entity', async () => {
    const store = new ScriptedStore();
    const configs = new ClientQuotaConfigs({ store, clock: new TestClock() });
    await alterOne(configs, { user: 'a' }, 10);
    store.onDelete = async () => {
      throw new Error('throttled by the table');
    };
    await expect(alterOne(configs, { user: 'a' }, null)).rejects.toThrow('throttled by the table');
  });

  it('answers an empty entry when the store returns no item, and still removes the entity', async () => {
    const store = new ScriptedStore();
    const configs = new ClientQuotaConfigs({ store, clock: new TestClock() });
    store.onUpdate = async (key, actions, options) => {
      await store.plainUpdate(key, actions, options);
      return undefined;
    };
    expect(await alterOne(configs, { user: 'a' }, 10)).toEqual([{ entity: { user: 'a' }, values: {} }]);
    // No item came back, so the conditional delete is tried; it finds the quota and keeps the entity.
    expect(store.ops()).toEqual(['update', 'delete']);
    store.onUpdate = undefined;
    expect(await configs.describe({})).toEqual([
      { entity: { user: 'a' }, values: { producer_byte_rate: 10 } },
    ]);
  });

  it('does not cache a failed read: the next caller reads again', async () => {
    const clock = new TestClock();
    const store = new ScriptedStore();
    const configs = new ClientQuotaConfigs({ store, clock });
    await alterOne(configs, { user: 'a' }, 10);
    store.onQuery = async () => {
      throw new Error('table unavailable');
    };
    await expect(configs.all()).rejects.toThrow('table unavailable');
    store.onQuery = undefined;
    expect([...(await configs.all()).keys()]).toEqual(['user=a']);
  });

  it('a slow read that fails does not drop the newer cached read, nor fail after an alteration', async () => {
    const clock = new TestClock();
    const store = new ScriptedStore();
    const configs = new ClientQuotaConfigs({ store, clock, cacheTtlMs: 1_000 });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      let fail: (e: Error) => void = () => undefined;
      store.onQuery = () => new Promise<QueryPage>((_, reject) => (fail = reject));
      const slow = configs.all();
      store.onQuery = undefined;
      clock.time += 1_000;
      await configs.all(); // the newer read, cached
      fail(new Error('slow read failed'));
      await expect(slow).rejects.toThrow('slow read failed');
      await new Promise((r) => setImmediate(r));
      const queries = store.ops().filter((op) => op === 'query').length;
      await configs.all();
      expect(store.ops().filter((op) => op === 'query').length).toBe(queries);

      // A read in flight when an alteration clears the cache, which then fails.
      clock.time += 1_000;
      store.onQuery = () => new Promise<QueryPage>((_, reject) => (fail = reject));
      const inFlight = configs.all();
      store.onQuery = undefined;
      await alterOne(configs, { user: 'b' }, 5);
      fail(new Error('read failed after the alteration'));
      await expect(inFlight).rejects.toThrow('read failed after the alteration');
      await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('the quota manager', () => {
  const setup = async (options: { windowMs?: number; configCacheTtlMs?: number } = {}) => {
    const clock = new TestClock();
    const store = new ScriptedStore();
    const quotas = new ClientQuotaManager({ store, clock, ...options });
    return { clock, store, quotas };
  };

  it('honours a configured cache period', async () => {
    const { clock, store, quotas } = await setup({ configCacheTtlMs: 100 });
    const elsewhere = new ClientQuotaConfigs({ store, clock });
    expect(await quotas.resolve(principal, 'producer_byte_rate')).toBeUndefined();
    await elsewhere.alter([{ entity: { user: null }, ops: [{ key: 'producer_byte_rate', value: 7 }] }]);
    clock.time += 100;
    expect((await quotas.resolve(principal, 'producer_byte_rate'))?.limit).toBe(7);
  });

  it('honours a configured window: the burst it admits before throttling', async () => {
    const { quotas } = await setup({ windowMs: 2_000 });
    expect(quotas.rates.windowMs).toBe(2_000);
    await quotas.configs.alter([
      { entity: { user: null }, ops: [{ key: 'producer_byte_rate', value: 1000 }] },
    ]);
    // 3000 bytes at 1000 B/s: 3 s of quota, 2 s of it the burst, so 1 s to wait.
    expect(await quotas.admit(principal, 'producer_byte_rate', 3000)).toEqual({
      admitted: true,
      throttleTimeMs: 1000,
    });
  });

  it('a request that costs nothing (or a negative amount) is neither refused nor counted', async () => {
    const { quotas, store } = await setup();
    await quotas.configs.alter([
      { entity: { user: null }, ops: [{ key: 'producer_byte_rate', value: 1000 }] },
    ]);
    expect(await quotas.admit(principal, 'producer_byte_rate', 5000)).toEqual({
      admitted: true,
      throttleTimeMs: 4000,
    });
    const key = rateKey('producer_byte_rate', `user=${principal.user}`);
    const tat = (await store.get(key))?.['tat'];
    expect(await quotas.admit(principal, 'producer_byte_rate', 0)).toEqual({
      admitted: true,
      throttleTimeMs: 0,
    });
    expect(await quotas.admit(principal, 'producer_byte_rate', () => -5000)).toEqual({
      admitted: true,
      throttleTimeMs: 0,
    });
    expect((await store.get(key))?.['tat']).toBe(tat);
  });

  it('counts request time even while the principal is throttled', async () => {
    const { quotas } = await setup();
    await quotas.configs.alter([{ entity: { user: null }, ops: [{ key: 'request_percentage', value: 10 }] }]);
    // request_percentage 10: 100 ms of handling per second.
    const gate = (await quotas.requestTime(principal))!;
    expect(gate.throttleTimeMs).toBe(0);
    expect(await gate.record(3000)).toBe(29_000);
    const throttled = (await quotas.requestTime(principal))!;
    expect(throttled.throttleTimeMs).toBe(29_000);
    expect(await throttled.record(100)).toBe(30_000);
  });
});

describe('the shared rate at its boundaries', () => {
  const setup = () => {
    const clock = new TestClock();
    const store = new ScriptedStore();
    return { clock, store, rates: new QuotaRates({ store, clock, windowMs: 1_000 }) };
  };

  it('keeps the rate in one item per quota type and counted entity, expiring an hour after use', async () => {
    const { rates, store, clock } = setup();
    expect(rateKey('producer_byte_rate', 'user=a')).toEqual({
      pk: 'QUOTA_RATE#producer_byte_rate#user=a',
      sk: 'RATE',
    });
    await rates.record('producer_byte_rate', 'user=a', 100, 1000, { admit: true });
    expect(await store.get(rateKey('producer_byte_rate', 'user=a'))).toEqual({
      pk: 'QUOTA_RATE#producer_byte_rate#user=a',
      sk: 'RATE',
      tat: clock.time + 100,
      expiresAt: Math.ceil((clock.time + 3_600_000) / 1000),
    });
  });

  it('reads the throttle consistently', async () => {
    const { rates, store } = setup();
    await rates.record('producer_byte_rate', 'k', 3000, 1000, { admit: true });
    expect(await rates.throttled('producer_byte_rate', 'k')).toBe(2000);
    expect(store.calls.filter((c) => c.op === 'get').map((c) => c.args[1])).toEqual([{ consistent: true }]);
  });

  it('keeps up to one window of idle credit, and catches up only beyond it', async () => {
    const { rates, clock } = setup();
    const t0 = clock.time;
    await rates.record('producer_byte_rate', 'k', 100, 1000, { admit: true }); // tat = t0 + 100
    // At t0 + 1200 a 100 ms request leaves tat = t0 + 200 = now − window exactly: no catch-up.
    clock.time = t0 + 1_200;
    expect(await rates.record('producer_byte_rate', 'k', 100, 1000, { admit: true })).toEqual({
      admitted: true,
      throttleTimeMs: 0,
    });
    // So two windows of work fit before the throttle starts.
    expect(await rates.record('producer_byte_rate', 'k', 2000, 1000, { admit: true })).toEqual({
      admitted: true,
      throttleTimeMs: 0,
    });
    expect(await rates.record('producer_byte_rate', 'k', 500, 1000, { admit: true })).toEqual({
      admitted: true,
      throttleTimeMs: 500,
    });
  });

  it('after a long pause the request that catches up pays for itself', async () => {
    const { rates, clock } = setup();
    await rates.record('producer_byte_rate', 'k', 100, 1000, { admit: true });
    clock.time += 60_000;
    expect(await rates.record('producer_byte_rate', 'k', 1500, 1000, { admit: true })).toEqual({
      admitted: true,
      throttleTimeMs: 500,
    });
  });

  it('two requests that both find the entity idle catch it up once', async () => {
    const { rates, clock } = setup();
    await rates.record('producer_byte_rate', 'k', 100, 1000, { admit: true });
    clock.time += 60_000;
    const both = await Promise.all([
      rates.record('producer_byte_rate', 'k', 100, 1000, { admit: true }),
      rates.record('producer_byte_rate', 'k', 100, 1000, { admit: true }),
    ]);
    expect(both.every((d) => d.admitted)).toBe(true);
    // Caught up to now once, then both counted: tat = now + 200.
    expect(await rates.record('producer_byte_rate', 'k', 1000, 1000, { admit: true })).toEqual({
      admitted: true,
      throttleTimeMs: 200,
    });
  });

  it('passes on a store failure, whether counting or catching up', async () => {
    const { rates, store, clock } = setup();
    store.onUpdate = async () => {
      throw new Error('table unavailable');
    };
    await expect(rates.record('producer_byte_rate', 'k', 100, 1000, { admit: true })).rejects.toThrow(
      'table unavailable',
    );
    store.onUpdate = undefined;
    await rates.record('producer_byte_rate', 'k', 100, 1000, { admit: true });
    clock.time += 60_000;
    let n = 0;
    store.onUpdate = async (key, actions, options) => {
      if (n++ === 0) return store.plainUpdate(key, actions, options);
      throw new Error('catch-up failed');
    };
    await expect(rates.record('producer_byte_rate', 'k', 100, 1000, { admit: true })).rejects.toThrow(
      'catch-up failed',
    );
  });

  it('a refusal that comes back without the stored item still asks for a wait', async () => {
    const { rates, store } = setup();
    store.onUpdate = async () => {
      throw new ConditionFailedError(undefined);
    };
    expect(await rates.record('producer_byte_rate', 'k', 100, 1000, { admit: true })).toEqual({
      admitted: false,
      throttleTimeMs: 1,
    });
  });

  it('counts from now when the store answers without the item, with no catch-up write', async () => {
    const { rates, store } = setup();
    store.onUpdate = async (key, actions, options) => {
      await store.plainUpdate(key, actions, options);
      return undefined;
    };
    expect(await rates.record('producer_byte_rate', 'k', 1500, 1000, { admit: true })).toEqual({
      admitted: true,
      throttleTimeMs: 500,
    });
    expect(await rates.record('producer_byte_rate', 'k', 3000, 1000, { admit: false })).toEqual({
      admitted: true,
      throttleTimeMs: 2000,
    });
    expect(store.ops()).toEqual(['update', 'update']);
  });
});
