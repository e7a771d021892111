/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum RecordBatch v2 uses.
 *
 * Every produce and every fetch checksums whole batches, so this uses "slicing-by-8": eight 256-entry
 * tables let the loop consume 8 bytes per iteration instead of 1, several times faster in V8 than the
 * byte-at-a-time table loop, which still handles the unaligned tail.
 */
const POLYNOMIAL = 0x82f63b78;

const TABLES = buildTables();

function buildTables(): Uint32Array {
  const tables = new Uint32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLYNOMIAL : c >>> 1;
    tables[n] = c;
  }
  // Table t maps a byte to its CRC contribution when followed by t zero bytes.
  for (let t = 1; t < 8; t++) {
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
  let crc = 0xffffffff;
  let i = start;
  for (const last8 = end - 8; i <= last8; i += 8) {
    const lo = crc ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24));
    crc =
      t[7 * 256 + (lo & 0xff)]! ^
      t[6 * 256 + ((lo >>> 8) & 0xff)]! ^
      t[5 * 256 + ((lo >>> 16) & 0xff)]! ^
      t[4 * 256 + (lo >>> 24)]! ^
      t[3 * 256 + bytes[i + 4]!]! ^
      t[2 * 256 + bytes[i + 5]!]! ^
      t[256 + bytes[i + 6]!]! ^
      t[bytes[i + 7]!]!;
  }
  for (; i < end; i++) crc = (crc >>> 8) ^ t[(crc ^ bytes[i]!) & 0xff]!;
  return (crc ^ 0xffffffff) >>> 0;
}
