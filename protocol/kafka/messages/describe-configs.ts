import type { MessageSchema } from '../schema.js';
import { arrayOf, f } from '../schema.js';

/** DescribeConfigs (key 32). Resource type 2 = topic, 4 = broker. */
export const DescribeConfigs: MessageSchema = {
  apiKey: 32,
  name: 'DescribeConfigs',
  validVersions: '0-4',
  flexibleVersions: '4+',
  request: [
    f(
      'resources',
      arrayOf([
        f('resourceType', 'int8'),
        f('resourceName', 'string'),
        f('configurationKeys', { array: 'string' }, '0+', { nullable: '0+' }),
      ]),
    ),
    f('includeSynonyms', 'bool', '1+'),
    f('includeDocumentation', 'bool', '3+'),
  ],
  response: [
    f('throttleTimeMs', 'int32'),
    f(
      'results',
      arrayOf([
        f('errorCode', 'int16'),
        f('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
        f('resourceType', 'int8'),
        f('resourceName', 'string'),
        f(
          'configs',
          arrayOf([
            f('name', 'string'),
            f('value', 'string', '0+', { nullable: '0+' }),
            f('readOnly', 'bool'),
            f('isDefault', 'bool', '0'),
            f('configSource', 'int8', '1+', { default: -1 }),
            f('isSensitive', 'bool'),
            f(
              'synonyms',
              arrayOf([
                f('name', 'string'),
                f('value', 'string', '0+', { nullable: '0+' }),
                f('source', 'int8'),
              ]),
              '1+',
            ),
            f('configType', 'int8', '3+'),
            f('documentation', 'string', '3+', { nullable: '0+', default: null }),
          ]),
        ),
      ]),
    ),
  ],
};
