/**
 * What Kafka's LogValidator checks of every batch a producer sends, before anything is written: the
 * frame and CRC (`splitBatches`), then the records themselves, decoded in full whatever the topic's
 * cleanup.policy. Storing a batch whose header lies about its records would let one request move the
 * high watermark by a million offsets, give three records one offset, or leave bytes in the log that
 * no fetch can decode; so every field the log relies on is checked against the records it describes.
 */
import { SluiceError } from '../errors.js';
import { decodeRecordBatch } from './decode.js';
import type { BatchHeader, Record } from './types.js';

export interface ValidateOptions {
  /**
   * The topic's max.message.bytes: the cap on the batch and on its inflated records, so a small gzip
   * "bomb" is refused after inflating at most this many bytes.
   */
  maxMessageBytes: number;
}

const invalid = (message: string): SluiceError => new SluiceError('INVALID_RECORD', message);

/**
 * Decodes and validates one batch (its frame and CRC already verified) as a producer sent it; returns
 * its records. Throws MESSAGE_TOO_LARGE, CORRUPT_MESSAGE or INVALID_RECORD as Kafka's broker would.
 */
export function validateProducerBatch(
  bytes: Uint8Array,
  header: BatchHeader,
  options: ValidateOptions,
  index = 0,
): Record[] {
  const where = `batch ${index}`;
  if (bytes.length > options.maxMessageBytes) {
    throw new SluiceError(
      'MESSAGE_TOO_LARGE',
      `${where} is ${bytes.length} bytes; the topic allows max.message.bytes=${options.maxMessageBytes}`,
    );
  }
  // Markers are the coordinator's to write; a producer's transactional batch must be idempotent.
  if (header.isControl)
    throw invalid(`${where} is a control batch; only the transaction coordinator writes those`);
  if (
    header.isTransactional &&
    (header.producerId < 0 || header.producerEpoch < 0 || header.baseSequence < 0)
  ) {
    throw invalid(`${where} is transactional without a producer id, epoch and sequence`);
  }
  if (header.recordCount < 1) {
    throw new SluiceError('CORRUPT_MESSAGE', `${where} has ${header.recordCount} records`);
  }
  // Kafka: "Inconsistent batch offset range". The span is what the commit adds to the log end offset.
  if (header.lastOffsetDelta !== header.recordCount - 1) {
    throw invalid(
      `${where} declares ${header.recordCount} records but lastOffsetDelta ${header.lastOffsetDelta}; expected ${header.recordCount - 1}`,
    );
  }
  // The broker stamps LogAppendTime; a producer's batch carries its own CreateTime timestamps.
  if (header.timestampType !== 'CreateTime') {
    throw invalid(`${where} has timestampType ${header.timestampType}; producers send CreateTime`);
  }
  if (header.producerId < -1) throw invalid(`${where} has producerId ${header.producerId}`);
  // decodeRecordBatch checks that exactly recordCount records fill the records section, each with
  // in-bounds varints and lengths, and inflates at most maxMessageBytes.
  const { records } = decodeRecordBatch(bytes, {
    verifyCrc: false,
    maxDecompressedBytes: options.maxMessageBytes,
  });
  let maxTimestamp = -1;
  records.forEach((record, i) => {
    const delta = record.offset - header.baseOffset;
    if (delta !== i) throw invalid(`${where} record ${i} has offset delta ${delta}; expected ${i}`);
    if (record.timestamp < -1) throw invalid(`${where} record ${i} has timestamp ${record.timestamp}`);
    if (record.timestamp > maxTimestamp) maxTimestamp = record.timestamp;
  });
  // Fetch answers and the time index read maxTimestamp without decoding: it must be the records' own.
  if (header.maxTimestamp !== maxTimestamp) {
    throw invalid(
      `${where} declares maxTimestamp ${header.maxTimestamp}; its records' largest timestamp is ${maxTimestamp}`,
    );
  }
  return records;
}
