import type { MessageSchema } from '../schema.js';
import { arrayOf, f } from '../schema.js';

/** CreatePartitions (key 37): grows a topic to `count` partitions. */
export const CreatePartitions: MessageSchema = {
  apiKey: 37,
  name: 'CreatePartitions',
  validVersions: '0-3',
  flexibleVersions: '2+',
  request: [
    f(
      'topics',
      arrayOf([
        f('name', 'string'),
        f('count', 'int32'),
        f('assignments', arrayOf([f('brokerIds', { array: 'int32' })]), '0+', { nullable: '0+' }),
      ]),
    ),
    f('timeoutMs', 'int32'),
    f('validateOnly', 'bool'),
  ],
  response: [
    f('throttleTimeMs', 'int32'),
    f(
      'results',
      arrayOf([
        f('name', 'string'),
        f('errorCode', 'int16'),
        f('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
      ]),
    ),
  ],
};
