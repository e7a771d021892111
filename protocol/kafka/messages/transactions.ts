/**
 * The transactional producer's APIs (KIP-98): AddPartitionsToTxn, AddOffsetsToTxn, EndTxn and
 * TxnOffsetCommit, as Kafka's message definitions have them. AddPartitionsToTxn v4+ batches many
 * transactional ids (KIP-890, sent by brokers); clients send v0-v3.
 */
import type { MessageSchema } from '../schema.js';
import { arrayOf, f } from '../schema.js';

const topicPartitions = arrayOf([f('name', 'string'), f('partitions', { array: 'int32' })]);

const partitionResults = (versions: string) =>
  arrayOf([
    f('name', 'string', versions),
    f(
      'resultsByPartition',
      arrayOf([f('partitionIndex', 'int32', versions), f('partitionErrorCode', 'int16', versions)]),
      versions,
    ),
  ]);

/** AddPartitionsToTxn (key 24). */
export const AddPartitionsToTxn: MessageSchema = {
  apiKey: 24,
  name: 'AddPartitionsToTxn',
  validVersions: '0-5',
  flexibleVersions: '3+',
  request: [
    f(
      'transactions',
      arrayOf([
        f('transactionalId', 'string', '4+'),
        f('producerId', 'int64', '4+'),
        f('producerEpoch', 'int16', '4+'),
        f('verifyOnly', 'bool', '4+', { default: false }),
        f('topics', topicPartitions, '4+'),
      ]),
      '4+',
    ),
    f('v3AndBelowTransactionalId', 'string', '0-3'),
    f('v3AndBelowProducerId', 'int64', '0-3'),
    f('v3AndBelowProducerEpoch', 'int16', '0-3'),
    f('v3AndBelowTopics', topicPartitions, '0-3'),
  ],
  response: [
    f('throttleTimeMs', 'int32'),
    f('errorCode', 'int16', '4+'),
    f(
      'resultsByTransaction',
      arrayOf([f('transactionalId', 'string', '4+'), f('topicResults', partitionResults('4+'), '4+')]),
      '4+',
    ),
    f('resultsByTopicV3AndBelow', partitionResults('0-3'), '0-3'),
  ],
};

/** AddOffsetsToTxn (key 25). */
export const AddOffsetsToTxn: MessageSchema = {
  apiKey: 25,
  name: 'AddOffsetsToTxn',
  validVersions: '0-4',
  flexibleVersions: '3+',
  request: [
    f('transactionalId', 'string'),
    f('producerId', 'int64'),
    f('producerEpoch', 'int16'),
    f('groupId', 'string'),
  ],
  response: [f('throttleTimeMs', 'int32'), f('errorCode', 'int16')],
};

/** EndTxn (key 26). v5 (KIP-890) answers the epoch of the next transaction. */
export const EndTxn: MessageSchema = {
  apiKey: 26,
  name: 'EndTxn',
  validVersions: '0-5',
  flexibleVersions: '3+',
  request: [
    f('transactionalId', 'string'),
    f('producerId', 'int64'),
    f('producerEpoch', 'int16'),
    f('committed', 'bool'),
  ],
  response: [
    f('throttleTimeMs', 'int32'),
    f('errorCode', 'int16'),
    f('producerId', 'int64', '5+', { default: -1 }),
    f('producerEpoch', 'int16', '5+', { default: -1 }),
  ],
};

/** TxnOffsetCommit (key 28). v3+ carries the consumer's group metadata (KIP-447). */
export const TxnOffsetCommit: MessageSchema = {
  apiKey: 28,
  name: 'TxnOffsetCommit',
  validVersions: '0-5',
  flexibleVersions: '3+',
  request: [
    f('transactionalId', 'string'),
    f('groupId', 'string'),
    f('producerId', 'int64'),
    f('producerEpoch', 'int16'),
    f('generationId', 'int32', '3+', { default: -1 }),
    f('memberId', 'string', '3+', { default: '' }),
    f('groupInstanceId', 'string', '3+', { nullable: '3+', default: null }),
    f(
      'topics',
      arrayOf([
        f('name', 'string'),
        f(
          'partitions',
          arrayOf([
            f('partitionIndex', 'int32'),
            f('committedOffset', 'int64'),
            f('committedLeaderEpoch', 'int32', '2+', { default: -1 }),
            f('committedMetadata', 'string', '0+', { nullable: '0+' }),
          ]),
        ),
      ]),
    ),
  ],
  response: [
    f('throttleTimeMs', 'int32'),
    f(
      'topics',
      arrayOf([
        f('name', 'string'),
        f('partitions', arrayOf([f('partitionIndex', 'int32'), f('errorCode', 'int16')])),
      ]),
    ),
  ],
};
