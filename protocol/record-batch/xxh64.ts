/**
 * XXH64 with seed 0, the hash behind Zstandard's Content_Checksum (RFC 8878 §3.1.1: its low 32 bits).
 *
 * Written here rather than taken from npm: the pure-JS packages are either XXH32 only (js-xxhash),
 * unmaintained and built on an object-per-value 64-bit type (xxhashjs), or BigInt-based, and BigInt
 * allocates on every operation, which is too slow for 1 MiB batches on the produce and fetch path.
 * So each 64-bit value is two unsigned 32-bit halves in a Uint32Array (`hi` at i, `lo` at i + 1), and
 * the arithmetic below works on those pairs in place, modulo 2^64.
 */

const half = (v: bigint): [number, number] => [Number(v >> 32n), Number(v & 0xffffffffn)];
const [P1_HI, P1_LO] = half(0x9e3779b185ebca87n);
const [P2_HI, P2_LO] = half(0xc2b2ae3d27d4eb4fn);
const [P3_HI, P3_LO] = half(0x165667b19e3779f9n);
const [P4_HI, P4_LO] = half(0x85ebca77c2b2ae63n);
const [P5_HI, P5_LO] = half(0x27d4eb2f165667c5n);
// Seed 0: the four lanes start at P1 + P2, P2, 0 and -P1 (mod 2^64).
const [V1_HI, V1_LO] = half(BigInt.asUintN(64, 0x9e3779b185ebca87n + 0xc2b2ae3d27d4eb4fn));
const [V4_HI, V4_LO] = half(BigInt.asUintN(64, -0x9e3779b185ebca87n));

// Slots of the state array: four lanes, the hash, and a scratch value.
const V1 = 0;
const V2 = 2;
const V3 = 4;
const V4 = 6;
const H = 8;
const T = 10;

/** The high 32 bits of the 64-bit product of two unsigned 32-bit numbers (16-bit pieces stay exact). */
function mulHigh32(a: number, b: number): number {
  const a1 = a >>> 16;
  const a0 = a & 0xffff;
  const b1 = b >>> 16;
  const b0 = b & 0xffff;
  return a1 * b1 + Math.floor((a1 * b0 + a0 * b1 + ((a0 * b0) >>> 16)) / 0x10000);
}

function mul(s: Uint32Array, i: number, hi: number, lo: number): void {
  const aHi = s[i]!;
  const aLo = s[i + 1]!;
  s[i] = mulHigh32(aLo, lo) + Math.imul(aLo, hi) + Math.imul(aHi, lo);
  s[i + 1] = Math.imul(aLo, lo);
}

function add(s: Uint32Array, i: number, hi: number, lo: number): void {
  const sum = s[i + 1]! + lo;
  s[i] = s[i]! + hi + (sum > 0xffffffff ? 1 : 0);
  s[i + 1] = sum;
}

function xor(s: Uint32Array, i: number, hi: number, lo: number): void {
  s[i] = s[i]! ^ hi;
  s[i + 1] = s[i + 1]! ^ lo;
}

/** Rotates left by 0 < r < 32. */
function rotl(s: Uint32Array, i: number, r: number): void {
  const hi = s[i]!;
  const lo = s[i + 1]!;
  s[i] = (hi << r) | (lo >>> (32 - r));
  s[i + 1] = (lo << r) | (hi >>> (32 - r));
}

/** Sets the scratch slot to round(0, input): input × P2, rotated by 31, × P1. */
function roundOfInput(s: Uint32Array, hi: number, lo: number): void {
  s[T] = hi;
  s[T + 1] = lo;
  mul(s, T, P2_HI, P2_LO);
  rotl(s, T, 31);
  mul(s, T, P1_HI, P1_LO);
}

/** A lane's round: lane += input × P2, rotated by 31, × P1. */
function round(s: Uint32Array, lane: number, hi: number, lo: number): void {
  s[T] = hi;
  s[T + 1] = lo;
  mul(s, T, P2_HI, P2_LO);
  add(s, lane, s[T]!, s[T + 1]!);
  rotl(s, lane, 31);
  mul(s, lane, P1_HI, P1_LO);
}

/** Adds the lane rotated by r to the hash. */
function addRotated(s: Uint32Array, lane: number, r: number): void {
  s[T] = s[lane]!;
  s[T + 1] = s[lane + 1]!;
  rotl(s, T, r);
  add(s, H, s[T]!, s[T + 1]!);
}

function mergeLane(s: Uint32Array, lane: number): void {
  roundOfInput(s, s[lane]!, s[lane + 1]!);
  xor(s, H, s[T]!, s[T + 1]!);
  mul(s, H, P1_HI, P1_LO);
  add(s, H, P4_HI, P4_LO);
}

/** XXH64 (seed 0) of `data`, as an unsigned 64-bit bigint. */
export function xxh64(data: Uint8Array): bigint {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const s = new Uint32Array(12);
  const length = data.length;
  let p = 0;
  if (length >= 32) {
    s.set([V1_HI, V1_LO, P2_HI, P2_LO, 0, 0, V4_HI, V4_LO]);
    for (; p + 32 <= length; p += 32) {
      // Each lane reads 8 bytes, little-endian: the high half is the second 4.
      round(s, V1, view.getUint32(p + 4, true), view.getUint32(p, true));
      round(s, V2, view.getUint32(p + 12, true), view.getUint32(p + 8, true));
      round(s, V3, view.getUint32(p + 20, true), view.getUint32(p + 16, true));
      round(s, V4, view.getUint32(p + 28, true), view.getUint32(p + 24, true));
    }
    addRotated(s, V1, 1);
    addRotated(s, V2, 7);
    addRotated(s, V3, 12);
    addRotated(s, V4, 18);
    mergeLane(s, V1);
    mergeLane(s, V2);
    mergeLane(s, V3);
    mergeLane(s, V4);
  } else {
    s[H] = P5_HI;
    s[H + 1] = P5_LO;
  }
  add(s, H, Math.floor(length / 0x100000000), length >>> 0);
  for (; p + 8 <= length; p += 8) {
    roundOfInput(s, view.getUint32(p + 4, true), view.getUint32(p, true));
    xor(s, H, s[T]!, s[T + 1]!);
    rotl(s, H, 27);
    mul(s, H, P1_HI, P1_LO);
    add(s, H, P4_HI, P4_LO);
  }
  if (p + 4 <= length) {
    s[T] = 0;
    s[T + 1] = view.getUint32(p, true);
    mul(s, T, P1_HI, P1_LO);
    xor(s, H, s[T]!, s[T + 1]!);
    rotl(s, H, 23);
    mul(s, H, P2_HI, P2_LO);
    add(s, H, P3_HI, P3_LO);
    p += 4;
  }
  for (; p < length; p++) {
    s[T] = 0;
    s[T + 1] = data[p]!;
    mul(s, T, P5_HI, P5_LO);
    xor(s, H, s[T]!, s[T + 1]!);
    rotl(s, H, 11);
    mul(s, H, P1_HI, P1_LO);
  }
  // Avalanche: h ^= h >> 33; h *= P2; h ^= h >> 29; h *= P3; h ^= h >> 32.
  s[H + 1] = s[H + 1]! ^ (s[H]! >>> 1);
  mul(s, H, P2_HI, P2_LO);
  s[H + 1] = s[H + 1]! ^ ((s[H + 1]! >>> 29) | (s[H]! << 3));
  s[H] = s[H]! ^ (s[H]! >>> 29);
  mul(s, H, P3_HI, P3_LO);
  s[H + 1] = s[H + 1]! ^ s[H]!;
  return (BigInt(s[H]!) << 32n) | BigInt(s[H + 1]!);
}
