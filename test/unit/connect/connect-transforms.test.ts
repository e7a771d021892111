/** Kafka's SMTs and predicates with their Kafka settings, on schemaless records: exact outputs. */
import { describe, expect, it } from 'vitest';
import type { ConnectRecord } from '../../../connect/plugin.js';
import { buildChain, validateChain } from '../../../connect/transforms/chain.js';

const T = 'org.apache.kafka.connect.transforms.';
const P = 'org.apache.kafka.connect.transforms.predicates.';

const record = (over: Partial<ConnectRecord> = {}): ConnectRecord => ({
  topic: 'orders',
  kafkaPartition: 2,
  timestamp: Date.UTC(2024, 1, 29, 13, 5, 9),
  key: 'k1',
  value: { id: 7, name: 'Ada', card: '4111-1111', amount: '12.5', ok: 1 },
  headers: [{ key: 'trace', value: 'abc' }],
  ...over,
});

const chain = (config: Record<string, string>) => {
  expect(validateChain(config).flatMap((c) => c.value.errors)).toEqual([]);
  return buildChain(config);
};

describe('field transforms', () => {
  it('InsertField$Value adds topic, partition, offset, timestamp and a static field', () => {
    const apply = chain({
      transforms: 'i',
      'transforms.i.type': `${T}InsertField$Value`,
      'transforms.i.topic.field': 't',
      'transforms.i.partition.field': 'p',
      'transforms.i.offset.field': 'o',
      'transforms.i.timestamp.field': 'ts',
      'transforms.i.static.field': 'src',
      'transforms.i.static.value': 'pg',
    });
    const out = apply({ ...record(), kafkaOffset: 41 } as ConnectRecord);
    expect(out?.value).toEqual({
      id: 7,
      name: 'Ada',
      card: '4111-1111',
      amount: '12.5',
      ok: 1,
      t: 'orders',
      p: 2,
      o: 41,
      ts: Date.UTC(2024, 1, 29, 13, 5, 9),
      src: 'pg',
    });
    // A tombstone stays a tombstone; a non-map value is an error.
    expect(apply({ ...record({ value: null }), kafkaOffset: 1 } as ConnectRecord)?.value).toBeNull();
    expect(() => apply(record({ value: 'text' }))).toThrow(/requires a map value/);
  });

  it('ReplaceField$Value excludes, includes and renames', () => {
    const exclude = chain({
      transforms: 'r',
      'transforms.r.type': `${T}ReplaceField$Value`,
      'transforms.r.exclude': 'card,ok',
      'transforms.r.renames': 'name:customer,id:order_id',
    });
    expect(exclude(record())?.value).toEqual({ order_id: 7, customer: 'Ada', amount: '12.5' });
    const include = chain({
      transforms: 'r',
      'transforms.r.type': `${T}ReplaceField$Value`,
      'transforms.r.include': 'id',
    });
    expect(include(record())?.value).toEqual({ id: 7 });
    expect(
      validateChain({
        transforms: 'r',
        'transforms.r.type': `${T}ReplaceField$Value`,
        'transforms.r.renames': 'a:b:c',
      }).flatMap((c) => c.value.errors),
    ).toEqual(['Invalid value a:b:c for configuration transforms.r.renames: invalid rename mapping: a:b:c']);
  });

  it('MaskField$Value masks by type, or with a replacement', () => {
    const mask = chain({
      transforms: 'm',
      'transforms.m.type': `${T}MaskField$Value`,
      'transforms.m.fields': 'card,id,ok',
    });
    expect(mask(record())?.value).toEqual({ id: 0, name: 'Ada', card: '', amount: '12.5', ok: 0 });
    const replaced = chain({
      transforms: 'm',
      'transforms.m.type': `${T}MaskField$Value`,
      'transforms.m.fields': 'card',
      'transforms.m.replacement': '****',
    });
    expect((replaced(record())?.value as Record<string, unknown>)['card']).toBe('****');
  });

  it('Cast$Value casts fields with Java narrowing, and a whole key', () => {
    const cast = chain({
      transforms: 'c',
      'transforms.c.type': `${T}Cast$Value`,
      'transforms.c.spec': 'amount:float64,id:string,ok:boolean',
    });
    expect(cast(record())?.value).toEqual({
      id: '7',
      name: 'Ada',
      card: '4111-1111',
      amount: 12.5,
      ok: true,
    });
    const narrow = chain({
      transforms: 'c',
      'transforms.c.type': `${T}Cast$Value`,
      'transforms.c.spec': 'n:int8',
    });
    expect(narrow(record({ value: { n: 300 } }))?.value).toEqual({ n: 44 });
    const key = chain({ transforms: 'c', 'transforms.c.type': `${T}Cast$Key`, 'transforms.c.spec': 'int32' });
    expect(key(record({ key: '12' }))?.key).toBe(12);
    expect(() => key(record({ key: 'x' }))).toThrow(/cannot cast "x" to int32/);
  });

  it('ValueToKey builds the key from value fields', () => {
    const v2k = chain({
      transforms: 'k',
      'transforms.k.type': `${T}ValueToKey`,
      'transforms.k.fields': 'id,name',
    });
    expect(v2k(record())?.key).toEqual({ id: 7, name: 'Ada' });
    expect(() => v2k(record({ value: { id: 1 } }))).toThrow(/field name is not in the value/);
  });
});

describe('routing and filtering', () => {
  it('RegexRouter matches the whole topic; TimestampRouter formats the record time in UTC', () => {
    const regex = chain({
      transforms: 'r',
      'transforms.r.type': `${T}RegexRouter`,
      'transforms.r.regex': 'ord(.*)',
      'transforms.r.replacement': 'archive-$1',
    });
    expect(regex(record())?.topic).toBe('archive-ers');
    expect(regex(record({ topic: 'xorders' }))?.topic).toBe('xorders');
    const ts = chain({
      transforms: 't',
      'transforms.t.type': `${T}TimestampRouter`,
      'transforms.t.topic.format': '${topic}_${timestamp}',
      'transforms.t.timestamp.format': 'yyyy-MM-dd-HH',
    });
    expect(ts(record())?.topic).toBe('orders_2024-02-29-13');
    const byDefault = chain({ transforms: 't', 'transforms.t.type': `${T}TimestampRouter` });
    expect(byDefault(record())?.topic).toBe('orders-20240229');
  });

  it('Filter with each predicate, negated or not, and chains in order', () => {
    const tombstones = chain({
      transforms: 'drop',
      'transforms.drop.type': `${T}Filter`,
      'transforms.drop.predicate': 'tomb',
      predicates: 'tomb',
      'predicates.tomb.type': `${P}RecordIsTombstone`,
    });
    expect(tombstones(record({ value: null }))).toBeNull();
    expect(tombstones(record())?.value).toEqual(record().value);
    const onlyTraced = chain({
      transforms: 'drop',
      'transforms.drop.type': `${T}Filter`,
      'transforms.drop.predicate': 'traced',
      'transforms.drop.negate': 'true',
      predicates: 'traced',
      'predicates.traced.type': `${P}HasHeaderKey`,
      'predicates.traced.name': 'trace',
    });
    expect(onlyTraced(record())).not.toBeNull();
    expect(onlyTraced(record({ headers: [] }))).toBeNull();
    const byTopic = chain({
      transforms: 'route,drop',
      'transforms.route.type': `${T}RegexRouter`,
      'transforms.route.regex': 'orders',
      'transforms.route.replacement': 'old-orders',
      'transforms.drop.type': `${T}Filter`,
      'transforms.drop.predicate': 'old',
      predicates: 'old',
      'predicates.old.type': `${P}TopicNameMatches`,
      'predicates.old.pattern': 'old-.*',
    });
    // The router runs first, so the filter sees the renamed topic and drops the record.
    expect(byTopic(record())).toBeNull();
    expect(byTopic(record({ topic: 'users' }))?.topic).toBe('users');
  });

  it('validation names unknown classes, a missing predicate and a bad regex', () => {
    const errors = validateChain({
      transforms: 'a,b',
      'transforms.a.type': `${T}Nope`,
      'transforms.b.type': `${T}Filter`,
      'transforms.b.predicate': 'missing',
      predicates: 'p',
      'predicates.p.type': `${P}TopicNameMatches`,
      'predicates.p.pattern': '[',
    })
      .filter((c) => c.value.errors.length > 0)
      .map((c) => [c.value.name, c.value.errors[0]!.slice(0, 40)]);
    expect(errors).toEqual([
      ['transforms.a.type', `Invalid value ${T}Nope for con`.slice(0, 40)],
      ['transforms.b.predicate', 'Predicate missing is not listed in predic'.slice(0, 40)],
      ['predicates.p.pattern', 'Invalid value [ for configuration predic'],
    ]);
  });
});
