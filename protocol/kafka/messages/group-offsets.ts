/** OffsetCommit, OffsetFetch and OffsetDelete, transcribed from Kafka's JSON message definitions. */
import type { MessageSchema } from '../schema.js';
import { arrayOf, f } from '../schema.js';

/** OffsetCommit (key 8). v10 names topics by id; served up to v9. */
export const OffsetCommit: MessageSchema = {
  apiKey: 8,
  name: 'OffsetCommit',
  validVersions: '0-9',
  flexibleVersions: '8+',
  request: [
    f('groupId', 'string'),
    f('generationIdOrMemberEpoch', 'int32', '1+', { default: -1 }),
    f('memberId', 'string', '1+', { default: '' }),
    f('groupInstanceId', 'string', '7+', { nullable: '7+', default: null }),
    f('retentionTimeMs', 'int64', '2-4', { default: -1 }),
    f(
      'topics',
      arrayOf([
        f('name', 'string'),
        f(
          'partitions',
          arrayOf([
            f('partitionIndex', 'int32'),
            f('committedOffset', 'int64'),
            f('committedLeaderEpoch', 'int32', '6+', { default: -1 }),
            f('commitTimestamp', 'int64', '1', { default: -1 }),
            f('committedMetadata', 'string', '0+', { nullable: '0+' }),
          ]),
        ),
      ]),
    ),
  ],
  response: [
    f('throttleTimeMs', 'int32', '3+'),
    f(
      'topics',
      arrayOf([
        f('name', 'string'),
        f('partitions', arrayOf([f('partitionIndex', 'int32'), f('errorCode', 'int16')])),
      ]),
    ),
  ],
};

const fetchedPartitions = (versions: string) =>
  arrayOf([
    f('partitionIndex', 'int32', versions),
    f('committedOffset', 'int64', versions),
    f('committedLeaderEpoch', 'int32', '5+', { default: -1 }),
    f('metadata', 'string', versions, { nullable: versions }),
    f('errorCode', 'int16', versions),
  ]);

/** OffsetFetch (key 9). v8+ asks for several groups at once; v10 names topics by id (served up to v9). */
export const OffsetFetch: MessageSchema = {
  apiKey: 9,
  name: 'OffsetFetch',
  validVersions: '0-9',
  flexibleVersions: '6+',
  request: [
    f('groupId', 'string', '0-7'),
    f(
      'topics',
      arrayOf([f('name', 'string', '0-7'), f('partitionIndexes', { array: 'int32' }, '0-7')]),
      '0-7',
      { nullable: '2-7' },
    ),
    f(
      'groups',
      arrayOf([
        f('groupId', 'string', '8+'),
        f('memberId', 'string', '9+', { nullable: '9+', default: null }),
        f('memberEpoch', 'int32', '9+', { default: -1 }),
        f(
          'topics',
          arrayOf([f('name', 'string', '8+'), f('partitionIndexes', { array: 'int32' }, '8+')]),
          '8+',
          { nullable: '8+' },
        ),
      ]),
      '8+',
    ),
    f('requireStable', 'bool', '7+', { default: false }),
  ],
  response: [
    f('throttleTimeMs', 'int32', '3+'),
    f(
      'topics',
      arrayOf([f('name', 'string', '0-7'), f('partitions', fetchedPartitions('0-7'), '0-7')]),
      '0-7',
    ),
    f('errorCode', 'int16', '2-7'),
    f(
      'groups',
      arrayOf([
        f('groupId', 'string', '8+'),
        f(
          'topics',
          arrayOf([f('name', 'string', '8+'), f('partitions', fetchedPartitions('8+'), '8+')]),
          '8+',
        ),
        f('errorCode', 'int16', '8+'),
      ]),
      '8+',
    ),
  ],
};

/** OffsetDelete (key 47). */
export const OffsetDelete: MessageSchema = {
  apiKey: 47,
  name: 'OffsetDelete',
  validVersions: '0',
  flexibleVersions: 'none',
  request: [
    f('groupId', 'string'),
    f('topics', arrayOf([f('name', 'string'), f('partitions', arrayOf([f('partitionIndex', 'int32')]))])),
  ],
  response: [
    f('errorCode', 'int16'),
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
