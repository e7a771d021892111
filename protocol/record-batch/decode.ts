import { SluiceError } from '../errors.js';
import { MAX_DECOMPRESSED_BYTES, decompressRecords } from './compression.js';
import {
  LOG_OVERHEAD,
  RECORDS,
  checkBatchFrame,
  corrupt,
  readBatchHeader,
  verifyBatchCrc,
} from './header.js';
import type { BatchHeader, DecodeOptions, Record, RecordHeader } from './types.js';
import { ByteReader } from './varint.js';

// Java decodes header keys leniently (malformed UTF-8 becomes U+FFFD), and so does this.
const UTF8 = new TextDecoder('utf-8');

const invalid = (message: string): SluiceError => new SluiceError('INVALID_RECORD', message);

/** Splits a buffer of one or more concatenated batches, validating structure and CRC-32C of each; throws CORRUPT_MESSAGE. */
export function splitBatches(bytes: Uint8Array): { start: number; end: number; header: BatchHeader }[] {
  const batches: { start: number; end: number; header: BatchHeader }[] = [];
  for (let start = 0; start < bytes.length;) {
    // The CRC first, as Kafka does: a flipped bit then reads as corruption, not as some odd header value.
    verifyBatchCrc(bytes, start, checkBatchFrame(bytes, start));
    const header = readBatchHeader(bytes, start);
    const end = start + LOG_OVERHEAD + header.batchLength;
    batches.push({ start, end, header });
    start = end;
  }
  return batches;
}

/**
 * Decodes the records of a buffer holding exactly one batch (decompressing), with absolute offsets
 * (baseOffset + offsetDelta) and timestamps as Kafka computes them (LogAppendTime: maxTimestamp for
 * every record). Verifies the CRC unless told not to. A bad batch frame, checksum or compressed payload
 * is CORRUPT_MESSAGE; records that do not parse are INVALID_RECORD, as in Kafka.
 */
export function decodeRecordBatch(
  bytes: Uint8Array,
  options: DecodeOptions = {},
): { header: BatchHeader; records: Record[] } {
  const batchLength = checkBatchFrame(bytes, 0);
  const end = LOG_OVERHEAD + batchLength;
  if (bytes.length !== end) throw corrupt(`expected one batch of ${end} bytes, got ${bytes.length}`);
  if (options.verifyCrc ?? true) verifyBatchCrc(bytes, 0, batchLength);
  const header = readBatchHeader(bytes, 0);
  const payload = decompressRecords(
    header.compression,
    bytes.subarray(RECORDS, end),
    options.maxDecompressedBytes ?? MAX_DECOMPRESSED_BYTES,
  );
  return { header, records: readRecords(payload, header) };
}

function readRecords(payload: Uint8Array, header: BatchHeader): Record[] {
  const reader = new ByteReader(payload, 0, payload.length);
  const records: Record[] = [];
  const logAppendTime = header.timestampType === 'LogAppendTime';
  for (let i = 0; i < header.recordCount; i++) {
    const size = reader.readVarint();
    if (size < 0 || size > reader.remaining) {
      throw invalid(`record ${i} declares ${size} bytes, ${reader.remaining} remain`);
    }
    const body = new ByteReader(payload, reader.pos, reader.pos + size);
    reader.pos += size;
    body.readInt8(); // record attributes: unused by Kafka
    const timestampDelta = body.readVarlong();
    const offsetDelta = body.readVarint();
    const key = readField(body);
    const value = readField(body);
    const headerCount = body.readVarint();
    if (headerCount < 0) throw invalid(`record ${i} has ${headerCount} headers`);
    const headers: RecordHeader[] = [];
    for (let h = 0; h < headerCount; h++) {
      const keyLength = body.readVarint();
      if (keyLength < 0) throw invalid(`record ${i} has a header with a null key`);
      headers.push({ key: UTF8.decode(body.readBytes(keyLength)), value: readField(body) });
    }
    if (body.remaining !== 0) throw invalid(`record ${i} has ${body.remaining} bytes beyond its fields`);
    const offset = header.baseOffset + offsetDelta;
    const timestamp = logAppendTime ? header.maxTimestamp : header.baseTimestamp + timestampDelta;
    if (offset < 0 || !Number.isSafeInteger(offset)) throw invalid(`record ${i} has offset ${offset}`);
    if (!Number.isSafeInteger(timestamp)) throw invalid(`record ${i} has a timestamp beyond ±2^53`);
    records.push({ offset, timestamp, key, value, headers });
  }
  if (reader.remaining !== 0) {
    throw invalid(
      `incorrect declared batch size: ${reader.remaining} bytes remain after ${header.recordCount} records`,
    );
  }
  return records;
}

/** A varint-length-prefixed byte field; like Java, any negative length means null. */
function readField(reader: ByteReader): Uint8Array | null {
  const length = reader.readVarint();
  return length < 0 ? null : reader.readBytes(length);
}
