/** Helpers for the tests of Zstandard frames (zstd-frames, zstd-strict): frames as hex strings. */
import { decompressRecords } from '../../../protocol/record-batch/compression.js';
import { errorOf } from '../../support/sluice-error.js';

export const MAGIC = '28b52ffd';
export const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
export const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('latin1');
/** A 3-byte block header: bit 0 last, bits 1-2 type (0 raw, 1 RLE, 2 compressed, 3 reserved), then size. */
export const blockHeader = (last: boolean, type: number, size: number): string => {
  const h = size * 8 + type * 2 + (last ? 1 : 0);
  return hex(Uint8Array.of(h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff));
};
export const bytesOf = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, 'hex'));

/** Decodes a hex zstd payload as a batch's records section is decoded. */
export const zstd = (data: string, maxBytes?: number) => decompressRecords('zstd', bytesOf(data), maxBytes);
/** The code and message of the SluiceError decoding `data` throws. */
export const refusal = (data: string, maxBytes?: number) => {
  const { code, message } = errorOf(() => zstd(data, maxBytes));
  return { code, message };
};
export const corrupt = (message: string) => ({ code: 'CORRUPT_MESSAGE', message });
