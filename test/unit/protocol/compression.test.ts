/**
 * The codec table (protocol/record-batch/compression.ts): which codecs Sluice writes, the pass-through
 * for none, and gzip's inflation cap, with the exact CORRUPT_MESSAGE each failure becomes.
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  assertCanCompress,
  compressRecords,
  decompressRecords,
} from '../../../protocol/record-batch/compression.js';
import type { Compression } from '../../../protocol/record-batch/index.js';
import { errorOf } from '../../support/sluice-error.js';

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
const refusal = (fn: () => unknown) => {
  const { code, message } = errorOf(fn);
  return { code, message };
};
const corrupt = (message: string) => ({ code: 'CORRUPT_MESSAGE', message });
const unsupported = (message: string) => ({ code: 'UNSUPPORTED_COMPRESSION_TYPE', message });
const NO_ZSTD = unsupported('zstd batches can be read but not written: this Node.js has no zstd compressor');

describe('the codecs Sluice writes', () => {
  it('writes none, gzip, snappy and lz4, each decoding back to its input', () => {
    const data = utf8('records '.repeat(50));
    for (const codec of ['none', 'gzip', 'snappy', 'lz4'] as const) {
      assertCanCompress(codec);
      expect(text(decompressRecords(codec, compressRecords(codec, data)))).toBe('records '.repeat(50));
    }
  });

  it('passes none through untouched, the same array both ways', () => {
    const data = utf8('as is');
    expect(compressRecords('none', data)).toBe(data);
    expect(decompressRecords('none', data)).toBe(data);
  });

  it('refuses to write zstd, and any codec it does not know', () => {
    expect(refusal(() => assertCanCompress('zstd'))).toEqual(NO_ZSTD);
    expect(refusal(() => compressRecords('zstd', utf8('x')))).toEqual(NO_ZSTD);
    const brotli = 'brotli' as unknown as Compression;
    expect(refusal(() => assertCanCompress(brotli))).toEqual(unsupported('unknown compression brotli'));
    expect(refusal(() => compressRecords(brotli, utf8('x')))).toEqual(
      unsupported('unknown compression brotli'),
    );
  });
});

describe('gzip', () => {
  const hundred = gzipSync(new Uint8Array(100).fill(0x61));

  it('inflates exactly maxBytes and refuses one byte less', () => {
    expect(text(decompressRecords('gzip', hundred, 100))).toBe('a'.repeat(100));
    expect(refusal(() => decompressRecords('gzip', hundred, 99))).toEqual(
      corrupt('gzip: inflates past the 99-byte limit'),
    );
  });

  it('takes a zero-byte limit: an empty member passes, one byte does not', () => {
    expect(decompressRecords('gzip', gzipSync(new Uint8Array(0)), 0)).toEqual(new Uint8Array(0));
    expect(refusal(() => decompressRecords('gzip', gzipSync(utf8('a')), 0))).toEqual(
      corrupt('gzip: inflates past the 0-byte limit'),
    );
  });

  it('reads concatenated members as one stream, the limit over all of them', () => {
    const two = Buffer.concat([gzipSync(utf8('first ')), gzipSync(utf8('second'))]);
    expect(text(decompressRecords('gzip', two, 12))).toBe('first second');
    expect(refusal(() => decompressRecords('gzip', two, 11))).toEqual(
      corrupt('gzip: inflates past the 11-byte limit'),
    );
  });

  it('stops inflating at the limit: a stream damaged past it is refused as too large, not read on', () => {
    const mebibyte = gzipSync(new Uint8Array(1 << 20));
    const damaged = mebibyte.subarray(0, mebibyte.length >> 1); // cut in the middle of the deflate data
    expect(refusal(() => decompressRecords('gzip', damaged, 1000))).toEqual(
      corrupt('gzip: inflates past the 1000-byte limit'),
    );
    expect(refusal(() => decompressRecords('gzip', damaged, 2 << 20))).toEqual(
      corrupt('gzip: unexpected end of file'),
    );
  });

  it('reports what zlib refuses with zlib’s reason', () => {
    expect(refusal(() => decompressRecords('gzip', utf8('not gzip at all')))).toEqual(
      corrupt('gzip: incorrect header check'),
    );
    expect(refusal(() => decompressRecords('gzip', hundred.subarray(0, 15)))).toEqual(
      corrupt('gzip: unexpected end of file'),
    );
  });
});
