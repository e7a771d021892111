import { gzipSync } from 'node:zlib';
import lz4 from 'lz4js';
import snappy from 'snappyjs';
import { describe, expect, it } from 'vitest';
import {
  type Compression,
  type Record,
  type RecordInput,
  MAX_DECOMPRESSED_BYTES,
  crc32c,
  decodeRecordBatch,
  encodeRecordBatch,
} from '../../../protocol/record-batch/index.js';
import { decompressRecords } from '../../../protocol/record-batch/compression.js';
import { errorOf, codeOf } from '../../support/sluice-error.js';

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** A valid batch whose records section is `payload`, claimed to be compressed with `compression`. */
function batchWithPayload(compression: Compression, payload: Uint8Array, recordCount = 1): Uint8Array {
  const codes: Compression[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
  const batch = new Uint8Array(61 + payload.length);
  const view = new DataView(batch.buffer);
  view.setInt32(8, batch.length - 12);
  view.setInt8(16, 2);
  view.setInt16(21, codes.indexOf(compression));
  view.setInt32(23, recordCount - 1);
  view.setBigInt64(43, -1n);
  view.setInt32(57, recordCount);
  batch.set(payload, 61);
  view.setUint32(17, crc32c(batch, 21));
  return batch;
}

/** Records as plain strings: vitest compares these far faster than thousands of Uint8Arrays. */
const summary = (records: Record[]) =>
  records.map((r) =>
    [
      r.offset,
      r.timestamp,
      r.key && hex(r.key),
      r.value && hex(r.value),
      r.headers.map((h) => [h.key, h.value && hex(h.value)]),
    ].join('|'),
  );

/** The records section of an uncompressed batch: what every codec must inflate back to. */
const recordsOf = (records: RecordInput[]): Uint8Array => encodeRecordBatch(records).subarray(61);

// Compressible, over several LZ4 blocks (64 KiB) and snappy chunks (32 KiB).
const large: RecordInput[] = Array.from({ length: 400 }, (_, i) => ({
  key: utf8(`key-${i % 17}`),
  value: utf8(`{"n":${i},"text":"${'lorem ipsum '.repeat(i % 60)}"}`),
  headers: i % 5 ? [] : [{ key: 'trace', value: utf8(String(i)) }],
  timestamp: 1_700_000_000_000 + i,
}));

describe.each(['gzip', 'snappy', 'lz4'] as const)('%s batches', (compression) => {
  it('shrink and decode back to the same records', () => {
    const plain = encodeRecordBatch(large);
    const packed = encodeRecordBatch(large, { compression });
    expect(packed.length).toBeLessThan(plain.length / 3);
    expect(summary(decodeRecordBatch(packed).records)).toEqual(summary(decodeRecordBatch(plain).records));
  });

  it('stop at the decompression cap with CORRUPT_MESSAGE', () => {
    const packed = encodeRecordBatch(large, { compression });
    const size = recordsOf(large).length;
    expect(decodeRecordBatch(packed, { maxDecompressedBytes: size }).records).toHaveLength(400);
    expect(codeOf(() => decodeRecordBatch(packed, { maxDecompressedBytes: size - 1 }))).toBe(
      'CORRUPT_MESSAGE',
    );
  });
});

describe('gzip', { timeout: 30_000 }, () => {
  it('refuses a bomb that would inflate past the default cap', () => {
    const bomb = gzipSync(new Uint8Array(MAX_DECOMPRESSED_BYTES + 1), { level: 1 });
    expect(bomb.length).toBeLessThan(MAX_DECOMPRESSED_BYTES / 200);
    const error = errorOf(() => decodeRecordBatch(batchWithPayload('gzip', bomb)));
    expect([error.code, error.message]).toEqual(['CORRUPT_MESSAGE', expect.stringMatching(/limit/)]);
  });

  it('reports a truncated stream as CORRUPT_MESSAGE', () => {
    const packed = gzipSync(recordsOf(large));
    expect(codeOf(() => decodeRecordBatch(batchWithPayload('gzip', packed.subarray(0, 100))))).toBe(
      'CORRUPT_MESSAGE',
    );
  });
});

describe('snappy', () => {
  const xerialHeader = '82534e415050590000000001' + '00000001';
  const xerial = (block: Uint8Array): Buffer => {
    const length = Buffer.alloc(4);
    length.writeInt32BE(block.length);
    return Buffer.concat([Buffer.from(xerialHeader, 'hex'), length, block]);
  };

  it('writes snappy-java’s xerial framing in 32 KiB chunks', () => {
    const section = encodeRecordBatch(large, { compression: 'snappy' }).subarray(61);
    expect(hex(section.subarray(0, 16))).toBe(xerialHeader);
    const view = new DataView(section.buffer, section.byteOffset, section.byteLength);
    let chunks = 0;
    for (let pos = 16; pos < section.length; pos += 4 + view.getInt32(pos)) chunks++;
    expect(chunks).toBe(Math.ceil(recordsOf(large).length / 32768));
  });

  it('also reads a bare raw block, as some clients send', () => {
    const raw = snappy.compress(recordsOf(large));
    expect(decodeRecordBatch(batchWithPayload('snappy', raw, 400)).records).toHaveLength(400);
  });

  it.each([
    // A literal whose 4-byte length has the top bit set: snappyjs alone would walk backwards ~2^31 times.
    ['a negative literal length', '0a' + 'fc' + '00000080' + '00'.repeat(10)],
    ['a copy reaching before the output', '04' + '00' + '61' + '0105'],
    ['fewer bytes than declared', '05' + '08' + '616263'],
    ['more bytes than declared', '02' + '08' + '616263'],
    ['a truncated length varint', 'ff'],
  ])('rejects %s', (_name, block) => {
    const raw = Buffer.from(block, 'hex');
    expect(codeOf(() => decompressRecords('snappy', raw))).toBe('CORRUPT_MESSAGE');
    expect(codeOf(() => decompressRecords('snappy', xerial(raw)))).toBe('CORRUPT_MESSAGE');
  });

  it('rejects a xerial chunk longer than the data', () => {
    expect(
      codeOf(() => decompressRecords('snappy', Buffer.from(xerialHeader + '00000010' + '0161', 'hex'))),
    ).toBe('CORRUPT_MESSAGE');
  });
});

describe('lz4', () => {
  const section = (records: RecordInput[]) => encodeRecordBatch(records, { compression: 'lz4' }).subarray(61);

  it('writes Kafka’s frame: version 1, independent 64 KiB blocks, no checksums', () => {
    // Every frame KafkaLZ4BlockOutputStream writes starts with these 7 bytes.
    expect(hex(section(large).subarray(0, 7))).toBe('04224d18' + '60' + '40' + '82');
    expect(hex(section(large).subarray(-4))).toBe('00000000');
  });

  it('stores an incompressible block uncompressed, as Kafka does', () => {
    let x = 0x9e3779b9; // xorshift32: deterministic noise that LZ4 cannot shrink
    const noise = Uint8Array.from({ length: 3000 }, () => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return x & 0xff;
    });
    const s = section([{ key: null, value: noise, timestamp: 0 }]);
    expect(new DataView(s.buffer, s.byteOffset).getUint32(7, true) >>> 31).toBe(1);
  });

  it('rejects a dependent-block frame (lz4js’s own writer), as Kafka does', () => {
    const dependent = lz4.compress(recordsOf(large));
    expect(dependent[4]).toBe(0x40);
    const error = errorOf(() => decompressRecords('lz4', dependent));
    expect([error.code, error.message]).toEqual(['CORRUPT_MESSAGE', expect.stringMatching(/dependent/)]);
  });

  const frame = (blocks: string) => Buffer.from('04224d18' + '6040' + '82' + blocks + '00000000', 'hex');
  it.each([
    ['a bad descriptor checksum', Buffer.from('04224d18604083' + '00000000', 'hex')],
    ['a block larger than the frame allows', frame('01000100' + '00'.repeat(65537))],
    // An uncompressed block claiming 2 GiB: lz4js's frame reader would copy undefined for 2^31 bytes.
    ['a 2 GiB block size', frame('ffffffff' + '00')],
    ['a match reaching before the block', frame('04000000' + '1061' + '0500')],
    ['a block ending in a match', frame('04000000' + '10610100')],
    ['bytes after the end mark', Buffer.concat([frame('05000000' + '4061626364'), Buffer.from('00', 'hex')])],
    ['a truncated frame', frame('05000000' + '4061626364').subarray(0, 12)],
  ])('rejects %s', (_name, data) => {
    expect(codeOf(() => decompressRecords('lz4', data))).toBe('CORRUPT_MESSAGE');
  });

  it('reads a literal-only block', () => {
    expect(Buffer.from(decompressRecords('lz4', frame('05000000' + '4061626364'))).toString()).toBe('abcd');
  });
});

describe('zstd', { timeout: 30_000 }, () => {
  // RFC 8878 frames built by hand: magic, descriptor, window descriptor, then 3-byte block headers.
  const MAGIC = '28b52ffd';
  const blockHeader = (last: boolean, type: number, size: number) => {
    const h = (size << 3) | (type << 1) | (last ? 1 : 0);
    return Buffer.from([h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff]).toString('hex');
  };
  const frame = (windowByte: string, blocks: string) =>
    Buffer.from(MAGIC + '00' + windowByte + blocks, 'hex');

  it('reads raw and RLE blocks', () => {
    const data = frame('50', blockHeader(false, 0, 3) + '616263' + blockHeader(true, 1, 4) + '7a');
    expect(Buffer.from(decompressRecords('zstd', data)).toString()).toBe('abczzzz');
  });

  it('refuses to write zstd', () => {
    expect(codeOf(() => encodeRecordBatch(large, { compression: 'zstd' }))).toBe(
      'UNSUPPORTED_COMPRESSION_TYPE',
    );
  });

  it('stops an RLE bomb (a few KB claiming 75 MB) at the default cap', () => {
    const blocks = Array.from({ length: 600 }, (_, i) => blockHeader(i === 599, 1, 128 * 1024) + '00').join(
      '',
    );
    const bomb = frame('68', blocks); // 8 MiB window
    expect(bomb.length).toBeLessThan(3000);
    const error = errorOf(() => decodeRecordBatch(batchWithPayload('zstd', bomb)));
    expect([error.code, error.message]).toEqual(['CORRUPT_MESSAGE', expect.stringMatching(/limit/)]);
  });

  it.each([
    ['a window larger than the cap', frame('f8', blockHeader(true, 0, 1) + '61')],
    ['a dictionary', Buffer.from(MAGIC + '01' + '50' + '07' + blockHeader(true, 0, 1) + '61', 'hex')],
    ['a reserved block type', frame('50', blockHeader(true, 3, 1) + '61')],
    ['a truncated block', frame('50', blockHeader(true, 0, 5) + '61')],
    ['a missing last block', frame('50', blockHeader(false, 0, 1) + '61')],
    ['a bad magic', Buffer.from('28b52ffe005001000061', 'hex')],
    ['garbage inside a compressed block', frame('50', blockHeader(true, 2, 6) + 'ffffffffffff')],
  ])('rejects %s', (_name, data) => {
    expect(codeOf(() => decompressRecords('zstd', data))).toBe('CORRUPT_MESSAGE');
  });
});
