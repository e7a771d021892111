/**
 * recordSize and utf8Length (protocol/record-batch/record-size.ts): the bytes a record counts against a
 * fetch's maxBytes. utf8Length must equal what TextEncoder writes for every UTF-16 string, lone
 * surrogates included (each becomes the 3-byte U+FFFD), without encoding it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { recordSize, utf8Length } from '../../../protocol/record-batch/record-size.js';

const encoded = (s: string): number => new TextEncoder().encode(s).length;
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('utf8Length', () => {
  it.each([
    ['', 0],
    ['\u007f', 1],
    ['\u0080', 2],
    ['\u07ff', 2],
    ['\u0800', 3],
    ['\ud7ff', 3],
    ['\ue000', 3],
    ['\uffff', 3],
    ['\ud800\udc00', 4], // U+10000, the first pair
    ['\udbff\udfff', 4], // U+10FFFF, the last
    ['\ud800', 3], // a lone high surrogate at the end
    ['\udbffa', 4], // a high surrogate followed by something else
    ['\ud800\udbff', 6], // two high surrogates: both lone
    ['\udbff\ue000', 6], // a high surrogate before U+E000, just past the low range
    ['\udc00', 3], // a lone low surrogate
    ['\udfff\udc00', 6],
    ['\ud7ff\udc00', 6], // U+D7FF is no high surrogate, so the low one after it is lone
    ['a\ud83d\ude00b', 6],
  ])('of %j is %i, as TextEncoder writes it', (s, length) => {
    expect(utf8Length(s)).toBe(length);
    expect(encoded(s)).toBe(length);
  });

  it('equals TextEncoder’s length for any sequence of UTF-16 code units (seeded)', () => {
    const unit = fc.oneof(
      fc.integer({ min: 0, max: 0xffff }),
      fc.integer({ min: 0xd7fe, max: 0xe001 }), // around the surrogates, where the cases are
      fc.constantFrom(0x7f, 0x80, 0x7ff, 0x800),
    );
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 12 }), (units) => {
        const s = String.fromCharCode(...units);
        expect(utf8Length(s)).toBe(encoded(s));
      }),
      { seed: 18, numRuns: 2_000 },
    );
  });
});

describe('recordSize', () => {
  it('counts key, value, header keys in UTF-8 and header values; null counts nothing', () => {
    expect(recordSize({ key: null, value: null, headers: [] })).toBe(0);
    expect(recordSize({ key: utf8('key'), value: null, headers: [] })).toBe(3);
    expect(recordSize({ key: null, value: utf8('value'), headers: [] })).toBe(5);
    expect(
      recordSize({
        key: utf8('k'),
        value: utf8('vv'),
        headers: [
          { key: 'h€', value: utf8('1234') },
          { key: 'x', value: null },
        ],
      }),
    ).toBe(1 + 2 + (1 + 3) + 4 + 1);
  });
});
