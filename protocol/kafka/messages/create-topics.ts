import type { MessageSchema } from '../schema.js';
import { arrayOf, f, tagged } from '../schema.js';

/** CreateTopics (key 19). −1 partitions or replication factor means the cluster's default (KIP-464). */
export const CreateTopics: MessageSchema = {
  apiKey: 19,
  name: 'CreateTopics',
  validVersions: '0-7',
  flexibleVersions: '5+',
  request: [
    f(
      'topics',
      arrayOf([
        f('name', 'string'),
        f('numPartitions', 'int32'),
        f('replicationFactor', 'int16'),
        f('assignments', arrayOf([f('partitionIndex', 'int32'), f('brokerIds', { array: 'int32' })])),
        f('configs', arrayOf([f('name', 'string'), f('value', 'string', '0+', { nullable: '0+' })])),
      ]),
    ),
    f('timeoutMs', 'int32', '0+', { default: 60000 }),
    f('validateOnly', 'bool', '1+'),
  ],
  response: [
    f('throttleTimeMs', 'int32', '2+'),
    f(
      'topics',
      arrayOf([
        f('name', 'string'),
        f('topicId', 'uuid', '7+'),
        f('errorCode', 'int16'),
        f('errorMessage', 'string', '1+', { nullable: '0+', default: null }),
        tagged('topicConfigErrorCode', 'int16', 0, '5+'),
        f('numPartitions', 'int32', '5+', { default: -1 }),
        f('replicationFactor', 'int16', '5+', { default: -1 }),
        f(
          'configs',
          arrayOf([
            f('name', 'string', '5+'),
            f('value', 'string', '5+', { nullable: '5+' }),
            f('readOnly', 'bool', '5+'),
            f('configSource', 'int8', '5+', { default: -1 }),
            f('isSensitive', 'bool', '5+'),
          ]),
          '5+',
          { nullable: '5+' },
        ),
      ]),
    ),
  ],
};
