/** The JSON API's byte encodings (API.md "Produce": utf8, base64, json). */
import { SluiceError } from '../../protocol/errors.js';

/** Kafka RecordBatch v2 bytes as a request or response body (produce's batches, fetch's answers). */
export const RECORD_BATCH_MEDIA_TYPE = 'application/vnd.kafka.record-batch';

export type Encoding = 'utf8' | 'base64' | 'json';

export const ENCODINGS: readonly Encoding[] = ['utf8', 'base64', 'json'];

export const parseEncoding = (raw: unknown, where: string): Encoding => {
  if (raw === undefined) return 'utf8';
  if (typeof raw !== 'string' || !ENCODINGS.includes(raw as Encoding)) {
    throw new SluiceError(
      'INVALID_REQUEST',
      `${where} must be one of ${ENCODINGS.join(', ')}, got ${JSON.stringify(raw)}`,
    );
  }
  return raw as Encoding;
};

export { decodeBytes, decodeValue, encodeBytes, encodeValue } from '../wire/encoding.js';
