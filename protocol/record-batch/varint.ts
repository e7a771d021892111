import { SluiceError } from '../errors.js';

/**
 * Kafka's zigzag varints (int32) and varlongs (int64), as in Java's ByteUtils. Records use them for
 * their length, deltas, key/value/header sizes and header count.
 */

const invalid = (message: string): SluiceError => new SluiceError('INVALID_RECORD', message);

export function sizeOfVarint(value: number): number {
  let v = ((value << 1) ^ (value >> 31)) >>> 0;
  let bytes = 1;
  while (v >= 0x80) {
    v >>>= 7;
    bytes++;
  }
  return bytes;
}

/** Writes `value` (an int32) at `pos`; returns the position after it. */
export function writeVarint(buf: Uint8Array, pos: number, value: number): number {
  let v = ((value << 1) ^ (value >> 31)) >>> 0;
  while (v >= 0x80) {
    buf[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[pos++] = v;
  return pos;
}

// Callers keep |value| ≤ MAX_SAFE_INTEGER, so the zigzag form fits in a double except within a factor
// of two of the limit; those rare values take the exact BigInt path.
const zigzag64 = (value: number): number | bigint => {
  const z = value >= 0 ? value * 2 : -value * 2 - 1;
  if (Number.isSafeInteger(z)) return z;
  const b = BigInt(value);
  return BigInt.asUintN(64, (b << 1n) ^ (b >> 63n));
};

export function sizeOfVarlong(value: number): number {
  let z = zigzag64(value);
  let bytes = 1;
  if (typeof z === 'bigint') {
    while (z >= 0x80n) {
      z >>= 7n;
      bytes++;
    }
    return bytes;
  }
  while (z >= 0x80) {
    z = Math.floor(z / 128);
    bytes++;
  }
  return bytes;
}

/** Writes `value` (a safe integer, as an int64) at `pos`; returns the position after it. */
export function writeVarlong(buf: Uint8Array, pos: number, value: number): number {
  let z = zigzag64(value);
  if (typeof z === 'bigint') {
    while (z >= 0x80n) {
      buf[pos++] = Number(z & 0x7fn) | 0x80;
      z >>= 7n;
    }
    buf[pos++] = Number(z);
    return pos;
  }
  while (z >= 0x80) {
    buf[pos++] = (z % 128) | 0x80;
    z = Math.floor(z / 128);
  }
  buf[pos++] = z;
  return pos;
}

/**
 * Reads a record's fields from `bytes[pos, end)`. Every read checks bounds and throws INVALID_RECORD,
 * Kafka's error for a record whose structure does not parse (a bad batch frame is CORRUPT_MESSAGE).
 */
export class ByteReader {
  pos: number;

  constructor(
    readonly bytes: Uint8Array,
    pos: number,
    readonly end: number,
  ) {
    this.pos = pos;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  readInt8(): number {
    if (this.pos >= this.end) throw invalid('record truncated');
    return (this.bytes[this.pos++]! << 24) >> 24;
  }

  /** Java's ByteUtils.readVarint: at most 5 bytes; bits past 32 are dropped the same way Java drops them. */
  readVarint(): number {
    let value = 0;
    let shift = 0;
    for (;;) {
      if (this.pos >= this.end) throw invalid('record truncated inside a varint');
      const b = this.bytes[this.pos++]!;
      if ((b & 0x80) === 0) {
        value |= b << shift;
        return (value >>> 1) ^ -(value & 1);
      }
      value |= (b & 0x7f) << shift;
      shift += 7;
      if (shift > 28) throw invalid('varint longer than 5 bytes');
    }
  }

  /** Java's ByteUtils.readVarlong (at most 10 bytes), rejecting values JavaScript cannot hold exactly. */
  readVarlong(): number {
    const start = this.pos;
    // Fast path: up to 7 bytes carry at most 49 bits, exact in a double.
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 7; i++) {
      if (this.pos >= this.end) throw invalid('record truncated inside a varlong');
      const b = this.bytes[this.pos++]!;
      value += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return value % 2 === 0 ? value / 2 : -(value + 1) / 2;
      scale *= 128;
    }
    this.pos = start;
    return this.readVarlongSlow();
  }

  // The 64 bits are kept as two 32-bit halves, in plain numbers: the same loop in BigInt arithmetic made
  // Node 20's optimizing compiler (V8 11.3) abort the process ("RepresentationChangerError") once the
  // decoder was hot.
  private readVarlongSlow(): number {
    let lo = 0;
    let hi = 0;
    for (let shift = 0; ; shift += 7) {
      if (shift > 63) throw invalid('varlong longer than 10 bytes');
      if (this.pos >= this.end) throw invalid('record truncated inside a varlong');
      const b = this.bytes[this.pos++]!;
      // Java's `value |= (b & 0x7f) << shift` on a long: bits past 64 are dropped (|= truncates to 32).
      if (shift <= 28) {
        lo |= (b & 0x7f) << shift;
        if (shift === 28) hi |= (b & 0x7f) >>> 4; // the 5th byte's top 3 bits
      } else {
        hi |= (b & 0x7f) * 2 ** (shift - 32);
      }
      if ((b & 0x80) === 0) break;
    }
    // Zigzag, (value >>> 1) ^ -(value & 1), on the halves; then high * 2^32 + low, exact within ±2^53.
    const mask = -(lo & 1);
    const high = ((hi >>> 1) ^ mask) | 0;
    const low = (((lo >>> 1) | (hi << 31)) ^ mask) >>> 0;
    const n = high * 2 ** 32 + low;
    if (!Number.isSafeInteger(n)) {
      throw invalid(`varlong ${BigInt(high) * 2n ** 32n + BigInt(low)} is beyond ±2^53`);
    }
    return n;
  }

  /** A view of the next `length` bytes. */
  readBytes(length: number): Uint8Array {
    if (length > this.end - this.pos) throw invalid(`record truncated: ${length} bytes declared`);
    const view = this.bytes.subarray(this.pos, this.pos + length);
    this.pos += length;
    return view;
  }
}
