/**
 * The consumer protocol carried inside JoinGroup's metadata and SyncGroup's assignment bytes
 * (ConsumerProtocolSubscription / ConsumerProtocolAssignment): a version, then fields in the classic
 * (non-flexible) encoding. Readers are lenient as Kafka's are: a newer version is read as the newest
 * known, and fields a client leaves off the end (kafkajs stops after userData) take their defaults.
 */
import type { Message } from './codec.js';
import { KafkaProtocolError, Reader, Writer, readFields, writeFields } from './codec.js';
import type { Field } from './schema.js';
import { arrayOf, f } from './schema.js';

const SUBSCRIPTION_FIELDS: Field[][] = [
  [f('topics', { array: 'string' }), f('userData', 'bytes', '0+', { nullable: '0+', default: null })],
  [f('ownedPartitions', arrayOf([f('topic', 'string'), f('partitions', { array: 'int32' })]))],
  [f('generationId', 'int32', '0+', { default: -1 })],
  [f('rackId', 'string', '0+', { nullable: '0+', default: null })],
];

export interface ConsumerSubscription {
  version: number;
  topics: string[];
  ownedPartitions: { topic: string; partitions: number[] }[];
  generationId: number;
}

/** Decodes a member's subscription; throws KafkaProtocolError when even its topics cannot be read. */
export function decodeSubscription(bytes: Uint8Array): ConsumerSubscription {
  const r = new Reader(bytes);
  const version = r.int16();
  if (version < 0) throw new KafkaProtocolError(`consumer subscription version ${version}`);
  const out: Message = {};
  for (const [i, fields] of SUBSCRIPTION_FIELDS.entries()) {
    if (i > version) break;
    if (i > 0 && r.remaining === 0) break;
    try {
      Object.assign(out, readFields(r, fields, 0, false));
    } catch (error) {
      if (i === 0) throw error;
      break;
    }
  }
  return {
    version,
    topics: (out['topics'] as string[] | undefined) ?? [],
    ownedPartitions: (out['ownedPartitions'] as ConsumerSubscription['ownedPartitions'] | undefined) ?? [],
    generationId: (out['generationId'] as number | undefined) ?? -1,
  };
}

/** Encodes a subscription at version 0 (topics only), for DescribeGroups' member metadata. */
export function encodeSubscription(topics: string[]): Uint8Array {
  const w = new Writer(64);
  w.int16(0);
  writeFields(w, SUBSCRIPTION_FIELDS[0] as Field[], { topics, userData: null }, 0, false);
  return w.finish();
}

const ASSIGNMENT_FIELDS: Field[] = [
  f('assignedPartitions', arrayOf([f('topic', 'string'), f('partitions', { array: 'int32' })])),
  f('userData', 'bytes', '0+', { nullable: '0+', default: null }),
];

/** ConsumerProtocolAssignment v0: what SyncGroup hands a classic member. */
export function encodeAssignment(assigned: { topic: string; partitions: number[] }[]): Uint8Array {
  const w = new Writer(64);
  w.int16(0);
  writeFields(w, ASSIGNMENT_FIELDS, { assignedPartitions: assigned, userData: null }, 0, false);
  return w.finish();
}

export function decodeAssignment(bytes: Uint8Array): { topic: string; partitions: number[] }[] {
  const r = new Reader(bytes);
  r.int16();
  return readFields(r, ASSIGNMENT_FIELDS, 0, false)['assignedPartitions'] as {
    topic: string;
    partitions: number[];
  }[];
}
