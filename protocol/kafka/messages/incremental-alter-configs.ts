import type { MessageSchema } from '../schema.js';
import { arrayOf, f } from '../schema.js';

/** IncrementalAlterConfigs (key 44). Operation 0 = SET, 1 = DELETE, 2 = APPEND, 3 = SUBTRACT. */
export const IncrementalAlterConfigs: MessageSchema = {
  apiKey: 44,
  name: 'IncrementalAlterConfigs',
  validVersions: '0-1',
  flexibleVersions: '1+',
  request: [
    f(
      'resources',
      arrayOf([
        f('resourceType', 'int8'),
        f('resourceName', 'string'),
        f(
          'configs',
          arrayOf([
            f('name', 'string'),
            f('configOperation', 'int8'),
            f('value', 'string', '0+', { nullable: '0+' }),
          ]),
        ),
      ]),
    ),
    f('validateOnly', 'bool'),
  ],
  response: [
    f('throttleTimeMs', 'int32'),
    f(
      'responses',
      arrayOf([
        f('errorCode', 'int16'),
        f('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
        f('resourceType', 'int8'),
        f('resourceName', 'string'),
      ]),
    ),
  ],
};
