/**
 * Converts between the metadata store's plain values and DynamoDB's typed AttributeValue wire form.
 */
import type { AttributeValue as DynamoValue } from '@aws-sdk/client-dynamodb';
import type { AttributeValue, Item } from '../../ports/metadata-store.js';
import { SluiceError } from '../../../protocol/errors.js';

export type DynamoItem = Record<string, DynamoValue>;

export const marshalValue = (value: AttributeValue): DynamoValue => {
  if (value === null) return { NULL: true };
  if (typeof value === 'string') return { S: value };
  if (typeof value === 'boolean') return { BOOL: value };
  if (typeof value === 'number') {
    if (!Number.isFinite(value))
      throw new SluiceError('UNKNOWN_SERVER_ERROR', `cannot store number ${value}`);
    return { N: String(value) };
  }
  if (value instanceof Uint8Array) return { B: value };
  if (Array.isArray(value)) return { L: value.map(marshalValue) };
  return { M: marshalItem(value) };
};

export const marshalItem = (item: { readonly [name: string]: AttributeValue | undefined }): DynamoItem => {
  const out: DynamoItem = {};
  for (const [name, value] of Object.entries(item)) if (value !== undefined) out[name] = marshalValue(value);
  return out;
};

export const unmarshalValue = (value: DynamoValue): AttributeValue => {
  if (value.S !== undefined) return value.S;
  if (value.N !== undefined) return Number(value.N);
  if (value.BOOL !== undefined) return value.BOOL;
  if (value.NULL !== undefined) return null;
  if (value.B !== undefined) return value.B;
  if (value.L !== undefined) return value.L.map(unmarshalValue);
  if (value.M !== undefined) return unmarshalMap(value.M);
  // Sluice never writes sets, but reading one someone else wrote should not crash.
  if (value.SS !== undefined) return [...value.SS];
  if (value.NS !== undefined) return value.NS.map(Number);
  if (value.BS !== undefined) return [...value.BS];
  throw new SluiceError(
    'UNKNOWN_SERVER_ERROR',
    `unsupported DynamoDB value ${JSON.stringify(Object.keys(value))}`,
  );
};

const unmarshalMap = (map: DynamoItem): { [name: string]: AttributeValue } => {
  const out: { [name: string]: AttributeValue } = {};
  for (const [name, value] of Object.entries(map)) out[name] = unmarshalValue(value);
  return out;
};

/** An item read back from DynamoDB; undefined stays undefined (no such item). */
export const unmarshalItem = (item: DynamoItem | undefined): Item | undefined =>
  item === undefined ? undefined : (unmarshalMap(item) as Item);

/**
 * An image of a DynamoDB Streams record as Lambda's event carries it (JSON: binary values are base64
 * strings, not bytes), as a plain item.
 */
export const unmarshalStreamImage = (image: Record<string, unknown> | undefined): Item | undefined => {
  if (image === undefined) return undefined;
  const bytes = (value: unknown): DynamoValue => {
    const v = value as Record<string, unknown>;
    if (typeof v['B'] === 'string') return { B: new Uint8Array(Buffer.from(v['B'], 'base64')) };
    if (Array.isArray(v['BS']))
      return { BS: (v['BS'] as string[]).map((b) => new Uint8Array(Buffer.from(b, 'base64'))) };
    if (Array.isArray(v['L'])) return { L: (v['L'] as unknown[]).map(bytes) };
    if (v['M'] !== null && typeof v['M'] === 'object')
      return { M: Object.fromEntries(Object.entries(v['M'] as object).map(([k, x]) => [k, bytes(x)])) };
    return v as unknown as DynamoValue;
  };
  return unmarshalItem(Object.fromEntries(Object.entries(image).map(([k, v]) => [k, bytes(v)])));
};
