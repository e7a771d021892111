/**
 * Issue 23's surfaces for the fuzz suite: connector configs (create, update, validate) with numbers,
 * regular expressions, names and sizes drawn from Kafka's edge cases and hostile values; Streams
 * interactive-query paths; and every non-canonical spelling of every route of the route table.
 */
import fc from 'fast-check';
import { routeVariants } from '../support/path-variants.js';
import type { JsonCase } from './json-cases.js';

const S3 = {
  'connector.class': 'S3SinkConnector',
  topics: 'd',
  's3.bucket.name': 'archive',
  'flush.size': '10',
};
const JDBC = {
  'connector.class': 'JdbcSourceConnector',
  'connection.url': 'postgresql://127.0.0.1:5432/shop',
  'table.whitelist': 'customers',
  mode: 'incrementing',
  'incrementing.column.name': 'id',
  'topic.prefix': 'pg-',
};

const numbers = fc.oneof(
  fc.constantFrom(
    '0',
    '1',
    '64',
    '65',
    '2147483647',
    '2147483648',
    '-2147483649',
    '100000000',
    '1e3',
    '+5',
    ' 1',
    '',
  ),
  fc.constantFrom('9007199254740992', '99999999999999999999', '0x10', '-1', 'NaN', '١'),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
);
const regexes = fc.oneof(
  fc.constantFrom(
    '(a+)+',
    '(x+x+)+y',
    '(a|a)*b',
    '[a-z]{1,1000}',
    '(?:[a-z]{1,500}){2}',
    '(',
    '(a)\\1',
    '(?=a)',
    'd|c',
    '.*',
    '',
  ),
  fc.string({ maxLength: 40 }),
  fc.constantFrom('a', '(a*)*', '.{1,249}').map((p) => p.repeat(40)),
);
const names = fc.oneof(
  fc.constantFrom('n', 'n'.repeat(247), 'n'.repeat(248), 'a/b', 'a\u0000b', 'ü', ' '),
  fc.string({ minLength: 1, maxLength: 20 }),
);
const topicNames = fc.oneof(
  fc.constantFrom('d', 'c', 'la', 'x'.repeat(250), '..', 'a b', 'a'.repeat(40) + '!'),
  fc.string(),
);

const NUMERIC_KEYS = [
  'tasks.max',
  'flush.size',
  'errors.retry.timeout',
  'errors.retry.delay.max.ms',
  'rotate.interval.ms',
];

const mutation = fc.oneof(
  fc.record({ key: fc.constantFrom(...NUMERIC_KEYS), value: numbers }),
  regexes.map((value) => ({ key: 'topics.regex', value, extra: { topics: '' } })),
  regexes.map((value) => ({
    key: 'transforms.r.regex',
    value,
    extra: {
      transforms: 'r',
      'transforms.r.type': 'org.apache.kafka.connect.transforms.RegexRouter',
      'transforms.r.replacement': '$1',
    },
  })),
  regexes.map((value) => ({
    key: 'predicates.p.pattern',
    value,
    extra: {
      transforms: 'f',
      'transforms.f.type': 'org.apache.kafka.connect.transforms.Filter',
      'transforms.f.predicate': 'p',
      predicates: 'p',
      'predicates.p.type': 'org.apache.kafka.connect.transforms.predicates.TopicNameMatches',
    },
  })),
  topicNames.map((value) => ({ key: 'errors.deadletterqueue.topic.name', value })),
  fc.constantFrom(1, 63, 65, 600).map((kb) => ({ key: 'big.value', value: 'x'.repeat(kb * 1024) })),
);

const bytes = (value: unknown) => new Uint8Array(Buffer.from(JSON.stringify(value)));

/** A connector config with one hostile setting, sent to create, update or validate. */
export const connectCase: fc.Arbitrary<JsonCase> = fc
  .record({
    base: fc.constantFrom(S3, JDBC),
    m: mutation,
    name: names,
    route: fc.constantFrom('create', 'update', 'validate'),
  })
  .map(({ base, m, name, route }) => {
    const config: Record<string, string> = {
      ...base,
      ...('extra' in m ? (m.extra as Record<string, string>) : {}),
      [m.key]: m.value,
    };
    const plugin = base['connector.class'];
    const json = route === 'create' ? { name, config } : config;
    const path =
      route === 'create'
        ? '/v1/connect/connectors'
        : route === 'update'
          ? `/v1/connect/connectors/${encodeURIComponent(name)}/config`
          : `/v1/connect/connector-plugins/${plugin}/config/validate`;
    return {
      method: route === 'create' ? 'POST' : 'PUT',
      path,
      body: bytes(json),
      json,
      headers: { 'content-type': 'application/json' },
      mutation: `${m.key}=${m.value.slice(0, 60)}${m.value.length > 60 ? `…(${m.value.length})` : ''} name=${name.slice(0, 20)}`,
    };
  });

const segment = fc.oneof(
  fc.constantFrom('wordcount', 'counts', 'hello', 'x'.repeat(300), '%00', '%zz', '.', '..', 'a%2Fb'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }).map(encodeURIComponent),
);
const queryValue = fc.oneof(
  fc.constantFrom('', 'a', 'z', '%00', '-1', '1e9'),
  fc.string({ maxLength: 8 }).map(encodeURIComponent),
);

/** Streams interactive queries: a key, or a range, of any application and store. */
export const streamsQueryCase: fc.Arbitrary<JsonCase> = fc
  .record({ app: segment, store: segment, key: segment, from: queryValue, to: queryValue, one: fc.boolean() })
  .map(({ app, store, key, from, to, one }) => {
    const path = one
      ? `/v1/streams/${app}/stores/${store}/keys/${key}`
      : `/v1/streams/${app}/stores/${store}/keys?from=${from}&to=${to}`;
    return {
      method: 'GET',
      path,
      body: new Uint8Array(),
      json: undefined,
      headers: {},
      mutation: path.slice(0, 120),
    };
  });

const VARIANTS = routeVariants().flatMap((r) => r.variants.map((v) => ({ method: r.spec.method, ...v })));

/** A non-canonical spelling of a route's path: must answer 404 NOT_FOUND and change nothing. */
export const variantCase: fc.Arbitrary<JsonCase> = fc.constantFrom(...VARIANTS).map((v) => ({
  method: v.method,
  path: v.path,
  body: new Uint8Array(),
  json: undefined,
  headers: {},
  mutation: `path variant: ${v.kind}`,
}));
