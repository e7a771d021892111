/**
 * Snappy as Kafka's Java client writes it (protocol/record-batch/snappy.ts), through compressRecords and
 * decompressRecords: raw blocks built element by element as Snappy's format description lays them out
 * (a varint length, then literals and copies with 1-, 2- and 4-byte offsets), inside snappy-java's
 * xerial framing or bare; every malformed block or frame refused with CORRUPT_MESSAGE and its message.
 */
import { describe, expect, it } from 'vitest';
import { compressRecords, decompressRecords } from '../../../protocol/record-batch/compression.js';
import { errorOf } from '../../support/sluice-error.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('latin1');
/** Hex strings and byte arrays, joined. */
const join = (...parts: (string | Uint8Array)[]): Uint8Array =>
  Uint8Array.from(Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'hex') : p))));

const varint = (n: number): string => {
  const out: number[] = [];
  for (; n >= 0x80; n = Math.floor(n / 128)) out.push((n % 128) | 0x80);
  out.push(n);
  return hex(Uint8Array.from(out));
};
/** A literal element: tag 00, length - 1 in the tag below 60, else in 1 to 4 bytes after it (tag 60 to 63). */
const literal = (data: Uint8Array | string): Uint8Array => {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
  const n = bytes.length - 1;
  if (n < 60) return join(Uint8Array.of(n << 2), bytes);
  const extra = n < 0x100 ? 1 : n < 0x10000 ? 2 : n < 0x1000000 ? 3 : 4;
  const length = Buffer.alloc(4);
  length.writeUInt32LE(n);
  return join(Uint8Array.of((59 + extra) << 2), length.subarray(0, extra), bytes);
};
/** Copy with a 1-byte offset (tag 01): length 4 to 11, offset below 2048 (its top 3 bits in the tag). */
const copy1 = (length: number, offset: number): string =>
  hex(Uint8Array.of(((offset >> 8) << 5) | ((length - 4) << 2) | 1, offset & 0xff));
/** Copy with a 2-byte offset (tag 10): length 1 to 64. */
const copy2 = (length: number, offset: number): string =>
  hex(Uint8Array.of(((length - 1) << 2) | 2, offset & 0xff, offset >> 8));
/** Copy with a 4-byte offset (tag 11): length 1 to 64. */
const copy4 = (length: number, offset: number): string => {
  const b = Buffer.alloc(5);
  b[0] = ((length - 1) << 2) | 3;
  b.writeUInt32LE(offset, 1);
  return b.toString('hex');
};
const block = (declared: number, ...elements: (string | Uint8Array)[]): Uint8Array =>
  join(varint(declared), ...elements);

const HEADER = '82534e4150505900' + '00000001' + '00000001';
const chunk = (raw: Uint8Array): Uint8Array => {
  const length = Buffer.alloc(4);
  length.writeInt32BE(raw.length);
  return join(length, raw);
};
const xerial = (...raws: Uint8Array[]): Uint8Array => join(HEADER, ...raws.map(chunk));

const snappy = (data: Uint8Array, maxBytes?: number) => decompressRecords('snappy', data, maxBytes);
const refusal = (data: Uint8Array, maxBytes?: number) => {
  const { code, message } = errorOf(() => snappy(data, maxBytes));
  return { code, message };
};
const corrupt = (message: string) => ({ code: 'CORRUPT_MESSAGE', message });

describe('snappy raw blocks', () => {
  it('reads a run as a literal and overlapping copies one back, as the reference encoder writes it', () => {
    // What snappy (and snappyjs) write for 100 × "a": 1 literal, a 64-byte copy and a 35-byte copy, offset 1.
    const raw = block(100, literal('a'), copy2(64, 1), copy2(35, 1));
    expect(hex(raw)).toBe('64' + '0061' + 'fe0100' + '8a0100');
    expect(text(snappy(raw))).toBe('a'.repeat(100));
  });

  it('reads copies with 1-, 2- and 4-byte offsets', () => {
    expect(text(snappy(block(12, literal('abcd'), copy1(8, 4))))).toBe('abcdabcdabcd');
    expect(text(snappy(block(11, literal('abcd'), copy1(4, 4), copy2(3, 2))))).toBe('abcdabcdcdc');
    expect(text(snappy(block(9, literal('abcde'), copy4(4, 5))))).toBe('abcdeabcd');
  });

  it('reads a 1-byte copy offset past 255 (its top bits in the tag)', () => {
    const start = Uint8Array.from({ length: 300 }, (_, i) => i % 256);
    const raw = block(307, literal(start), copy1(7, 300));
    expect(hex(raw.subarray(0, 6))).toBe('b302' + 'f42b01' + '00');
    expect(hex(snappy(raw))).toBe(hex(join(start, start.subarray(0, 7))));
  });

  it('reads literal lengths inline up to 60 and in 1 to 4 bytes after the tag', () => {
    const sixty = 'x'.repeat(60);
    expect(hex(literal(sixty).subarray(0, 1))).toBe('ec');
    expect(text(snappy(block(60, literal(sixty))))).toBe(sixty);
    expect(hex(literal(sixty + 'y').subarray(0, 2))).toBe('f03c');
    expect(text(snappy(block(61, literal(sixty + 'y'))))).toBe(sixty + 'y');
    // The longer forms are legal for short literals too (here "abc", 3 and 4 length bytes).
    expect(text(snappy(block(4, 'f8' + '020000' + '616263', literal('d'))))).toBe('abcd');
    expect(text(snappy(block(4, 'fc' + '02000000' + '616263', literal('d'))))).toBe('abcd');
  });

  it('takes a varint length of up to 5 bytes, refuses 6, an empty block and a truncated varint', () => {
    expect(snappy(join('8080808000'))).toEqual(new Uint8Array(0));
    for (const raw of ['', 'ff', '808080808000'])
      expect(refusal(join(raw))).toEqual(corrupt('snappy: bad uncompressed length'));
  });

  it('checks the declared length against maxBytes before decoding', () => {
    const raw = block(100, literal('a'), copy2(64, 1), copy2(35, 1));
    expect(snappy(raw, 100)).toHaveLength(100);
    expect(refusal(raw, 99)).toEqual(corrupt('snappy: inflates past the 99-byte limit'));
  });

  it.each([
    ['a literal length cut short', block(61, 'f4' + '3c'), 'snappy: truncated literal length'],
    [
      'a literal length with no literal after it',
      block(6, 'f0' + '05'),
      'snappy: literal overruns the block',
    ],
    [
      'a literal longer than the block',
      block(4, literal('abcd').subarray(0, 4)),
      'snappy: literal overruns the block',
    ],
    ['a 1-byte-offset copy cut short', block(8, literal('abcd'), '01'), 'snappy: truncated copy'],
    ['a 2-byte-offset copy cut short', block(8, literal('abcd'), '0e01'), 'snappy: truncated copy'],
    ['a 4-byte-offset copy cut short', block(8, literal('abcd'), '0f010000'), 'snappy: truncated copy'],
    ['a copy at offset 0', block(8, literal('abcd'), copy1(4, 0)), 'snappy: copy reaches before the output'],
    [
      'a copy past the output',
      block(9, literal('abcd'), copy2(5, 5)),
      'snappy: copy reaches before the output',
    ],
    [
      'a 4-byte offset past the output',
      block(8, literal('abcd'), copy4(4, 2 ** 32 - 1)),
      'snappy: copy reaches before the output',
    ],
    [
      'more output than declared',
      block(7, literal('abcd'), copy1(4, 4)),
      'snappy: output longer than declared',
    ],
    [
      'less output than declared',
      block(9, literal('abcd'), copy1(4, 4)),
      'snappy: 8 bytes decoded, 9 declared',
    ],
    ['a literal past the declared length', block(3, literal('abcd')), 'snappy: output longer than declared'],
  ])('refuses %s', (_name, raw, message) => {
    expect(refusal(raw)).toEqual(corrupt(message));
    expect(refusal(xerial(raw))).toEqual(corrupt(message));
  });

  it('takes a copy that reaches back exactly to the first byte', () => {
    expect(text(snappy(block(8, literal('abcd'), copy1(4, 4))))).toBe('abcdabcd');
  });

  it('surfaces what snappyjs refuses as CORRUPT_MESSAGE: a long-form literal length in the last 4 bytes', () => {
    // Legal Snappy (1 literal with a 1-byte length), which no encoder writes; snappyjs wants 4 bytes there.
    expect(refusal(block(1, 'f0' + '00' + '61'))).toEqual(corrupt('snappy: Invalid Snappy bitstream'));
  });
});

describe('xerial framing', () => {
  it('reads chunks one after another, and a header again in the middle (concatenated streams)', () => {
    const abc = block(3, literal('abc'));
    const d = block(1, literal('d'));
    expect(text(snappy(xerial(abc, d)))).toBe('abcd');
    expect(text(snappy(join(xerial(abc), xerial(d))))).toBe('abcd');
    expect(snappy(join(HEADER))).toEqual(new Uint8Array(0));
  });

  it('counts every chunk against maxBytes', () => {
    const two = xerial(block(3, literal('abc')), block(3, literal('def')));
    expect(text(snappy(two, 6))).toBe('abcdef');
    expect(refusal(two, 5)).toEqual(corrupt('snappy: inflates past the 2-byte limit'));
  });

  it('refuses a header cut short, a chunk length cut short, and chunks that overrun', () => {
    expect(refusal(join(HEADER.slice(0, 16)))).toEqual(corrupt('snappy: truncated xerial header'));
    expect(refusal(join(HEADER.slice(0, 30)))).toEqual(corrupt('snappy: truncated xerial header'));
    expect(refusal(join(HEADER, '000000'))).toEqual(corrupt('snappy: truncated xerial chunk length'));
    const abc = block(3, literal('abc'));
    expect(refusal(join(HEADER, '00000006', abc))).toEqual(
      corrupt('snappy: xerial chunk of 6 bytes overruns'),
    );
    expect(refusal(join(HEADER, '80000000', abc))).toEqual(
      corrupt('snappy: xerial chunk of -2147483648 bytes overruns'),
    );
    expect(text(snappy(join(HEADER, '00000005', abc)))).toBe('abc');
    // A second header cut short, after a whole chunk.
    expect(refusal(join(xerial(abc), HEADER.slice(0, 24)))).toEqual(
      corrupt('snappy: truncated xerial header'),
    );
    // A chunk of 0 bytes is a block without even its length varint.
    expect(refusal(join(HEADER, '00000000'))).toEqual(corrupt('snappy: bad uncompressed length'));
  });

  it('reads a bare raw block whose length varint starts like the xerial magic (0x82)', () => {
    const data = 'q'.repeat(130); // declared length 130: varint 82 01
    const raw = block(130, literal(data));
    expect(hex(raw.subarray(0, 2))).toBe('8201');
    expect(text(snappy(raw))).toBe(data);
  });
});

describe('snappy Sluice writes', () => {
  it('writes the xerial header and one chunk per 32 KiB, each a raw block of its own', () => {
    expect(hex(compressRecords('snappy', new Uint8Array(0)))).toBe(HEADER);
    expect(hex(compressRecords('snappy', new Uint8Array(100).fill(0x61)))).toBe(
      HEADER + '00000009' + '64' + '0061' + 'fe0100' + '8a0100',
    );
    const chunks = (size: number) => {
      const out = compressRecords('snappy', new Uint8Array(size));
      const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
      const declared: string[] = [];
      for (let pos = 16; pos < out.length; pos += 4 + view.getInt32(pos))
        declared.push(hex(out.subarray(pos + 4, pos + 7)));
      expect(hex(snappy(out))).toBe('00'.repeat(size));
      return declared;
    };
    expect(chunks(32_768)).toEqual(['808002']);
    expect(chunks(32_769)).toEqual(['808002', '010000']);
  });
});
