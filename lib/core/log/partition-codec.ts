/**
 * The partition item's stored encoding, and the only module that knows it: in memory the item is a
 * `PartitionState` with Kafka's names; in the table its busy attributes have short names, because every
 * commit rewrites the whole item and is billed per KiB of it. Readers decode here; writers build the
 * item here and name attributes in update expressions and conditions through `stateAttr` and
 * `producerAttr` (DynamoDB document paths are stored names). Tail entries, and the batch and segment
 * index pages that hold the same entries, are encoded here too.
 */
import type { AttributeValue, Item } from '../../ports/metadata-store.js';
import { dataObjectKey, keys } from '../keys.js';
import type { PartitionState, ProducerState, TailEntry } from './partition-state.js';
import { newPartitionState } from './partition-state.js';
import { LOG_SIZE_ATTR, logSizeOf } from './log-size.js';

/**
 * Each field's stored attribute name. Fields not listed are stored under their own name (topic,
 * partition, leader, leaderEpoch, replicas, isr, nextOffset, logStartOffset, tailBase, tail, deleted),
 * except `logSizeBytes`, stored under log-size.ts's `LOG_SIZE_ATTR`: that module owns the log's byte
 * total and the attributes beside it (`sz rk cg lk`), which writers change by difference in update
 * expressions, never by rewriting the item.
 */
export const stateAttr = {
  producers: 'pr',
  idempotencyKeys: 'ik',
  idempotencyKeysGeneration: 'ikGen',
  idempotencyKeysMoved: 'ikDone',
  maxTimestampSoFar: 'tsMax',
  highWatermark: 'hw',
  logEndOffsets: 'leo',
  lastCaughtUpTimeMs: 'lc',
  ongoingTransactions: 'tx',
  lastMarkedTransactions: 'mk',
} as const satisfies Partial<Record<keyof PartitionState, string>>;

/** A producer's entry under `stateAttr.producers`: stored as `{ e, s, t }`. */
export const producerAttr = {
  producerEpoch: 'e',
  lastSequence: 's',
  lastTimestamp: 't',
} as const satisfies Record<keyof ProducerState, string>;

/** The stored form of one producer's state (the value of `[stateAttr.producers, producerId]`). */
export const encodeProducerState = (state: ProducerState): Record<string, AttributeValue> => ({
  [producerAttr.producerEpoch]: state.producerEpoch,
  [producerAttr.lastSequence]: state.lastSequence,
  [producerAttr.lastTimestamp]: state.lastTimestamp,
});

const decodeProducerState = (stored: AttributeValue): ProducerState => {
  const map = stored as Record<string, number>;
  return {
    producerEpoch: map[producerAttr.producerEpoch]!,
    lastSequence: map[producerAttr.lastSequence]!,
    lastTimestamp: map[producerAttr.lastTimestamp]!,
  };
};

const renamed = Object.entries(stateAttr) as [keyof typeof stateAttr, string][];

/**
 * The stored attributes of a state (without the item's key): renamed fields under their short names,
 * tail entries as strings (`encodeTailEntry`), other fields as they are.
 */
export const encodePartitionState = (
  state: PartitionState,
  topicId: string,
): Record<string, AttributeValue> => {
  const out: Record<string, AttributeValue> = { ...(state as unknown as Record<string, AttributeValue>) };
  for (const [field, attribute] of renamed) {
    delete out[field];
    const value = state[field];
    if (value === undefined) continue;
    out[attribute] =
      field === 'producers'
        ? Object.fromEntries(Object.entries(state.producers).map(([id, p]) => [id, encodeProducerState(p)]))
        : (value as AttributeValue);
  }
  delete out['logSizeBytes'];
  if (state.logSizeBytes !== undefined) out[LOG_SIZE_ATTR] = state.logSizeBytes;
  out['tail'] = state.tail.map((e) => encodeTailEntry(e, topicId));
  return out;
};

/** The whole item of a state: its key and `encodePartitionState`. */
export const encodePartitionItem = (topicId: string, state: PartitionState): Item => ({
  ...keys.partitionState(topicId, state.partition),
  ...encodePartitionState(state, topicId),
});

/** The item of a new partition (`newPartitionState`). */
export const initialPartitionState = (
  topicId: string,
  topic: string,
  partition: number,
  replicas: string[],
  now = 0,
): Item => encodePartitionItem(topicId, newPartitionState(topic, partition, replicas, now));

/**
 * The item as read, the one place every reader of the partition item goes through. Attributes this
 * module does not rename (the key, and what other modules keep on the item: `segEnd`, `cleanedThrough`,
 * ...) come through under their own names.
 */
export const decodePartitionState = (item: Item): PartitionState => {
  const out: Record<string, unknown> = { ...item };
  for (const [field, attribute] of renamed) {
    delete out[attribute];
    const value = item[attribute];
    if (value === undefined) continue;
    out[field] =
      field === 'producers'
        ? Object.fromEntries(
            Object.entries(value as Record<string, AttributeValue>).map(([id, p]) => [
              id,
              decodeProducerState(p),
            ]),
          )
        : value;
  }
  out['logSizeBytes'] = logSizeOf(item);
  const topicId = topicIdOf(item);
  const tail = item['tail'];
  out['tail'] = Array.isArray(tail) ? tail.map((e) => decodeTailEntry(String(e), topicId)) : [];
  return out as unknown as PartitionState;
};

/** The topic id in a partition item's key (`P#{topicId}#{partition}`), which tail and page entries need. */
export const topicIdOf = (item: Item): string | undefined => {
  const pk = item['pk'];
  return typeof pk === 'string' && pk.startsWith('P#') ? pk.slice(2, pk.lastIndexOf('#')) : undefined;
};

/**
 * A tail entry as the partition item stores it: one string, the numbers in base 36 in a fixed order
 * separated by `|` (absent optional fields empty; the first timestamp and the last sequence as
 * differences, which are small), then the object key, last so it may hold any character, shortened
 * to `@id` when it is the topic's usual data key. Every commit rewrites and is billed for the whole
 * item, and DynamoDB parses a list of strings far more cheaply than a list of maps that repeat eleven
 * attribute names per entry (DynamoDB Local: 3.6 against 9.8 ms of its CPU per commit with 32 entries
 * in the tail); the entry is about 75 bytes where the map was about 150.
 *
 * Order: position, sizeInBytes, offsetCount, recordCount, maxTimestamp, maxTimestamp - firstTimestamp,
 * producerId, producerEpoch, baseSequence, lastSequence - baseSequence, mark, object key.
 */
export const encodeTailEntry = (e: TailEntry, topicId: string): string => {
  const id = e.objectKey.slice(e.objectKey.lastIndexOf('/') + 1);
  const object = e.objectKey === dataObjectKey(topicId, id) ? `@${id}` : e.objectKey;
  if (object === e.objectKey && e.objectKey.startsWith('@'))
    throw new Error(`object key ${e.objectKey} cannot be stored in a tail`);
  const b36 = (n: number | undefined) => (n === undefined ? '' : n.toString(36));
  return [
    b36(e.position),
    b36(e.sizeInBytes),
    b36(e.offsetCount),
    b36(e.recordCount),
    b36(e.maxTimestamp),
    b36(e.maxTimestamp - e.firstTimestamp),
    b36(e.producerId),
    b36(e.producerEpoch),
    b36(e.baseSequence),
    e.lastSequence === undefined || e.baseSequence === undefined ? '' : b36(e.lastSequence - e.baseSequence),
    e.controlType === undefined ? (e.idempotencyMark ?? '') : markerField(e),
    object,
  ].join('|');
};

const TAIL_FIELDS = 12;

export const decodeTailEntry = (s: string, topicId: string | undefined): TailEntry => {
  const parts = s.split('|');
  if (parts.length < TAIL_FIELDS) throw new Error(`malformed tail entry: ${s.slice(0, 80)}`);
  const num = (i: number): number => parseInt(parts[i]!, 36);
  const object = parts.slice(TAIL_FIELDS - 1).join('|');
  if (object.startsWith('@') && topicId === undefined)
    throw new Error(`tail entry ${s.slice(0, 80)} needs the item's key to name its object`);
  const maxTimestamp = num(4);
  const entry: TailEntry = {
    objectKey: object.startsWith('@') ? dataObjectKey(topicId!, object.slice(1)) : object,
    position: num(0),
    sizeInBytes: num(1),
    offsetCount: num(2),
    recordCount: num(3),
    maxTimestamp,
    firstTimestamp: maxTimestamp - num(5),
  };
  if (parts[6] !== '')
    Object.assign(entry, {
      producerId: num(6),
      producerEpoch: num(7),
      baseSequence: num(8),
      lastSequence: num(8) + num(9),
    });
  const mark = parts[10]!;
  if (mark.startsWith('!')) {
    entry.controlType = mark[1] === 'a' ? 'ABORT' : 'COMMIT';
    if (mark.length > 2) entry.transactionFirstOffset = parseInt(mark.slice(2), 36);
  } else if (mark !== '') entry.idempotencyMark = mark;
  return entry;
};

/**
 * A marker entry takes the Idempotency-Key field, which a control batch never has: `!c`, or `!a` and
 * the aborted transaction's first offset (an Idempotency-Key mark is base64url, never starting `!`).
 */
const markerField = (e: TailEntry): string =>
  e.controlType === 'ABORT'
    ? `!a${e.transactionFirstOffset === undefined ? '' : e.transactionFirstOffset.toString(36)}`
    : '!c';
