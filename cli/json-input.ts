/**
 * JSON the command line reads but did not write (a --file a user gave, the local stack's state file):
 * read field by field, its shape checked rather than assumed.
 */
import type { ConnectorOffset, JsonValue } from '../lib/wire/connect.js';

/** A JSON object (not null, not an array). */
export const isJsonObject = (value: unknown): value is object =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** An object's own field `name` (never one inherited, such as `__proto__`); undefined when absent. */
export const fieldOf = (value: unknown, name: string): unknown =>
  isJsonObject(value) ? Object.getOwnPropertyDescriptor(value, name)?.value : undefined;

/** An object's own fields, as [name, value] pairs; undefined when `value` is not an object. */
export const entriesOf = (value: unknown): [string, unknown][] | undefined =>
  isJsonObject(value) ? Object.keys(value).map((name) => [name, fieldOf(value, name)]) : undefined;

/**
 * A Connect config map from a file: an object of strings, with numbers and booleans taken as their
 * text, as Connect's REST API reads them. Throws an Error saying what is wrong.
 */
export const configMapOf = (value: unknown): Record<string, string> => {
  const entries = entriesOf(value);
  if (entries === undefined) throw new Error('expected a JSON object of settings');
  // Object.fromEntries defines each name as an own field: a setting named __proto__ stays a setting.
  return Object.fromEntries(
    entries.map(([name, v]) => {
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return [name, String(v)];
      throw new Error(`setting ${JSON.stringify(name)} must be a string`);
    }),
  );
};

/** A JSON value as parsed: every object's own fields, recursively; undefined when `value` is not JSON. */
const jsonValueOf = (value: unknown): JsonValue | undefined => {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (Array.isArray(value)) {
    const items = value.map(jsonValueOf);
    return items.every((item) => item !== undefined) ? items.filter((item) => item !== undefined) : undefined;
  }
  return jsonObjectOf(value);
};

const jsonObjectOf = (value: unknown): { [key: string]: JsonValue } | undefined => {
  const entries = entriesOf(value);
  if (entries === undefined) return undefined;
  const fields: [string, JsonValue][] = [];
  for (const [name, v] of entries) {
    const json = jsonValueOf(v);
    if (json === undefined) return undefined;
    fields.push([name, json]);
  }
  return Object.fromEntries(fields);
};

/**
 * KIP-875's alter body from a file: `{"offsets": [{"partition": {...}, "offset": {...} | null}, ...]}`.
 * Throws an Error saying what is wrong.
 */
export const connectorOffsetsOf = (value: unknown): ConnectorOffset[] => {
  const offsets = fieldOf(value, 'offsets');
  if (!Array.isArray(offsets))
    throw new Error('expected {"offsets": [{"partition": {...}, "offset": {...} | null}]}');
  return offsets.map((entry: unknown, i) => {
    const partition = jsonObjectOf(fieldOf(entry, 'partition'));
    const offset = fieldOf(entry, 'offset');
    const offsetMap = offset === null ? null : jsonObjectOf(offset);
    if (partition === undefined || offsetMap === undefined)
      throw new Error(`offsets[${i}] must be {"partition": {...}, "offset": {...} | null}`);
    return { partition, offset: offsetMap };
  });
};
