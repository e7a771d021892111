import type { RecordHeader } from './types.js';

/** Bytes a record contributes to a fetch's maxBytes: key + value + header keys (UTF-8) and values. */
export function recordSize(r: {
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: readonly RecordHeader[];
}): number {
  let size = (r.key?.length ?? 0) + (r.value?.length ?? 0);
  for (const h of r.headers) size += utf8Length(h.key) + (h.value?.length ?? 0);
  return size;
}

/** UTF-8 length without encoding; a lone surrogate counts as the 3-byte U+FFFD that TextEncoder writes. */
export function utf8Length(s: string): number {
  let length = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) length += 1;
    else if (c < 0x800) length += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1); // NaN past the end: no low surrogate, so a lone one
      if (next >= 0xdc00 && next <= 0xdfff) {
        length += 4;
        i++;
      } else length += 3;
    } else length += 3;
  }
  return length;
}
