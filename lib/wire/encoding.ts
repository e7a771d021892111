/**
 * Bytes as the JSON API reads and renders them (API.md "Produce" and "Fetch": utf8, base64, json).
 * Shared by the HTTP edge, which decodes JSON produce bodies and renders stored records this way, and
 * the command line, which turns its input lines into RecordBatch bytes and renders fetched batches:
 * both read and print the same text for the same bytes.
 */
import { SluiceError } from '../../protocol/errors.js';
import type { Encoding, JsonValue } from './types.js';

/** JSON.parse, typed as what it can return: text parsed as JSON holds only JSON values. */
export const parseJson = (text: string): JsonValue => JSON.parse(text) as JsonValue;

export const encodeBytes = (bytes: Uint8Array | null, encoding: Encoding): string | null => {
  if (bytes === null) return null;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return encoding === 'base64' ? buffer.toString('base64') : buffer.toString('utf8');
};

/** Under `json` a value that parses is returned as JSON; anything else falls back to its utf8 text. */
export const encodeValue = (bytes: Uint8Array | null, encoding: Encoding): JsonValue => {
  if (encoding !== 'json') return encodeBytes(bytes, encoding);
  if (bytes === null) return null;
  const text = encodeBytes(bytes, 'utf8')!;
  try {
    return parseJson(text);
  } catch {
    return text;
  }
};

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const fromBase64 = (text: string, where: string): Uint8Array => {
  if (!BASE64.test(text)) throw new SluiceError('INVALID_REQUEST', `${where} is not valid base64`);
  return new Uint8Array(Buffer.from(text, 'base64'));
};

const utf8 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'utf8'));

/** Bytes of a key or header value: a string (or null) in utf8/base64; keys and headers stay utf8 under json. */
export const decodeBytes = (value: unknown, encoding: Encoding, where: string): Uint8Array | null => {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string')
    throw new SluiceError('INVALID_REQUEST', `${where} must be a string or null`);
  return encoding === 'base64' ? fromBase64(value, where) : utf8(value);
};

/** A record value: under `json` any JSON value, stored as its UTF-8 serialization. */
export const decodeValue = (value: unknown, encoding: Encoding, where: string): Uint8Array | null => {
  if (encoding !== 'json') return decodeBytes(value, encoding, where);
  if (value === null || value === undefined) return null;
  return utf8(JSON.stringify(value));
};
