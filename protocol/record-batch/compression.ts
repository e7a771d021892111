import { gunzipSync, gzipSync } from 'node:zlib';
import { SluiceError } from '../errors.js';
import { COMPRESSIONS, corrupt } from './header.js';
import { compressLz4, decompressLz4 } from './lz4.js';
import { compressSnappy, decompressSnappy } from './snappy.js';
import type { Compression } from './types.js';
import { decompressZstd } from './zstd.js';

/**
 * The default cap on a batch's inflated records. A few hundred bytes of gzip or zstd can claim
 * gigabytes; stopping here turns such a "decompression bomb" into CORRUPT_MESSAGE instead of an
 * out-of-memory Lambda. Kafka's own default max.message.bytes is about 1 MiB, so 64 MiB is generous.
 */
export const MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024;

/** Throws UNSUPPORTED_COMPRESSION_TYPE unless Sluice can write batches with this codec. */
export function assertCanCompress(
  compression: Compression,
): asserts compression is Exclude<Compression, 'zstd'> {
  if (compression === 'zstd') {
    throw new SluiceError(
      'UNSUPPORTED_COMPRESSION_TYPE',
      'zstd batches can be read but not written: this Node.js has no zstd compressor',
    );
  }
  if (!COMPRESSIONS.includes(compression)) {
    throw new SluiceError('UNSUPPORTED_COMPRESSION_TYPE', `unknown compression ${String(compression)}`);
  }
}

/** Compresses a batch's records section the way Kafka's Java producer frames each codec. */
export function compressRecords(compression: Compression, data: Uint8Array): Uint8Array {
  assertCanCompress(compression);
  switch (compression) {
    case 'none':
      return data;
    case 'gzip': {
      const out = gzipSync(data);
      return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
    }
    case 'snappy':
      return compressSnappy(data);
    case 'lz4':
      return compressLz4(data);
  }
}

/** Inflates a batch's records section; any failure, or output beyond `maxBytes`, is CORRUPT_MESSAGE. */
export function decompressRecords(
  compression: Compression,
  data: Uint8Array,
  maxBytes = MAX_DECOMPRESSED_BYTES,
): Uint8Array {
  switch (compression) {
    case 'none':
      return data;
    case 'gzip':
      return gunzip(data, maxBytes);
    case 'snappy':
      return decompressSnappy(data, maxBytes);
    case 'lz4':
      return decompressLz4(data, maxBytes);
    case 'zstd':
      return decompressZstd(data, maxBytes);
  }
}

function gunzip(data: Uint8Array, maxBytes: number): Uint8Array {
  try {
    // maxOutputLength makes zlib stop as soon as the output would pass the cap.
    const out = gunzipSync(data, { maxOutputLength: Math.max(1, maxBytes) });
    if (out.length > maxBytes) throw corrupt(`gzip: inflates past the ${maxBytes}-byte limit`);
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  } catch (e) {
    if (e instanceof SluiceError) throw e;
    const code = (e as { code?: string }).code;
    if (code === 'ERR_BUFFER_TOO_LARGE') throw corrupt(`gzip: inflates past the ${maxBytes}-byte limit`);
    throw corrupt(`gzip: ${(e as Error).message}`);
  }
}
