/**
 * Zstandard frames that libzstd (so zstd-jni, so Kafka's consumers) refuses, Sluice refuses too, with
 * CORRUPT_MESSAGE: a Frame_Content_Size the frame does not hold, a Content_Checksum (low 32 bits of
 * XXH64) that does not match, and a block that decodes past Block_Maximum_Size = min(window, 128 KiB),
 * which fzstd alone would clip. Each is made by editing a frame the reference `zstd` 1.5.4 wrote; the
 * unedited frames decode to their exact input. Every edited frame here is refused by `zstd -d` too.
 */
import { describe, expect, it } from 'vitest';
import { crc32c } from '../../../protocol/record-batch/crc32c.js';
import { encodeRecordBatch } from '../../../protocol/record-batch/index.js';
import { T0, produceCluster } from '../../support/produce-support.js';
import { MAGIC, blockHeader, bytesOf, corrupt, hex, refusal, text, zstd } from './zstd-support.js';

/** `frame` with the bytes at `at` replaced by `bytes` (hex). */
const edit = (frame: string, at: number, bytes: string): string =>
  frame.slice(0, 2 * at) + bytes + frame.slice(2 * at + bytes.length);

const KAFKA = 'Kafka Kafka Kafka Kafka Kafka!';
// `zstd -3 k.txt` of KAFKA: single segment (window = content size 30, byte 5), one compressed block of
// 13 bytes at byte 6, checksum at byte 22. Then the same with --no-check and with --no-content-size
// (a 1 KiB window descriptor at byte 5 instead).
const K = '28b52ffd241e6d0000384b61666b6120210100a94b11bb3dcb20';
const K_NO_CHECK = '28b52ffd201e6d0000384b61666b6120210100a94b11';
const K_NO_SIZE = '28b52ffd04006d0000384b61666b6120210100a94b11bb3dcb20';

// 'Kafka ' × 200 (1200 bytes) with `zstd -3`: content size 1200 in 2 bytes (256 + 0x03b0); with
// --no-check; with --no-content-size (a 2 KiB window, descriptor 08 at byte 5). One compressed block.
const REPEAT = 'Kafka '.repeat(200);
const R = '28b52ffd64b0036d0000304b61666b61200100a7e42f451eaa0311';
const R_NO_CHECK = '28b52ffd60b0036d0000304b61666b61200100a7e42f45';
const R_NO_SIZE = '28b52ffd04086d0000304b61666b61200100a7e42f451eaa0311';

// 'Kafka ' × 51200 (300 KiB) with `zstd -3`: content size 307200 in 4 bytes at 5, three compressed
// blocks of 128, 128 and 44 KiB, checksum 0e490738; with --no-content-size a 512 KiB window (48).
const BIG = 'Kafka '.repeat(51_200);
const B =
  '28b52ffda400b00400740000304b61666b61200100f7ffc94b114c000008660100fcff3910024d000008610100fc2f1d0801' +
  '3807490e';
const B_NO_SIZE =
  '28b52ffd0448740000304b61666b61200100f7ffc94b114c000008660100fcff3910024d000008610100fc2f1d0801' +
  '3807490e';

// `zstd abc.txt`: one raw block.
const ABC = '28b52ffd2403190000616263990977ad';

const contentSize = (at: number, declared: number, holds: number) =>
  corrupt(`zstd: the frame at byte ${at} declares ${declared} content bytes but decodes to ${holds}`);
const checksum = (at: number, stored: string, computed: string) =>
  corrupt(
    `zstd: content checksum of the frame at byte ${at} is 0x${stored}, but its content hashes to 0x${computed}`,
  );
const oversized = (at: number, maximum: number) =>
  corrupt(
    `zstd: a block of the frame at byte ${at} decodes to more than its ${maximum}-byte Block_Maximum_Size`,
  );

describe('frames from the zstd CLI', () => {
  it('decode to their exact input with and without a checksum or a content size', () => {
    for (const frame of [K, K_NO_CHECK, K_NO_SIZE]) expect(text(zstd(frame))).toBe(KAFKA);
    for (const frame of [R, R_NO_CHECK, R_NO_SIZE]) expect(text(zstd(frame))).toBe(REPEAT);
    for (const frame of [B, B_NO_SIZE]) expect(text(zstd(frame))).toBe(BIG);
    expect(text(zstd(ABC))).toBe('abc');
  });

  it('decode one after another, each checked on its own', () => {
    const skippable = '502a4d18' + '02000000' + 'aabb';
    expect(text(zstd(K + skippable + B + ABC))).toBe(KAFKA + BIG + 'abc');
  });
});

describe('Frame_Content_Size', () => {
  it('must be what the frame holds, more or less', () => {
    expect(refusal(edit(K, 5, '1f'))).toEqual(contentSize(0, 31, 30));
    expect(refusal(edit(K_NO_CHECK, 5, '1f'))).toEqual(contentSize(0, 31, 30));
    expect(refusal(edit(R, 5, 'b103'))).toEqual(contentSize(0, 1201, 1200));
    // Over three blocks: 307201 and 307199 (the window stays above 128 KiB, so no block is too big).
    expect(refusal(edit(B, 5, '01b00400'))).toEqual(contentSize(0, 307_201, 307_200));
    expect(refusal(edit(B, 5, 'ffaf0400'))).toEqual(contentSize(0, 307_199, 307_200));
  });

  it('of 256 (2 bytes, 256 + 0) is refused for a frame of 3 bytes', () => {
    // ABC's descriptor 24 (1-byte size) becomes 64 (2-byte size, single segment, checksum).
    expect(refusal(MAGIC + '64' + '0000' + ABC.slice(12))).toEqual(contentSize(0, 256, 3));
  });

  it('one short of a single-segment frame is its window, so the block is refused as too big', () => {
    expect(refusal(edit(K, 5, '1d'))).toEqual(oversized(0, 29));
    expect(refusal(edit(K_NO_CHECK, 5, '1d'))).toEqual(oversized(0, 29));
    expect(refusal(edit(R, 5, 'af03'))).toEqual(oversized(0, 1199));
  });
});

describe('Content_Checksum', () => {
  it('is verified: one byte changed is refused, naming both values', () => {
    expect(refusal(edit(K, 25, '21'))).toEqual(checksum(0, '21cb3dbb', '20cb3dbb'));
    expect(refusal(edit(K_NO_SIZE, 22, 'ba'))).toEqual(checksum(0, '20cb3dba', '20cb3dbb'));
    expect(refusal(edit(R, 23, '1f'))).toEqual(checksum(0, '1103aa1f', '1103aa1e'));
    expect(refusal(edit(B, 50, '39'))).toEqual(checksum(0, '0e490739', '0e490738'));
  });
});

describe('Block_Maximum_Size', () => {
  it('holds a compressed block to the window: 1200 bytes in a 1 KiB window are refused', () => {
    expect(refusal(edit(R_NO_SIZE, 5, '00'))).toEqual(oversized(0, 1024));
    // 128 KiB blocks in a 64 KiB window (descriptor 30); at 128 KiB (38) they fit.
    expect(refusal(edit(B_NO_SIZE, 5, '30'))).toEqual(oversized(0, 65_536));
    expect(text(zstd(edit(B_NO_SIZE, 5, '38')))).toBe(BIG);
  });

  it('holds a block header’s size to the window: K’s block made an RLE block of 31 in a 30-byte frame', () => {
    expect(refusal(edit(K, 6, blockHeader(true, 1, 31)))).toEqual(
      corrupt('zstd: block larger than the frame allows'),
    );
  });

  const WINDOW_1KIB = MAGIC + '00' + '00'; // no content size, no checksum
  /** The header of `frame` (6 bytes), then one last compressed block of `block` (hex). */
  const withBlock = (frame: string, block: string) =>
    frame.slice(0, 12) + blockHeader(true, 2, block.length / 2) + block;
  const literals = (n: number, maximum: number) =>
    corrupt(
      `zstd: a block at byte 6 has ${n} literal bytes, more than its ${maximum}-byte Block_Maximum_Size`,
    );

  it('holds the literals a block regenerates to it, before fzstd could misplace them', () => {
    // RLE literals of "z" (Size_Format 01: 12 bits) and no sequences, in a 1 KiB window (descriptor 00).
    const rleLiterals = (n: number) => hex(Uint8Array.of(0x05 | ((n & 15) << 4), n >> 4)) + '7a' + '00';
    expect(text(zstd(withBlock(WINDOW_1KIB, rleLiterals(1024))))).toBe('z'.repeat(1024));
    expect(refusal(withBlock(WINDOW_1KIB, rleLiterals(1029)))).toEqual(literals(1029, 1024));
  });

  // Literals_Section_Header (RFC 8878 3.1.1.3.1.1): type in bits 0-1, Size_Format in bits 2-3, then
  // Regenerated_Size from bit 3 (1-byte forms) or bit 4 on. Bits beyond the size's width are set where
  // the header shares a byte with Compressed_Size, to show they are not read. K's window is 30 bytes.
  it.each([
    ['raw, Size_Format 00 (5 bits)', [0xf8], 31],
    ['RLE, Size_Format 10 (5 bits)', [0xf9], 31],
    ['raw, Size_Format 01 (12 bits)', [0xf4, 0x01], 31],
    ['raw, Size_Format 11 (20 bits)', [0x5c, 0x40, 0x02], 9_221],
    ['RLE, Size_Format 11 (20 bits)', [0x1d, 0x00, 0x01], 4_097],
    ['Huffman, Size_Format 00 (10 bits)', [0xf2, 0xff], 1_023],
    ['Huffman, Size_Format 01 (10 bits, 4 streams)', [0x16, 0x42], 33],
    ['Huffman, Size_Format 10 (14 bits)', [0x3a, 0xff, 0xff], 16_371],
    ['treeless, Size_Format 11 (18 bits)', [0x2f, 0x00, 0xff, 0x00], 258_050],
  ])('reads the literals size of a %s header', (_name, header, n) => {
    expect(refusal(withBlock(K_NO_CHECK, hex(Uint8Array.from(header)) + '00'.repeat(4)))).toEqual(
      literals(n, 30),
    );
  });

  it('refuses a compressed block shorter than its literals header', () => {
    // 0x0c: raw literals with a 3-byte header, in a 2-byte block.
    expect(refusal(withBlock(K_NO_CHECK, '0c00'))).toEqual(
      corrupt('zstd: compressed block shorter than its literals header'),
    );
  });

  it('reads the literals header of a block exactly as long as it (1 and 3 bytes), and checks its size', () => {
    expect(refusal(withBlock(K_NO_CHECK, 'f8'))).toEqual(literals(31, 30));
    expect(refusal(withBlock(K_NO_CHECK, '5c4002'))).toEqual(literals(9_221, 30));
  });
});

describe('a multi-frame payload', () => {
  it('is refused when only a later frame is bad, naming where it starts', () => {
    const skippable = '502a4d18' + '02000000' + 'aabb'; // 10 bytes, so the third frame starts at 36
    expect(refusal(K + skippable + edit(K, 25, '21'))).toEqual(checksum(36, '21cb3dbb', '20cb3dbb'));
    expect(refusal(K + edit(B, 5, '01b00400'))).toEqual(contentSize(26, 307_201, 307_200));
    expect(refusal(K + skippable + edit(R_NO_SIZE, 5, '00'))).toEqual(oversized(36, 1024));
  });
});

describe('a produce of a zstd batch', () => {
  // Two records, "Kafka Kafka Kafka" and "Kafka Kafka Kafka!" at T0: their records section
  // (encodeRecordBatch without compression, from byte 61) through `zstd -3`.
  const RECORDS = '28b52ffd2431fd0000a82e00000001224b61666b6120003000000201242100030060809ac6c42849adcb349d';
  /** The uncompressed batch's header over `payload`, with the zstd attribute and the CRC set again. */
  const zstdBatch = (payload: Uint8Array): Uint8Array => {
    const plain = encodeRecordBatch([
      { key: null, value: new Uint8Array(Buffer.from('Kafka Kafka Kafka')), timestamp: T0 },
      { key: null, value: new Uint8Array(Buffer.from('Kafka Kafka Kafka!')), timestamp: T0 },
    ]);
    const batch = new Uint8Array(61 + payload.length);
    batch.set(plain.subarray(0, 61));
    batch.set(payload, 61);
    const view = new DataView(batch.buffer);
    view.setInt32(8, batch.length - 12);
    view.setInt16(21, 4);
    view.setUint32(17, crc32c(batch, 21));
    return batch;
  };

  it('stores a good one', async () => {
    const c = await produceCluster();
    const result = await c.sluice.producer.produceBatches('t', 0, zstdBatch(bytesOf(RECORDS)), '1');
    expect(result).toEqual({ baseOffset: 0, lastOffset: 1, logAppendTime: -1, logStartOffset: 0 });
    expect(c.commits()).toHaveLength(1);
  });

  it('refuses one whose checksum does not match with CORRUPT_MESSAGE, writing nothing', async () => {
    const c = await produceCluster();
    const bad = zstdBatch(bytesOf(edit(RECORDS, 43, '9c')));
    await expect(c.sluice.producer.produceBatches('t', 0, bad, '1')).rejects.toMatchObject(
      checksum(0, '9c34cbad', '9d34cbad'),
    );
    expect(c.objectKeys()).toEqual({ s0: [] });
    expect(c.commits()).toHaveLength(0);
  });
});
