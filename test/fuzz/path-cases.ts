/**
 * Mutations of the routes without a body: path segments (topic, partition, group) and query values
 * drawn from valid names, Kafka's edge cases and arbitrary text, percent-encoded or raw.
 */
import fc from 'fast-check';
import type { JsonCase } from './json-cases.js';

const segment = fc.oneof(
  fc.constantFrom(
    'd',
    'c',
    'la',
    'nope',
    '.',
    '..',
    '%2E%2E',
    '%zz',
    'a%2Fb',
    'x'.repeat(250),
    'g'.repeat(300),
    '%00',
  ),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }).map(encodeURIComponent),
);
const number = fc.oneof(
  fc.constantFrom('', '-1', '0', '1', '2', '9007199254740993', '1e3', 'abc', '0x10', '007'),
  fc.integer({ min: -5, max: 5000 }).map(String),
);

const TEMPLATES: ((s: string, n: string, m: string) => string)[] = [
  (s, n, m) =>
    `/v1/topics/${s}/partitions/${n}/records?offset=${m}&maxBytes=${n}&maxWaitMs=${m === '' ? '0' : '1'}`,
  (s, n, m) => `/v1/topics/d/partitions/${n}/records?offset=${m}&encoding=${s}`,
  (s, n) => `/v1/topics/${s}/partitions/0/offsets?at=${n}`,
  (_, n, m) => `/v1/topics/d/partitions/${n}/offsets?at=${m === '' ? 'earliest' : m}`,
  (s) => `/v1/topics/${s}`,
  (s) => `/v1/groups/${s}`,
  (s, _, m) => `/v1/groups/${s}/offsets?topic=${m === '' ? 'd' : m}`,
  (s) => `/v1/groups/${s}/offsets?unknown=1`,
];

export const pathCase: fc.Arbitrary<JsonCase> = fc
  .record({ template: fc.constantFrom(...TEMPLATES), s: segment, n: number, m: number })
  .map(({ template, s, n, m }) => {
    const path = template(s, n, m);
    return {
      method: 'GET',
      path,
      body: new Uint8Array(),
      json: undefined,
      headers: {},
      mutation: path.slice(0, 120),
    };
  });
