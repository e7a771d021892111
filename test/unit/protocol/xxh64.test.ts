/**
 * XXH64 with seed 0 (protocol/record-batch/xxh64.ts), the hash of Zstandard's content checksum:
 * xxHash's published vectors, and lengths on each side of the 4-, 8- and 32-byte steps of the
 * algorithm, checked against the reference `xxhsum -H1` (Debian package xxhash 0.8.1).
 */
import { describe, expect, it } from 'vitest';
import { xxh64 } from '../../../protocol/record-batch/xxh64.js';

const ascii = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'latin1'));
/** Bytes (i × 131 + 7) mod 256: every value, no run, so each lane read is distinct. */
const pattern = (n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 131 + 7) & 0xff);

describe('xxh64', () => {
  it('gives the published values for "", "a" and "abc"', () => {
    expect(xxh64(new Uint8Array())).toBe(0xef46db3751d8e999n);
    expect(xxh64(ascii('a'))).toBe(0xd24ec4f1a98c6e5bn);
    expect(xxh64(ascii('abc'))).toBe(0x44bc2cf5ad770999n);
  });

  // `python3 -c "…(i*131+7)&255…" | xxhsum -H1` for each length.
  it.each([
    [4, 0xfa212ae44b3bb23dn],
    [7, 0x2744460dd675d2c0n],
    [8, 0x994b676b71ce94ddn],
    [9, 0x572b84c18b983af8n],
    [31, 0x6711d55e306b5d8fn],
    [32, 0x07f7b8e3bc5d6e25n],
    [33, 0x09f85eeb4e1cbe9fn],
    [63, 0xb7c9968c066cb6a5n],
    [64, 0x50d4159a0411632en],
    [100, 0x9ddada11d3dc2d8fn],
    [1024, 0x5960af0c625acfb7n],
  ])('agrees with xxhsum on %i patterned bytes', (n, expected) => {
    expect(xxh64(pattern(n))).toBe(expected);
  });

  it('agrees with xxhsum on 1000 bytes of 0xff (every carry and high bit set)', () => {
    expect(xxh64(new Uint8Array(1000).fill(0xff))).toBe(0xa71ddbdffe2fe70dn);
  });

  // Expected values from a BigInt transcription of the xxHash spec (XXH64, seed 0) whose low 32 bits
  // match the Content_Checksum that `zstd --check` (1.5.4) writes for the same bytes.
  it('carries into the high half only when the low halves pass 2^32 - 1, not when they reach it', () => {
    // Lane 1 starts with low half 0xadc0b5d6; these first 4 bytes make input × P2's low half 0x523f4a29,
    // so the first round adds to exactly 0xffffffff: no carry.
    const exact = pattern(32);
    exact.set([0x07, 0xb5, 0x92, 0x22]);
    expect(xxh64(exact)).toBe(0x23e6c8e2fe5acb9an);
  });

  it('adds a length of 4 MiB as high half 0: length × 2^32 would round away low bits of the hash', () => {
    // (2^22 × 2^32 + h) is no longer exact in a double; the hash's high half before it is 0x3907f6bb.
    expect(xxh64(new Uint8Array(1 << 22))).toBe(0x639f9e1a7cbc9d28n);
  });

  it('hashes the view it is given, not the whole buffer under it', () => {
    const inside = pattern(40).subarray(3, 36);
    expect(xxh64(inside)).toBe(xxh64(Uint8Array.from(inside)));
    expect(xxh64(pattern(100).subarray(0, 33))).toBe(xxh64(pattern(33)));
  });
});
