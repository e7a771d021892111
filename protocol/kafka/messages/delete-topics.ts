import type { MessageSchema } from '../schema.js';
import { arrayOf, f } from '../schema.js';

/** DeleteTopics (key 20). v6 names topics by name or id. */
export const DeleteTopics: MessageSchema = {
  apiKey: 20,
  name: 'DeleteTopics',
  validVersions: '0-6',
  flexibleVersions: '4+',
  request: [
    f('topics', arrayOf([f('name', 'string', '6+', { nullable: '6+' }), f('topicId', 'uuid', '6+')]), '6+'),
    f('topicNames', { array: 'string' }, '0-5'),
    f('timeoutMs', 'int32'),
  ],
  response: [
    f('throttleTimeMs', 'int32', '1+'),
    f(
      'responses',
      arrayOf([
        f('name', 'string', '0+', { nullable: '6+' }),
        f('topicId', 'uuid', '6+'),
        f('errorCode', 'int16'),
        f('errorMessage', 'string', '5+', { nullable: '5+', default: null }),
      ]),
    ),
  ],
};
