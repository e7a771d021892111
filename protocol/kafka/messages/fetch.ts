import type { MessageSchema } from '../schema.js';
import { arrayOf, f, struct, tagged } from '../schema.js';

/** Fetch (key 1). Fetch sessions (v7+) are answered with session id 0: every fetch is a full one. */
export const Fetch: MessageSchema = {
  apiKey: 1,
  name: 'Fetch',
  validVersions: '0-16',
  flexibleVersions: '12+',
  request: [
    tagged('clusterId', 'string', 0, '12+', { nullable: '12+', default: null }),
    f('replicaId', 'int32', '0-14', { default: -1 }),
    tagged(
      'replicaState',
      struct([
        f('replicaId', 'int32', '15+', { default: -1 }),
        f('replicaEpoch', 'int64', '15+', { default: -1 }),
      ]),
      1,
      '15+',
    ),
    f('maxWaitMs', 'int32'),
    f('minBytes', 'int32'),
    f('maxBytes', 'int32', '3+', { default: 0x7fffffff }),
    f('isolationLevel', 'int8', '4+'),
    f('sessionId', 'int32', '7+'),
    f('sessionEpoch', 'int32', '7+', { default: -1 }),
    f(
      'topics',
      arrayOf([
        f('topic', 'string', '0-12'),
        f('topicId', 'uuid', '13+'),
        f(
          'partitions',
          arrayOf([
            f('partition', 'int32'),
            f('currentLeaderEpoch', 'int32', '9+', { default: -1 }),
            f('fetchOffset', 'int64'),
            f('lastFetchedEpoch', 'int32', '12+', { default: -1 }),
            f('logStartOffset', 'int64', '5+', { default: -1 }),
            f('partitionMaxBytes', 'int32'),
          ]),
        ),
      ]),
    ),
    f(
      'forgottenTopicsData',
      arrayOf([
        f('topic', 'string', '7-12'),
        f('topicId', 'uuid', '13+'),
        f('partitions', { array: 'int32' }, '7+'),
      ]),
      '7+',
    ),
    f('rackId', 'string', '11+'),
  ],
  response: [
    f('throttleTimeMs', 'int32', '1+'),
    f('errorCode', 'int16', '7+'),
    f('sessionId', 'int32', '7+'),
    f(
      'responses',
      arrayOf([
        f('topic', 'string', '0-12'),
        f('topicId', 'uuid', '13+'),
        f(
          'partitions',
          arrayOf([
            f('partitionIndex', 'int32'),
            f('errorCode', 'int16'),
            f('highWatermark', 'int64'),
            f('lastStableOffset', 'int64', '4+', { default: -1 }),
            f('logStartOffset', 'int64', '5+', { default: -1 }),
            tagged(
              'divergingEpoch',
              struct([
                f('epoch', 'int32', '12+', { default: -1 }),
                f('endOffset', 'int64', '12+', { default: -1 }),
              ]),
              0,
              '12+',
            ),
            tagged(
              'currentLeader',
              struct([
                f('leaderId', 'int32', '12+', { default: -1 }),
                f('leaderEpoch', 'int32', '12+', { default: -1 }),
              ]),
              1,
              '12+',
            ),
            tagged(
              'snapshotId',
              struct([
                f('endOffset', 'int64', '0+', { default: -1 }),
                f('epoch', 'int32', '0+', { default: -1 }),
              ]),
              2,
              '12+',
            ),
            f(
              'abortedTransactions',
              arrayOf([f('producerId', 'int64', '4+'), f('firstOffset', 'int64', '4+')]),
              '4+',
              {
                nullable: '4+',
              },
            ),
            f('preferredReadReplica', 'int32', '11+', { default: -1 }),
            f('records', 'records', '0+', { nullable: '0+' }),
          ]),
        ),
      ]),
    ),
    tagged(
      'nodeEndpoints',
      arrayOf([
        f('nodeId', 'int32'),
        f('host', 'string'),
        f('port', 'int32'),
        f('rack', 'string', '0+', { nullable: '0+' }),
      ]),
      0,
      '16+',
    ),
  ],
};
