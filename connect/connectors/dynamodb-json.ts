/**
 * DynamoDB's typed JSON (`{"S": "a"}`, `{"N": "1.5"}`, `{"M": {...}}`) as plain JSON, the way the
 * DynamoDB Streams source writes keys and images:
 * - S, BOOL, NULL → string, boolean, null; M → object (attributes sorted by name, so one change
 *   always converts to the same bytes); L → array;
 * - N → a JSON number when that number prints back as the very same digits, otherwise the decimal
 *   string DynamoDB sent (its numbers have 38 digits of precision, a double has about 16; a string is
 *   the only lossless JSON for the rest);
 * - B → base64; SS, NS, BS → arrays of the same conversions, in the order DynamoDB returned them.
 */

import type { DynamoItem, DynamoValue } from '../../lib/ports/change-streams.js';

export type { DynamoItem, DynamoValue };

export type PlainJson = string | number | boolean | null | PlainJson[] | { [name: string]: PlainJson };

export const numberToJson = (digits: string): number | string => {
  const n = Number(digits);
  return Number.isFinite(n) && String(n) === digits ? n : digits;
};

const base64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');

export const valueToJson = (value: DynamoValue): PlainJson => {
  if (value.S !== undefined) return value.S;
  if (value.N !== undefined) return numberToJson(value.N);
  if (value.BOOL !== undefined) return value.BOOL;
  if (value.NULL !== undefined) return null;
  if (value.B !== undefined) return base64(value.B);
  if (value.M !== undefined) return itemToJson(value.M);
  if (value.L !== undefined) return value.L.map(valueToJson);
  if (value.SS !== undefined) return [...value.SS];
  if (value.NS !== undefined) return value.NS.map(numberToJson);
  if (value.BS !== undefined) return value.BS.map(base64);
  throw new Error(`unsupported DynamoDB attribute value with members ${Object.keys(value).join(', ')}`);
};

export const itemToJson = (item: DynamoItem): { [name: string]: PlainJson } => {
  const out: { [name: string]: PlainJson } = {};
  for (const name of Object.keys(item).sort()) out[name] = valueToJson(item[name]!);
  return out;
};
