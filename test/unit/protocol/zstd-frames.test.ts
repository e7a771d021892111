/**
 * Zstandard frames (RFC 8878) as protocol/record-batch/zstd.ts reads them through decompressRecords:
 * frames written by the reference `zstd` tool decode to their input; the frame walk that runs before
 * fzstd refuses, with CORRUPT_MESSAGE and a message saying what is wrong, every header and block that
 * is malformed or asks for more memory than the limit; and output is counted as it is decoded.
 */
import { describe, expect, it } from 'vitest';
import { MAGIC, blockHeader, corrupt, hex, refusal, text, zstd } from './zstd-support.js';

const raw = (data: string, last = true) => blockHeader(last, 0, data.length / 2) + data;
const rle = (byte: string, size: number, last = true) => blockHeader(last, 1, size) + byte;
/** A frame with a window descriptor (not single-segment), no content size, no checksum. */
const frame = (windowByte: string, ...blocks: string[]) => MAGIC + '00' + windowByte + blocks.join('');
const le = (n: number, bytes: number): string => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b.subarray(0, bytes).toString('hex');
};

const tooBig = (maxBytes: number) =>
  corrupt(`zstd: frame window or content size exceeds the ${maxBytes}-byte limit`);

// `printf 'Kafka Kafka Kafka Kafka Kafka!' | zstd -3`: from stdin, so no content size, a 2 MiB window
// (descriptor 58), a checksum; one compressed block of 13 bytes.
const COMPRESSED = '384b61666b6120210100a94b11';
const FROM_STDIN = MAGIC + '04' + '58' + blockHeader(true, 2, 13) + COMPRESSED + 'bb3dcb20';
// `zstd -3 k.txt` (the same 30 bytes from a file): single segment, content size 30 in one byte.
const FROM_FILE = MAGIC + '24' + '1e' + blockHeader(true, 2, 13) + COMPRESSED + 'bb3dcb20';
const KAFKA = 'Kafka Kafka Kafka Kafka Kafka!';

describe('zstd frames from the reference tool', () => {
  it('decodes a streamed frame and a single-segment frame of the same text', () => {
    expect(FROM_STDIN).toBe('28b52ffd04586d0000384b61666b6120210100a94b11bb3dcb20');
    expect(text(zstd(FROM_STDIN))).toBe(KAFKA);
    expect(text(zstd(FROM_FILE))).toBe(KAFKA);
    // `zstd -3 --no-check`
    expect(text(zstd(MAGIC + '00' + '58' + blockHeader(true, 2, 13) + COMPRESSED))).toBe(KAFKA);
  });

  it('takes a 2 MiB window under a 1 MiB limit (librdkafka streams zstd so), not one past 8 MiB', () => {
    expect(text(zstd(FROM_STDIN, 1024 * 1024))).toBe(KAFKA);
    expect(text(zstd(FROM_STDIN, 100))).toBe(KAFKA);
    // Window descriptor 0x68: 2^(10+13) = 8 MiB, the largest taken; 0x69 is 9 MiB.
    const window = (w: string) => MAGIC + '04' + w + blockHeader(true, 2, 13) + COMPRESSED + 'bb3dcb20';
    expect(text(zstd(window('68'), 1024 * 1024))).toBe(KAFKA);
    expect(refusal(window('69'), 1024 * 1024)).toEqual(tooBig(1024 * 1024));
    expect(text(zstd(window('69'), 16 * 1024 * 1024))).toBe(KAFKA);
  });

  it('holds a single-segment frame’s content size (its window) to maxBytes', () => {
    expect(text(zstd(FROM_FILE, 30))).toBe(KAFKA);
    expect(refusal(FROM_FILE, 29)).toEqual(tooBig(29));
  });

  it('decodes frames one after another, with skippable frames before and between them', () => {
    const abc = frame('00', raw('616263'));
    const skippable = (nibble: string, data: string) =>
      '5' + nibble + '2a4d18' + le(data.length / 2, 4) + data;
    expect(text(zstd(abc + FROM_STDIN))).toBe('abc' + KAFKA);
    expect(text(zstd(skippable('0', '') + abc + skippable('f', 'ffff') + FROM_FILE))).toBe('abc' + KAFKA);
    expect(zstd(skippable('7', '00'))).toEqual(new Uint8Array(0));
  });
});

describe('zstd frame headers', () => {
  it('refuses an empty payload and fewer than 8 bytes for a frame', () => {
    expect(refusal('')).toEqual(corrupt('zstd: empty payload'));
    expect(refusal(MAGIC + '0058' + '01')).toEqual(corrupt('zstd: truncated frame'));
    expect(refusal(FROM_STDIN + MAGIC + '005801')).toEqual(corrupt('zstd: truncated frame'));
  });

  it('refuses a skippable frame longer than the data, and takes one that ends it exactly', () => {
    expect(refusal('502a4d18' + '03000000' + 'aabb')).toEqual(corrupt('zstd: truncated skippable frame'));
    expect(zstd('502a4d18' + '02000000' + 'aabb')).toEqual(new Uint8Array(0));
    expect(zstd('502a4d18' + '00000000')).toEqual(new Uint8Array(0)); // 8 bytes: a whole frame
    expect(refusal(FROM_FILE + '502a4d18' + '03000000' + 'aabb')).toEqual(
      corrupt('zstd: truncated skippable frame'),
    );
  });

  it('refuses a bad magic (the legacy v0.7 frame, and a skippable magic outside 0x184D2A5?)', () => {
    expect(refusal('27b52ffd' + '0058' + raw('61'))).toEqual(corrupt('zstd: bad frame magic'));
    expect(refusal('602a4d18' + '00000000')).toEqual(corrupt('zstd: bad frame magic'));
  });

  it('refuses the reserved descriptor bit and every dictionary id size', () => {
    expect(refusal(MAGIC + '08' + '58' + raw('61'))).toEqual(corrupt('zstd: reserved frame header bit set'));
    for (const flag of ['01', '02', '03'])
      expect(refusal(MAGIC + flag + '58' + '07000000' + raw('61'))).toEqual(
        corrupt('zstd: dictionaries are not supported'),
      );
  });

  it('computes the window as 2^(10 + exponent) plus mantissa eighths', () => {
    // Descriptor 0x67: exponent 12, mantissa 7, so 4 MiB + 7 × 512 KiB = 7.5 MiB: under the 8 MiB floor.
    expect(text(zstd(frame('67', raw('616263')), 100))).toBe('abc');
    // Descriptor 0x69: exponent 13, mantissa 1, so 8 MiB + 1 MiB: above it, so held to maxBytes.
    const nine = frame('69', raw('616263'));
    expect(text(zstd(nine, 9 * 1024 * 1024))).toBe('abc');
    expect(refusal(nine, 9 * 1024 * 1024 - 1)).toEqual(tooBig(9 * 1024 * 1024 - 1));
  });

  // Single-segment frames whose content is one RLE block of "z": the content size is also the window.
  it.each([
    ['1 byte (flag 0)', '20', le(200, 1), 200],
    ['2 bytes, plus 256 (flag 1)', '60', le(300 - 256, 2), 300],
    ['4 bytes (flag 2)', 'a0', le(70_000, 4), 70_000],
    ['8 bytes (flag 3)', 'e0', le(5_000, 8), 5_000],
  ])('reads a content size of %s and holds it to maxBytes', (_name, descriptor, size, n) => {
    const data = MAGIC + descriptor + size + rle('7a', n);
    expect(hex(zstd(data, n))).toBe('7a'.repeat(n));
    expect(refusal(data, n - 1)).toEqual(tooBig(n - 1));
    expect(refusal(MAGIC + descriptor + size + rle('7a', n + 1))).toEqual(
      corrupt('zstd: block larger than the frame allows'),
    );
  });

  it('holds the content size of a framed window to maxBytes too', () => {
    // Flag 1 with a 1 KiB window: content size 256 + 0.
    const data = MAGIC + '40' + '00' + le(0, 2) + rle('7a', 256);
    expect(hex(zstd(data, 1024))).toBe('7a'.repeat(256));
    expect(
      refusal(MAGIC + '80' + '00' + le(2000, 4) + rle('7a', 1000, false) + rle('7a', 1000), 1500),
    ).toEqual(tooBig(1500));
  });

  it('refuses a content size cut short', () => {
    expect(refusal(MAGIC + 'e0' + le(5, 3))).toEqual(corrupt('zstd: truncated frame header'));
    expect(refusal(MAGIC + 'c0' + '00' + le(5, 2))).toEqual(corrupt('zstd: truncated frame header'));
    // Whole, and nothing after it: what is missing then is the first block header.
    expect(refusal(MAGIC + 'e0' + le(5, 8))).toEqual(corrupt('zstd: truncated block header'));
  });
});

describe('zstd blocks', () => {
  it('reads an empty last block that ends the data', () => {
    expect(zstd(frame('00', raw('')))).toEqual(new Uint8Array(0));
  });

  it('reads raw and RLE blocks in order (an RLE block stores one byte)', () => {
    expect(text(zstd(frame('00', rle('78', 2, false), raw('616263', false), rle('79', 3))))).toBe('xxabcyyy');
  });

  it('takes a block of 128 KiB and refuses one byte more, whatever the window', () => {
    const window8MiB = '68';
    expect(zstd(frame(window8MiB, rle('00', 128 * 1024)))).toHaveLength(128 * 1024);
    expect(refusal(frame(window8MiB, rle('00', 128 * 1024 + 1)))).toEqual(
      corrupt('zstd: block larger than the frame allows'),
    );
    // A 1 KiB window caps blocks at 1 KiB.
    expect(zstd(frame('00', rle('00', 1024)))).toHaveLength(1024);
    expect(refusal(frame('00', rle('00', 1025)))).toEqual(
      corrupt('zstd: block larger than the frame allows'),
    );
  });

  it('refuses a block header cut short, a reserved block type and a block cut short', () => {
    expect(refusal(MAGIC + '00' + '00' + '0100')).toEqual(corrupt('zstd: truncated block header'));
    expect(refusal(frame('00', raw('61', false)))).toEqual(corrupt('zstd: truncated block header'));
    expect(refusal(frame('00', blockHeader(true, 3, 1) + '61'))).toEqual(
      corrupt('zstd: reserved block type'),
    );
    expect(refusal(frame('00', blockHeader(true, 0, 3) + '6162'))).toEqual(corrupt('zstd: truncated block'));
    expect(refusal(frame('00', blockHeader(true, 1, 3)))).toEqual(corrupt('zstd: truncated block'));
  });

  it('reads a whole content checksum and refuses one cut short', () => {
    // XXH64("abc") is 0x44bc2cf5ad770999: the checksum is its low 32 bits, little-endian.
    expect(text(zstd(MAGIC + '04' + '00' + raw('616263') + '990977ad'))).toBe('abc');
    expect(refusal(MAGIC + '04' + '00' + raw('616263') + '000000')).toEqual(
      corrupt('zstd: truncated content checksum'),
    );
  });

  it('counts decoded output against maxBytes as it goes', () => {
    const twoKiB = frame('00', rle('61', 1024, false), rle('62', 1024));
    expect(hex(zstd(twoKiB, 2048))).toBe('61'.repeat(1024) + '62'.repeat(1024));
    expect(refusal(twoKiB, 2047)).toEqual(corrupt('zstd: inflates past the 2047-byte limit'));
    expect(refusal(twoKiB + twoKiB, 4095)).toEqual(corrupt('zstd: inflates past the 4095-byte limit'));
  });

  it('reports what fzstd cannot decode as CORRUPT_MESSAGE with its reason', () => {
    // The sequences section's first byte (after 8 bytes of raw literals) set to 0xff: a 3-byte count.
    const garbage =
      MAGIC +
      '04' +
      '58' +
      blockHeader(true, 2, 13) +
      COMPRESSED.slice(0, 16) +
      'ff' +
      COMPRESSED.slice(18) +
      'bb3dcb20';
    expect(refusal(garbage)).toEqual(corrupt('zstd: invalid zstd data'));
  });
});
