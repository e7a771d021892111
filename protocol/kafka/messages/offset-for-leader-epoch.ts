import type { MessageSchema } from '../schema.js';
import { arrayOf, f } from '../schema.js';

/** OffsetForLeaderEpoch (key 23): the end offset of a leader epoch, for truncation detection (KIP-320). */
export const OffsetForLeaderEpoch: MessageSchema = {
  apiKey: 23,
  name: 'OffsetForLeaderEpoch',
  validVersions: '0-4',
  flexibleVersions: '4+',
  request: [
    f('replicaId', 'int32', '3+', { default: -2 }),
    f(
      'topics',
      arrayOf([
        f('topic', 'string'),
        f(
          'partitions',
          arrayOf([
            f('partition', 'int32'),
            f('currentLeaderEpoch', 'int32', '2+', { default: -1 }),
            f('leaderEpoch', 'int32'),
          ]),
        ),
      ]),
    ),
  ],
  response: [
    f('throttleTimeMs', 'int32', '2+'),
    f(
      'topics',
      arrayOf([
        f('topic', 'string'),
        f(
          'partitions',
          arrayOf([
            f('errorCode', 'int16'),
            f('partition', 'int32'),
            f('leaderEpoch', 'int32', '1+', { default: -1 }),
            f('endOffset', 'int64', '0+', { default: -1 }),
          ]),
        ),
      ]),
    ),
  ],
};
