/**
 * Control batches: the transaction markers a coordinator writes into every partition a transaction
 * touched. Kafka's format: a RecordBatch with the control and transactional attribute bits, the
 * producer's id and epoch, sequence -1, and one record whose key is (version int16 = 0, type int16:
 * 0 ABORT, 1 COMMIT) and whose value is (version int16 = 0, coordinatorEpoch int32).
 */
import { SluiceError } from '../errors.js';
import { decodeRecordBatch } from './decode.js';
import { encodeRecordBatch } from './encode.js';
import type { BatchHeader } from './types.js';

export type ControlType = 'ABORT' | 'COMMIT';

const TYPE_CODES: Record<ControlType, number> = { ABORT: 0, COMMIT: 1 };

export interface ControlBatchInput {
  type: ControlType;
  producerId: number;
  producerEpoch: number;
  coordinatorEpoch?: number;
  timestamp: number;
}

export function encodeControlBatch(input: ControlBatchInput): Uint8Array {
  const key = Buffer.alloc(4);
  key.writeInt16BE(0, 0);
  key.writeInt16BE(TYPE_CODES[input.type], 2);
  const value = Buffer.alloc(6);
  value.writeInt16BE(0, 0);
  value.writeInt32BE(input.coordinatorEpoch ?? 0, 2);
  return encodeRecordBatch([{ key, value, timestamp: input.timestamp }], {
    producerId: input.producerId,
    producerEpoch: input.producerEpoch,
    baseSequence: -1,
    isTransactional: true,
    isControl: true,
  });
}

/** The marker type of a control batch (its one record's key), as Kafka's ControlRecordType reads it. */
export function controlTypeOf(bytes: Uint8Array, header: BatchHeader): ControlType | 'UNKNOWN' {
  if (!header.isControl) throw new SluiceError('INVALID_RECORD', 'not a control batch');
  const [record] = decodeRecordBatch(bytes, { verifyCrc: false }).records;
  const key = record?.key;
  if (!key || key.length < 4) throw new SluiceError('CORRUPT_MESSAGE', 'control record without a key');
  const type = Buffer.from(key.buffer, key.byteOffset, key.length).readInt16BE(2);
  return type === 0 ? 'ABORT' : type === 1 ? 'COMMIT' : 'UNKNOWN';
}
