/**
 * The table-driven codec against bytes that real clients sent (test/fixtures/kafka-requests, captured
 * with capture.ts from kcat, kafkajs, kafka-python and confluent-kafka-python): every request decodes
 * by its schema and encodes back to the very same bytes.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Message } from '../../../protocol/kafka/codec.js';
import {
  KafkaProtocolError,
  Reader,
  Writer,
  readFields,
  writeFields,
} from '../../../protocol/kafka/codec.js';
import { ERROR, kafkaErrorCode, kafkaErrorName } from '../../../protocol/kafka/error-codes.js';
import {
  decodeRequest,
  decodeResponse,
  encodeRequest,
  encodeResponse,
  readHeaderStart,
} from '../../../protocol/kafka/frame.js';
import { Fetch } from '../../../protocol/kafka/messages/fetch.js';
import { Metadata } from '../../../protocol/kafka/messages/metadata.js';
import { Produce } from '../../../protocol/kafka/messages/produce.js';
import { ApiVersions } from '../../../protocol/kafka/messages/api-versions.js';
import { FindCoordinator } from '../../../protocol/kafka/messages/find-coordinator.js';
import { InitProducerId } from '../../../protocol/kafka/messages/init-producer-id.js';
import {
  AddOffsetsToTxn,
  AddPartitionsToTxn,
  EndTxn,
  TxnOffsetCommit,
} from '../../../protocol/kafka/messages/transactions.js';
import { arrayOf, f, inVersions, parseVersions, tagged } from '../../../protocol/kafka/schema.js';
import { decodeRecordBatch } from '../../../protocol/record-batch/index.js';
import { ERROR_CODES } from '../../../protocol/errors.js';
import { API_HANDLERS } from '../../../gateway/apis/index.js';

const DIR = 'test/fixtures/kafka-requests';
const fixtures = readdirSync(DIR).filter((f) => f.endsWith('.bin'));
const schemaOf = (apiKey: number) => API_HANDLERS.find((h) => h.schema.apiKey === apiKey)!.schema;
const load = (name: string) => readFileSync(join(DIR, name)).subarray(4);
const text = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b).toString());

describe('requests real clients sent', () => {
  it('come from all four clients', () => {
    for (const client of ['kcat', 'kafkajs', 'kafka-python', 'confluent-kafka'])
      expect(fixtures.filter((f) => f.startsWith(`${client}-`)).length).toBeGreaterThanOrEqual(5);
  });

  it.each(fixtures)('%s decodes and encodes back byte for byte', (name) => {
    const frame = load(name);
    const header = readHeaderStart(frame);
    expect(`api${header.apiKey}-v${header.apiVersion}`).toBe(name.replace(/^.*-(api\d+-v\d+)\.bin$/, '$1'));
    const schema = schemaOf(header.apiKey);
    const { body } = decodeRequest(frame, schema);
    const again = encodeRequest(header, schema, body);
    expect(Buffer.from(again.subarray(4)).equals(Buffer.from(frame))).toBe(true);
    expect(again.length).toBe(frame.length + 4);
  });

  it('reads the records kcat produced: key, value and header', () => {
    const { header, body } = decodeRequest(load('kcat-02-api0-v7.bin'), Produce);
    expect(header.clientId).toBe('rdkafka');
    const topic = (body['topicData'] as Message[])[0]!;
    expect(topic['name']).toBe('t1');
    const partition = (topic['partitionData'] as Message[])[0]!;
    expect(partition['index']).toBe(2);
    const batch = decodeRecordBatch(partition['records'] as Uint8Array);
    // librdkafka sends a one-record batch uncompressed when lz4 would not make it smaller.
    expect(batch.header.compression).toBe('none');
    expect(
      batch.records.map((r) => [text(r.key), text(r.value), r.headers.map((h) => [h.key, text(h.value)])]),
    ).toEqual([['a', 'b', [['h', 'v']]]]);
  });

  it('reads kafkajs’s flexible-less Metadata v6 and librdkafka’s Fetch v11 fields', () => {
    const metadata = decodeRequest(load('kafkajs-01-api3-v6.bin'), Metadata).body;
    expect(metadata['allowAutoTopicCreation']).toBe(false);
    expect(metadata['topics']).toBeNull(); // kafkajs's first Metadata asks for every topic
    const fetch = decodeRequest(load('confluent-kafka-07-api1-v11.bin'), Fetch).body;
    const topics = fetch['topics'] as Message[];
    expect(topics[0]!['topic']).toBe('cft2');
    expect((topics[0]!['partitions'] as Message[])[0]!['partition']).toBe(1);
    expect(fetch['sessionEpoch']).toBe(-1);
  });
});

describe('transactional requests real clients sent (kafkajs and librdkafka)', () => {
  it('kafkajs: FindCoordinator for a transactional.id, InitProducerId, AddPartitionsToTxn, the transactional batch, AddOffsetsToTxn, TxnOffsetCommit, EndTxn', () => {
    const find = decodeRequest(load('kafkajs-txn-03-api10-v2.bin'), FindCoordinator).body;
    expect([find['key'], find['keyType']]).toEqual(['cap-kjs', 1]);
    const init = decodeRequest(load('kafkajs-txn-02-api22-v1.bin'), InitProducerId).body;
    // kafkajs's connect() asks for an idempotent id first (the capture keeps one frame per version).
    expect([init['transactionalId'], init['transactionTimeoutMs']]).toEqual([null, 60_000]);
    const add = decodeRequest(load('kafkajs-txn-04-api24-v1.bin'), AddPartitionsToTxn).body;
    expect([
      add['v3AndBelowTransactionalId'],
      add['v3AndBelowProducerEpoch'],
      add['v3AndBelowTopics'],
    ]).toEqual(['cap-kjs', 0, [{ name: 'cap', partitions: [0] }]]);
    const produce = decodeRequest(load('kafkajs-txn-05-api0-v7.bin'), Produce).body;
    expect(produce['transactionalId']).toBe('cap-kjs');
    const records = ((produce['topicData'] as Message[])[0]!['partitionData'] as Message[])[0]![
      'records'
    ] as Uint8Array;
    const batch = decodeRecordBatch(records);
    expect([batch.header.isTransactional, batch.header.producerId, batch.header.baseSequence]).toEqual([
      true,
      add['v3AndBelowProducerId'],
      0,
    ]);
    const offsets = decodeRequest(load('kafkajs-txn-06-api25-v1.bin'), AddOffsetsToTxn).body;
    expect([offsets['transactionalId'], offsets['groupId']]).toEqual(['cap-kjs', 'capg']);
    const commit = decodeRequest(load('kafkajs-txn-07-api28-v1.bin'), TxnOffsetCommit).body;
    expect(commit['topics']).toEqual([
      {
        name: 'cap',
        partitions: [
          { partitionIndex: 0, committedOffset: 3, committedLeaderEpoch: -1, committedMetadata: null },
        ],
      },
    ]);
    const end = decodeRequest(load('kafkajs-txn-08-api26-v1.bin'), EndTxn).body;
    expect([end['transactionalId'], end['committed']]).toEqual(['cap-kjs', true]);
  });

  it('librdkafka: InitProducerId v4 (flexible), TxnOffsetCommit v3 with the group metadata, a read_committed Fetch', () => {
    const init = decodeRequest(load('confluent-kafka-txn-03-api22-v4.bin'), InitProducerId).body;
    expect([init['transactionalId'], init['transactionTimeoutMs'], init['producerId']]).toEqual([
      'cap-rdk',
      60_000,
      -1,
    ]);
    const commit = decodeRequest(load('confluent-kafka-txn-08-api28-v3.bin'), TxnOffsetCommit).body;
    expect([
      commit['groupId'],
      commit['generationId'],
      commit['memberId'],
      commit['groupInstanceId'],
    ]).toEqual(['capg2', -1, '', null]);
    expect(((commit['topics'] as Message[])[0]!['partitions'] as Message[])[0]!['committedOffset']).toBe(7);
    const fetch = decodeRequest(load('confluent-kafka-txn-10-api1-v11.bin'), Fetch).body;
    expect(fetch['isolationLevel']).toBe(1);
  });

  it('EndTxn v5 answers the next epoch; v0-v4 answers carry none', () => {
    const answer = { throttleTimeMs: 0, errorCode: 0, producerId: 7, producerEpoch: 3 };
    const v5 = decodeResponse(encodeResponse(1, EndTxn, 5, answer).subarray(4), EndTxn, 5).body;
    expect([v5['producerId'], v5['producerEpoch']]).toEqual([7, 3]);
    const v1 = encodeResponse(1, EndTxn, 1, answer);
    expect(v1.length).toBe(4 + 4 + 4 + 2); // size, correlation id, throttle, error code
  });
});

describe('flexible versions', () => {
  const schema = [
    f('name', 'string', '0+', { nullable: '0+' }),
    f('items', arrayOf([f('id', 'int32'), tagged('note', 'string', 0, '0+', { default: '' })])),
    tagged('extra', 'int64', 3, '0+', { default: -1 }),
  ];

  it('writes compact strings and arrays, tagged fields only when not at their default', () => {
    const w = new Writer(4);
    writeFields(w, schema, { name: 'ab', items: [{ id: 7, note: 'x' }, { id: 8 }], extra: -1 }, 0, true);
    // name: len+1=3 'a' 'b'; items: count+1=3; {id 7, 1 tag: tag 0 size 2 (len+1=2,'x')}; {id 8, 0 tags}; 0 tags
    expect(Buffer.from(w.finish()).toString('hex')).toBe(
      '036162' + '03' + '00000007' + '01' + '00' + '02' + '0278' + '00000008' + '00' + '00',
    );
  });

  it('reads back what it wrote, and skips tagged fields it does not know', () => {
    const w = new Writer();
    writeFields(w, schema, { name: null, items: [], extra: 42 }, 0, true);
    const bytes = w.finish();
    expect(readFields(new Reader(bytes), schema, 0, true)).toEqual({ name: null, items: [], extra: 42 });
    const withoutExtra = schema.slice(0, 2);
    expect(readFields(new Reader(bytes), withoutExtra, 0, true)).toEqual({ name: null, items: [] });
  });

  it('answers ApiVersions with header v0 even in flexible versions (KIP-511)', () => {
    const frame = encodeResponse(5, ApiVersions, 3, {
      errorCode: 0,
      apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 4 }],
    });
    // size, correlation id, then the body straight away: no tagged-field byte after the id.
    expect(Buffer.from(frame.subarray(8, 10)).readInt16BE(0)).toBe(0);
    expect(decodeResponse(frame.subarray(4), ApiVersions, 3).body['apiKeys']).toEqual([
      { apiKey: 18, minVersion: 0, maxVersion: 4 },
    ]);
  });

  it('round-trips a Fetch v12 answer with tagged leader and records', () => {
    const records = new Uint8Array([1, 2, 3]);
    const body = {
      throttleTimeMs: 0,
      errorCode: 0,
      sessionId: 0,
      responses: [
        {
          topic: 't',
          partitions: [
            {
              partitionIndex: 3,
              errorCode: 0,
              highWatermark: 10,
              lastStableOffset: 10,
              logStartOffset: 2,
              currentLeader: { leaderId: 0, leaderEpoch: 4 },
              abortedTransactions: null,
              preferredReadReplica: -1,
              records,
            },
          ],
        },
      ],
    };
    const decoded = decodeResponse(encodeResponse(9, Fetch, 12, body).subarray(4), Fetch, 12);
    const p = ((decoded.body['responses'] as Message[])[0]!['partitions'] as Message[])[0]!;
    expect(decoded.correlationId).toBe(9);
    expect(p['currentLeader']).toEqual({ leaderId: 0, leaderEpoch: 4 });
    expect(p['highWatermark']).toBe(10);
    expect([...(p['records'] as Uint8Array)]).toEqual([1, 2, 3]);
  });
});

describe('malformed input', () => {
  it('refuses a truncated request with KafkaProtocolError', () => {
    const frame = load('kcat-02-api0-v7.bin');
    for (const cut of [9, 20, frame.length - 1])
      expect(() => decodeRequest(frame.subarray(0, cut), Produce)).toThrow(KafkaProtocolError);
  });

  it('refuses trailing bytes after a message', () => {
    const frame = Buffer.concat([load('kcat-01-api3-v4.bin'), Buffer.from([0])]);
    expect(() => decodeRequest(frame, Metadata)).toThrow(/bytes after the message/);
  });

  it('refuses a length that claims more than the frame holds, before allocating', () => {
    const r = new Reader(new Uint8Array([0x7f, 0xff, 0xff, 0xff, 1, 2]));
    expect(() => r.length(false, false)).toThrow(/exceeds the 2 bytes left/);
    const varint = new Reader(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff, 0x01]));
    expect(() => varint.unsignedVarint()).toThrow(KafkaProtocolError);
  });

  it('refuses a null where the schema allows none', () => {
    const w = new Writer();
    w.int16(-1); // Produce v3 acks … no: a null topic name
    const schema = [f('name', 'string')];
    expect(() => readFields(new Reader(w.finish()), schema, 0, false)).toThrow(/null but not nullable/);
  });
});

describe('tables', () => {
  it('parses Kafka’s version ranges', () => {
    expect(parseVersions('3+')).toEqual({ min: 3, max: 0x7fff });
    expect(parseVersions('0-4')).toEqual({ min: 0, max: 4 });
    expect(parseVersions('none')).toBeNull();
    expect(inVersions(9, '9+')).toBe(true);
    expect(inVersions(8, '9+')).toBe(false);
  });

  it('serves only versions Kafka defines, one handler per API key', () => {
    const keys = API_HANDLERS.map((h) => h.schema.apiKey);
    expect(new Set(keys).size).toBe(keys.length);
    for (const h of API_HANDLERS) {
      expect(inVersions(h.minVersion, h.schema.validVersions)).toBe(true);
      expect(inVersions(h.maxVersion, h.schema.validVersions)).toBe(true);
    }
  });

  it('maps every Sluice error name to Kafka’s code, one to one where Kafka has the name', () => {
    expect(ERROR.OFFSET_OUT_OF_RANGE).toBe(1);
    expect(ERROR.UNSUPPORTED_VERSION).toBe(35);
    expect(ERROR.OUT_OF_ORDER_SEQUENCE_NUMBER).toBe(45);
    expect(ERROR.FENCED_LEADER_EPOCH).toBe(74);
    expect(ERROR.STALE_MEMBER_EPOCH).toBe(113);
    expect(kafkaErrorCode('UNKNOWN_SERVER_ERROR')).toBe(-1);
    for (const name of Object.keys(ERROR_CODES)) {
      const code = kafkaErrorCode(name);
      if (kafkaErrorName(code) !== name)
        expect([
          'NOT_FOUND',
          'ALREADY_EXISTS',
          'METHOD_NOT_ALLOWED',
          'IDEMPOTENCY_KEY_REUSED',
          'UNKNOWN_STATE_STORE',
        ]).toContain(name);
    }
  });
});
