/** The JSON API's byte encodings (API.md "Produce": utf8, base64, json). */
import { SluiceError } from '../errors.js';

export type Encoding = 'utf8' | 'base64' | 'json';

export const ENCODINGS: readonly Encoding[] = ['utf8', 'base64', 'json'];

export const parseEncoding = (raw: unknown, where: string): Encoding => {
  if (raw === undefined) return 'utf8';
  if (typeof raw !== 'string' || !ENCODINGS.includes(raw as Encoding)) {
    throw new SluiceError(
      'INVALID_REQUEST',
      `${where} must be one of ${ENCODINGS.join(', ')}, got ${JSON.stringify(raw)}`,
    );
  }
  return raw as Encoding;
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

export { encodeBytes, encodeValue } from '../wire/encoding.js';
