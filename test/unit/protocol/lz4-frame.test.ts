/**
 * LZ4 as Kafka frames it (protocol/record-batch/lz4.ts), through compressRecords/decompressRecords:
 * frames written by the reference `lz4` tool decode to their input, ours are what that tool writes,
 * and every malformed frame or block is refused with CORRUPT_MESSAGE and a message saying what is wrong.
 * Frames are built here byte by byte: magic, FLG, BD, [content size], header checksum, blocks
 * (4-byte little-endian size, top bit = stored uncompressed), end mark, [content checksum].
 */
import xxh32 from 'lz4js/xxh32.js';
import { describe, expect, it } from 'vitest';
import { compressRecords, decompressRecords } from '../../../protocol/record-batch/compression.js';
import { errorOf } from '../../support/sluice-error.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const bytesOf = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, 'hex'));
const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('latin1');
const MAGIC = '04224d18';
const le32 = (n: number): string => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b.toString('hex');
};
/** The frame descriptor with its checksum: the second byte of XXH32 over FLG, BD and the content size. */
const descriptor = (flg: number, bd = 0x40, contentSize = ''): string => {
  const fields = bytesOf(flg.toString(16).padStart(2, '0') + bd.toString(16).padStart(2, '0') + contentSize);
  const checksum = (xxh32.hash(0, fields, 0, fields.length) >>> 8) & 0xff;
  return MAGIC + hex(fields) + checksum.toString(16).padStart(2, '0');
};
/** Kafka's descriptor: version 1, independent blocks, 64 KiB blocks, no checksums. */
const KAFKA = MAGIC + '6040' + '82';
/** Hex strings and byte arrays, joined. */
const join = (...parts: (string | Uint8Array)[]): Uint8Array =>
  Uint8Array.from(Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'hex') : p))));
const sizeOf = (part: string | Uint8Array): number =>
  typeof part === 'string' ? part.length / 2 : part.length;
const compressedBlock = (block: string | Uint8Array): Uint8Array => join(le32(sizeOf(block)), block);
const rawBlock = (data: string | Uint8Array): Uint8Array => join(le32(sizeOf(data) | 0x80000000), data);
const END = '00000000';
const frame = (...blocks: Uint8Array[]): Uint8Array => join(KAFKA, ...blocks, END);

const lz4 = (data: Uint8Array, maxBytes?: number) => decompressRecords('lz4', data, maxBytes);
const refusal = (data: Uint8Array, maxBytes?: number) => {
  const { code, message } = errorOf(() => lz4(data, maxBytes));
  return { code, message };
};
const corrupt = (message: string) => ({ code: 'CORRUPT_MESSAGE', message });

describe('lz4 frames from the reference tool', () => {
  it('reads block and content checksums and a content size (lz4 -B4 -BX --content-size)', () => {
    // 6 literals "Kafka ", a 19-byte match 6 back (it overlaps itself), 5 literals "afka!".
    const block = '6f' + hex(Buffer.from('Kafka ')) + '0600' + '00' + '50' + hex(Buffer.from('afka!'));
    const reference = join(descriptor(0x7c, 0x40, '1e00000000000000'), compressedBlock(block));
    expect(hex(reference)).toBe('04224d187c401e000000000000007b' + '10000000' + block);
    const data = join(reference, '18646024', END, '10d7aec3');
    expect(text(lz4(data))).toBe('Kafka Kafka Kafka Kafka Kafka!');
    // Kafka skips the content checksum without verifying it; the batch CRC covers these bytes anyway.
    expect(text(lz4(join(reference, '18646024', END, '00000000')))).toBe('Kafka Kafka Kafka Kafka Kafka!');
    expect(refusal(join(reference, '18646025', END, '10d7aec3'))).toEqual(corrupt('lz4: block checksum'));
    expect(refusal(join(reference, '186460'))).toEqual(corrupt('lz4: truncated block checksum'));
    // The checksum whole, and then nothing: what is missing is the next block size.
    expect(refusal(join(reference, '18646024'))).toEqual(corrupt('lz4: truncated block size'));
  });

  it('reads a run of one byte as a literal and a match one back (lz4 -B4 --no-frame-crc)', () => {
    // 1 literal, then a 94-byte match at offset 1 (15 + 75 + 4), then the 5 literals the format keeps last.
    const reference = KAFKA + '0b000000' + '1f61' + '0100' + '4b' + '50' + '6161616161' + END;
    expect(text(lz4(bytesOf(reference)))).toBe('a'.repeat(100));
    // Sluice writes the same frame, byte for byte.
    expect(hex(compressRecords('lz4', new Uint8Array(100).fill(0x61)))).toBe(reference);
  });

  it('reads literal and match lengths that spill into extra bytes, and a match 251 back', () => {
    const data = new Uint8Array(900);
    for (let i = 0; i < 300; i++) data[i] = (i * 37) % 251; // repeats after 251 bytes
    data.fill(0x7a, 300);
    // What `lz4 -B4 --no-frame-crc` writes for these 900 bytes: 251 literals (15 + 236), a 49-byte match
    // 251 back (15 + 30 + 4); 1 literal "z", a 594-byte match 1 back (15 + 255 + 255 + 65 + 4); 5 literals.
    const block =
      'ffec' +
      hex(data.subarray(0, 251)) +
      'fb00' +
      '1e' +
      '1f' +
      '7a' +
      '0100' +
      'ffff41' +
      '50' +
      '7a7a7a7a7a';
    expect(block.length / 2).toBe(269);
    expect(hex(lz4(frame(compressedBlock(block))))).toBe(hex(data));
  });
});

describe('lz4 frame descriptor', () => {
  it('refuses a frame shorter than a descriptor or with another magic (the legacy frame)', () => {
    expect(refusal(bytesOf(KAFKA.slice(0, 12)))).toEqual(corrupt('lz4: not an LZ4 frame'));
    expect(refusal(bytesOf('02214c18' + '6040' + '82' + END))).toEqual(corrupt('lz4: not an LZ4 frame'));
    // Seven bytes are a whole descriptor: what is missing then is the first block size.
    expect(refusal(bytesOf(KAFKA))).toEqual(corrupt('lz4: truncated block size'));
  });

  it('refuses versions other than 1 and reserved bits in FLG or BD', () => {
    for (const [flg, bd] of [
      [0x20, 0x40], // version 0
      [0xa0, 0x40], // version 2
      [0xe0, 0x40], // version 3
      [0x61, 0x40],
      [0x62, 0x40],
      [0x60, 0xc0],
      [0x60, 0x41],
      [0x60, 0x48],
    ] as const) {
      expect(refusal(bytesOf(descriptor(flg, bd) + END))).toEqual(
        corrupt('lz4: unsupported frame descriptor'),
      );
    }
  });

  it('refuses dependent blocks, as Kafka does', () => {
    expect(refusal(bytesOf(descriptor(0x40) + END))).toEqual(
      corrupt('lz4: dependent blocks are unsupported (as in Kafka)'),
    );
  });

  it('takes block size ids 4 to 7 (64 KiB to 4 MiB) and refuses the ones below', () => {
    expect(refusal(bytesOf(descriptor(0x60, 0x30) + END))).toEqual(corrupt('lz4: invalid block size id 3'));
    expect(refusal(bytesOf(descriptor(0x60, 0x00) + END))).toEqual(corrupt('lz4: invalid block size id 0'));
    const block = (size: number) => new Uint8Array(size).fill(0x2a);
    const stored = (bd: number, size: number) => join(descriptor(0x60, bd), rawBlock(block(size)), END);
    expect(hex(lz4(stored(0x40, 65_536)))).toBe('2a'.repeat(65_536));
    expect(refusal(stored(0x40, 65_537))).toEqual(
      corrupt('lz4: block of 65537 bytes exceeds the 65536-byte maximum'),
    );
    expect(hex(lz4(stored(0x50, 65_537)))).toBe('2a'.repeat(65_537));
    // The size is checked before the block is read, so the frame can stop right after it.
    const claim = (bd: number, size: number) => bytesOf(descriptor(0x60, bd) + le32(size));
    expect(refusal(claim(0x50, 262_145))).toEqual(
      corrupt('lz4: block of 262145 bytes exceeds the 262144-byte maximum'),
    );
    expect(refusal(claim(0x60, 1_048_577))).toEqual(
      corrupt('lz4: block of 1048577 bytes exceeds the 1048576-byte maximum'),
    );
    expect(refusal(claim(0x70, 4_194_305))).toEqual(
      corrupt('lz4: block of 4194305 bytes exceeds the 4194304-byte maximum'),
    );
    expect(refusal(claim(0x70, 4_194_304))).toEqual(corrupt('lz4: truncated block'));
  });

  it('checks the descriptor checksum, over the content size too', () => {
    expect(refusal(bytesOf(MAGIC + '6040' + '83' + END))).toEqual(corrupt('lz4: frame descriptor checksum'));
    const sized = descriptor(0x68, 0x40, '0300000000000000');
    expect(text(lz4(join(sized, rawBlock('616263'), END)))).toBe('abc');
    const wrong = sized.slice(0, -2) + (parseInt(sized.slice(-2), 16) ^ 1).toString(16).padStart(2, '0');
    expect(refusal(join(wrong, rawBlock('616263'), END))).toEqual(corrupt('lz4: frame descriptor checksum'));
    // A content size without its checksum byte, then with it and nothing after.
    expect(refusal(bytesOf(sized.slice(0, -2)))).toEqual(corrupt('lz4: truncated frame descriptor'));
    expect(refusal(bytesOf(sized))).toEqual(corrupt('lz4: truncated block size'));
  });
});

describe('lz4 blocks', () => {
  it('reads stored and compressed blocks one after another, and an empty frame', () => {
    expect(text(lz4(frame(rawBlock('616263'), compressedBlock('30646566'))))).toBe('abcdef');
    expect(lz4(frame())).toEqual(new Uint8Array(0));
    expect(lz4(frame(rawBlock('')))).toEqual(new Uint8Array(0));
  });

  it('counts every block against maxBytes', () => {
    const two = frame(rawBlock('616263'), compressedBlock('30646566'));
    expect(text(lz4(two, 6))).toBe('abcdef');
    expect(refusal(two, 5)).toEqual(corrupt('lz4: inflates past the 5-byte limit'));
    expect(refusal(two, 2)).toEqual(corrupt('lz4: inflates past the 2-byte limit'));
  });

  it('refuses a block cut short, and a frame without its end mark', () => {
    expect(refusal(join(KAFKA, le32(5 | 0x80000000), '61626364'))).toEqual(corrupt('lz4: truncated block'));
    expect(refusal(join(KAFKA, rawBlock('6162636465')))).toEqual(corrupt('lz4: truncated block size'));
    expect(refusal(join(KAFKA, rawBlock('6162636465'), '000000'))).toEqual(
      corrupt('lz4: truncated block size'),
    );
  });

  it('refuses a content checksum cut short as truncated, not as bytes after the end', () => {
    expect(refusal(bytesOf(descriptor(0x64) + END + '02c601'))).toEqual(
      corrupt('lz4: truncated content checksum'),
    );
    expect(refusal(bytesOf(descriptor(0x64) + END))).toEqual(corrupt('lz4: truncated content checksum'));
  });

  it('refuses bytes after the end mark, and after the content checksum', () => {
    expect(refusal(bytesOf(KAFKA + END + '00'))).toEqual(corrupt('lz4: bytes after the end of the frame'));
    expect(lz4(bytesOf(descriptor(0x64) + END + '02c60102'))).toEqual(new Uint8Array(0));
    expect(refusal(bytesOf(descriptor(0x64) + END + '02c60102' + '00'))).toEqual(
      corrupt('lz4: bytes after the end of the frame'),
    );
  });

  it('decodes each block on its own: a match may not reach into the previous block', () => {
    expect(refusal(frame(rawBlock('6162636465'), compressedBlock('00' + '0500' + '00')))).toEqual(
      corrupt('lz4: match reaches before the block'),
    );
  });

  // Sequences: token (literal count << 4 | match length - 4), literals, 2-byte offset, match length bytes.
  it.each([
    ['a block that ends in a match', '1061' + '0100', 'lz4: block ends without a final literal run'],
    ['a literal length cut short', 'f0', 'lz4: truncated literal length'],
    ['a literal length cut short after 255', 'f0ff', 'lz4: truncated literal length'],
    ['more literals than the block holds', '50616263', 'lz4: literals overrun the block'],
    ['a match offset cut short', '1061' + '01', 'lz4: truncated match offset'],
    ['offset 0', '1061' + '0000' + '00', 'lz4: match reaches before the block'],
    ['an offset past what was decoded', '2061620300' + '00', 'lz4: match reaches before the block'],
    ['a match length cut short', '1f61' + '0100', 'lz4: truncated match length'],
    ['a match length cut short after 255', '1f61' + '0100' + 'ff', 'lz4: truncated match length'],
  ])('refuses %s', (_name, block, message) => {
    expect(refusal(frame(compressedBlock(block)))).toEqual(corrupt(message));
  });

  it('takes a literal run of exactly 15, and a match exactly as far back as what was decoded', () => {
    const fifteen = hex(Buffer.from('abcdefghijklmno'));
    expect(text(lz4(frame(compressedBlock('f000' + fifteen))))).toBe('abcdefghijklmno');
    expect(text(lz4(frame(compressedBlock('20' + '6162' + '0200' + '10' + '7a'))))).toBe('abababz');
  });

  it('refuses a block that inflates past the 64 KiB block maximum, by a match or by literals after it', () => {
    // "a", then a match at offset 1 of 15 + 255 * n + last + 4 bytes.
    const run = (length: number) => {
      const extra = length - 4 - 15;
      return (
        '1f61' + '0100' + 'ff'.repeat(Math.floor(extra / 255)) + (extra % 255).toString(16).padStart(2, '0')
      );
    };
    expect(hex(lz4(frame(compressedBlock(run(65_535) + '00'))))).toBe('61'.repeat(65_536));
    expect(refusal(frame(compressedBlock(run(65_536) + '00')))).toEqual(
      corrupt('lz4: block inflates past its maximum size'),
    );
    expect(refusal(frame(compressedBlock(run(65_536))))).toEqual(
      corrupt('lz4: block inflates past its maximum size'),
    );
    expect(hex(lz4(frame(compressedBlock(run(65_534) + '1062'))))).toBe('61'.repeat(65_535) + '62');
    expect(refusal(frame(compressedBlock(run(65_534) + '206262')))).toEqual(
      corrupt('lz4: block inflates past its maximum size'),
    );
  });
});

describe('lz4 frames Sluice writes', () => {
  it('writes an empty input as the descriptor and the end mark', () => {
    expect(hex(compressRecords('lz4', new Uint8Array(0)))).toBe(KAFKA + END);
  });

  it('keeps a block compressed when its last match starts 12 bytes and ends 5 bytes before its end', () => {
    // The LZ4 block format's end rules, at their bounds: 4 literals, a 7-byte match 1 back (out bytes
    // 4 to 10 of 16), then the 5 literals the format wants last.
    const data = Buffer.from('aabccccccccabccc');
    expect(hex(compressRecords('lz4', data))).toBe(
      hex(join(KAFKA, compressedBlock('43' + '61616263' + '0100' + '50' + '6162636363'), END)),
    );
  });

  it('stores a block uncompressed when compressing does not make it smaller, as Kafka does', () => {
    // lz4js compresses these 16 bytes to 16 (4 literals, a 4-byte match 4 back, 8 literals).
    const data = Buffer.from('baabbaabaaaabbba');
    expect(hex(compressRecords('lz4', data))).toBe(hex(join(KAFKA, rawBlock(data), END)));
  });

  it.each([
    ['11', 'babaababaabbabbb'],
    ['10', 'bcbabcbcbcbbcaca'],
  ])('stores a block whose last match starts %s bytes before its end uncompressed', (_distance, input) => {
    const data = Buffer.from(input);
    expect(hex(compressRecords('lz4', data))).toBe(hex(join(KAFKA, rawBlock(data), END)));
    expect(text(lz4(compressRecords('lz4', data)))).toBe(input);
  });

  it('splits input into independent 64 KiB blocks, storing the ones LZ4 cannot shrink', () => {
    let x = 0x9e3779b9; // xorshift32: deterministic noise that LZ4 cannot shrink
    const noise = Uint8Array.from({ length: 65_537 }, () => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return x & 0xff;
    });
    const packed = compressRecords('lz4', noise);
    expect(hex(packed)).toBe(
      hex(join(KAFKA, rawBlock(noise.subarray(0, 65_536)), rawBlock(noise.subarray(65_536)), END)),
    );
    const zeros = new Uint8Array(2 * 65_536 + 100);
    const blocks = compressRecords('lz4', zeros);
    const view = new DataView(blocks.buffer, blocks.byteOffset, blocks.byteLength);
    const sizes: number[] = [];
    for (let pos = 7; view.getUint32(pos, true) !== 0; pos += 4 + view.getUint32(pos, true)) {
      sizes.push(view.getUint32(pos, true));
    }
    // Each block starts over with a literal: none of them refers back into the one before.
    expect(sizes).toEqual([0x10b, 0x10b, 0x0b]);
    expect(hex(blocks.subarray(11, 15))).toBe('1f000100');
    expect(hex(blocks.subarray(11 + 0x10b + 4, 11 + 0x10b + 8))).toBe('1f000100');
    expect(hex(lz4(blocks))).toBe(hex(zeros));
  });
});
