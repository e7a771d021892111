import type { MessageSchema } from '../schema.js';
import { arrayOf, f } from '../schema.js';

/** ListOffsets (key 2). Timestamp −2 asks for the earliest offset, −1 the latest, else by time. */
export const ListOffsets: MessageSchema = {
  apiKey: 2,
  name: 'ListOffsets',
  validVersions: '0-8',
  flexibleVersions: '6+',
  request: [
    f('replicaId', 'int32'),
    f('isolationLevel', 'int8', '2+'),
    f(
      'topics',
      arrayOf([
        f('name', 'string'),
        f(
          'partitions',
          arrayOf([
            f('partitionIndex', 'int32'),
            f('currentLeaderEpoch', 'int32', '4+', { default: -1 }),
            f('timestamp', 'int64'),
            f('maxNumOffsets', 'int32', '0', { default: 1 }),
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
        f('name', 'string'),
        f(
          'partitions',
          arrayOf([
            f('partitionIndex', 'int32'),
            f('errorCode', 'int16'),
            f('oldStyleOffsets', { array: 'int64' }, '0'),
            f('timestamp', 'int64', '1+', { default: -1 }),
            f('offset', 'int64', '1+', { default: -1 }),
            f('leaderEpoch', 'int32', '4+', { default: -1 }),
          ]),
        ),
      ]),
    ),
  ],
};
