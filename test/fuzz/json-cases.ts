/**
 * Mutations of every JSON route's body: a valid body, then subtrees replaced by arbitrary JSON, fields
 * dropped or added, values swapped for edge cases (deep nesting, huge strings, unpaired surrogates,
 * numbers past 2^53), or the serialized bytes themselves damaged (invalid UTF-8, truncation).
 */
import fc from 'fast-check';

export interface JsonCase {
  method: string;
  path: string;
  body: Uint8Array;
  /** The parsed body when it is JSON, for the produce round-trip check. */
  json: unknown;
  headers: Record<string, string>;
  mutation: string;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const ROUTES: { method: string; path: string; body: Json }[] = [
  {
    method: 'POST',
    path: '/v1/topics',
    body: { name: 'fz', partitions: 2, configs: { 'retention.ms': '60000' } },
  },
  { method: 'PATCH', path: '/v1/topics/d', body: { configs: { 'retention.ms': '3600000' } } },
  {
    method: 'POST',
    path: '/v1/topics/d/records',
    body: {
      records: [
        {
          key: 'k',
          value: 'v',
          headers: [{ key: 'h', value: 'x' }],
          partition: 0,
          timestamp: 1_700_000_000_000,
        },
        { value: 'w' },
      ],
      encoding: 'utf8',
      acks: 'all',
    },
  },
  {
    method: 'POST',
    path: '/v1/topics/d/records',
    body: { records: [{ key: 'AAE=', value: '/w==' }], encoding: 'base64' },
  },
  {
    method: 'POST',
    path: '/v1/topics/d/records',
    body: { records: [{ key: 'j', value: { a: [1, 'two', null] } }], encoding: 'json' },
  },
  { method: 'POST', path: '/v1/producers', body: {} },
  {
    method: 'POST',
    path: '/v1/groups/fg/heartbeat',
    body: {
      memberId: null,
      memberEpoch: 0,
      instanceId: null,
      subscribedTopics: ['d'],
      ownedPartitions: [],
      rebalanceTimeoutMs: 60000,
      serverAssignor: 'uniform',
    },
  },
  {
    method: 'POST',
    path: '/v1/groups/fo/offsets',
    body: { offsets: [{ topic: 'd', partition: 0, offset: 0, metadata: '' }] },
  },
  { method: 'POST', path: '/v1/groups/fr/offsets/reset', body: { topic: 'd', to: 'earliest' } },
];

const edgeValue: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(
    null,
    true,
    -1,
    0,
    0.5,
    1e308,
    -1e308,
    2 ** 53 + 2,
    -(2 ** 31),
    '',
    '.',
    '..',
    'a'.repeat(300),
    [],
    {},
  ),
  fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>,
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.integer({ min: 1, max: 4 }).map((n) => '\ud800'.repeat(n)),
  fc.integer({ min: 60, max: 3000 }).map((depth) => {
    let v: Json = 1;
    for (let i = 0; i < depth; i++) v = [v];
    return v;
  }),
);

/** Every path (list of keys / indexes) to a node of the value. */
const paths = (value: Json, prefix: (string | number)[] = []): (string | number)[][] => {
  const out: (string | number)[][] = [prefix];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...paths(v, [...prefix, i])));
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...prefix, k]));
  return out;
};

const replaceAt = (value: Json, path: readonly (string | number)[], next: Json | undefined): Json => {
  if (path.length === 0) return next ?? null;
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    const copy = [...value];
    if (rest.length === 0 && next === undefined) copy.splice(head as number, 1);
    else copy[head as number] = replaceAt(copy[head as number]!, rest, next);
    return copy;
  }
  const copy = { ...(value as Record<string, Json>) };
  if (rest.length === 0 && next === undefined) delete copy[head as string];
  else copy[head as string] = replaceAt(copy[head as string]!, rest, next);
  return copy;
};

/** A damaged body may still be JSON (a byte changed inside a string): then the oracle checks it too. */
const parseOrUndefined = (body: Uint8Array): unknown => {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    return undefined;
  }
};

const encode = (value: Json): Uint8Array => new Uint8Array(Buffer.from(JSON.stringify(value), 'utf8'));

export const jsonCase: fc.Arbitrary<JsonCase> = fc
  .record({
    route: fc.constantFrom(...ROUTES),
    kind: fc.constantFrom('none', 'replace', 'replace', 'replace', 'drop', 'add', 'bytes'),
    pick: fc.nat(),
    value: edgeValue,
    byte: fc.constantFrom(0x80, 0xc0, 0xff, 0xed, 0x00, 0x7b),
    // A few keys shared by many different bodies: reuses must be refused, retries answered alike.
    idempotencyKey: fc.option(fc.constantFrom('k1', 'k2', 'k3'), { nil: undefined, freq: 2 }),
  })
  .map(({ route, kind, pick, value, byte, idempotencyKey }) => {
    const headers: Record<string, string> =
      idempotencyKey !== undefined && route.path.endsWith('/records')
        ? { 'idempotency-key': idempotencyKey }
        : {};
    const base = { method: route.method, path: route.path, headers };
    const all = paths(route.body);
    const at = all[pick % all.length]!;
    if (kind === 'bytes') {
      const text = encode(route.body);
      const copy = Buffer.from(text);
      const i = pick % copy.length;
      copy[i] = byte;
      const truncated = pick % 3 === 0;
      const body = truncated ? copy.subarray(0, i) : copy;
      return {
        ...base,
        body: new Uint8Array(body),
        json: parseOrUndefined(body),
        mutation: truncated ? `truncated at ${i}` : `byte ${i}=0x${byte.toString(16)}`,
      };
    }
    let json: Json = route.body;
    let mutation = 'valid body';
    if (kind === 'replace') {
      json = replaceAt(route.body, at, value);
      mutation = `${JSON.stringify(at)} := ${JSON.stringify(value)?.slice(0, 60)}`;
    } else if (kind === 'drop' && at.length > 0) {
      json = replaceAt(route.body, at, undefined);
      mutation = `${JSON.stringify(at)} dropped`;
    } else if (kind === 'add') {
      json = replaceAt(route.body, [...at.slice(0, -1), 'unknownField'], value);
      mutation = `unknownField added at ${JSON.stringify(at.slice(0, -1))}`;
    }
    return { ...base, body: encode(json), json, mutation };
  });
