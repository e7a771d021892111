/**
 * Kafka's message definitions as data. Each API's request and response is a list of fields with the
 * facts of Kafka's JSON message definitions (clients/src/main/resources/common/message): name, type,
 * the versions it exists in, the versions it may be null in, its tag when it is a tagged field, and
 * its default. codec.ts reads and writes any message from such a table; no API has its own parser.
 */

/** A version range as Kafka writes it: "3+", "0-4", "5", or "none". */
export type Versions = string;

export type Primitive =
  | 'int8'
  | 'int16'
  | 'uint16'
  | 'int32'
  | 'int64'
  | 'float64'
  | 'bool'
  | 'uuid'
  | 'string'
  | 'bytes'
  /** A record set: bytes on the wire, kept as the raw RecordBatch bytes. */
  | 'records';

export type FieldType = Primitive | { array: Primitive } | { struct: Field[]; array?: true };

export interface Field {
  /** Kafka's field name in camelCase (ApiKeys → apiKeys). */
  name: string;
  type: FieldType;
  versions: Versions;
  /** Versions in which the value may be null (strings, bytes, records, arrays). */
  nullable?: Versions;
  /** The tag of a tagged field (then `taggedVersions` says where it may appear). */
  tag?: number;
  taggedVersions?: Versions;
  /** The value when absent from a version, or when not given on encode. */
  default?: number | boolean | string | null;
}

export interface MessageSchema {
  apiKey: number;
  /** Kafka's API name, e.g. `Produce`. */
  name: string;
  /** Every version Kafka defines for the message (we can read and answer all of them). */
  validVersions: Versions;
  /** Versions using compact encodings, tagged fields and header v2 / v1. */
  flexibleVersions: Versions;
  request: Field[];
  response: Field[];
}

export interface VersionRange {
  min: number;
  max: number;
}

const cache = new Map<string, VersionRange | null>();

/** Parses "3+", "0-4", "5" or "none". */
export function parseVersions(v: Versions): VersionRange | null {
  const hit = cache.get(v);
  if (hit !== undefined) return hit;
  let range: VersionRange | null;
  if (v === 'none') range = null;
  else if (v.endsWith('+')) range = { min: Number(v.slice(0, -1)), max: 0x7fff };
  else if (v.includes('-')) {
    const [a, b] = v.split('-');
    range = { min: Number(a), max: Number(b) };
  } else range = { min: Number(v), max: Number(v) };
  if (range && (!Number.isInteger(range.min) || !Number.isInteger(range.max)))
    throw new Error(`bad version range ${v}`);
  cache.set(v, range);
  return range;
}

export function inVersions(version: number, v: Versions | undefined): boolean {
  if (v === undefined) return false;
  const range = parseVersions(v);
  return range !== null && version >= range.min && version <= range.max;
}

// Small constructors so that the tables read like Kafka's JSON.
type Opts = Omit<Field, 'name' | 'type' | 'versions'>;
export const f = (name: string, type: FieldType, versions: Versions = '0+', opts: Opts = {}): Field => ({
  name,
  type,
  versions,
  ...opts,
});
export const arrayOf = (fields: Field[]): FieldType => ({ struct: fields, array: true });
export const struct = (fields: Field[]): FieldType => ({ struct: fields });
export const tagged = (
  name: string,
  type: FieldType,
  tag: number,
  taggedVersions: Versions,
  opts: Opts = {},
): Field => ({ name, type, versions: taggedVersions, tag, taggedVersions, ...opts });
