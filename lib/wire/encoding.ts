/**
 * Bytes as the JSON API renders them (API.md "Fetch": utf8, base64, json). Shared by the HTTP edge,
 * which renders stored records this way, and the command line, which renders records it fetched as
 * RecordBatches through the SDK: both print the same text for the same bytes.
 */
import type { Encoding } from './types.js';

export const encodeBytes = (bytes: Uint8Array | null, encoding: Encoding): string | null => {
  if (bytes === null) return null;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return encoding === 'base64' ? buffer.toString('base64') : buffer.toString('utf8');
};

/** Under `json` a value that parses is returned as JSON; anything else falls back to its utf8 text. */
export const encodeValue = (bytes: Uint8Array | null, encoding: Encoding): unknown => {
  if (encoding !== 'json') return encodeBytes(bytes, encoding);
  if (bytes === null) return null;
  const text = encodeBytes(bytes, 'utf8')!;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};
