import type { MessageSchema } from '../schema.js';
import { arrayOf, f } from '../schema.js';

/** FindCoordinator (key 10). Key type 0 = group, 1 = transaction; v4+ asks for many keys at once. */
export const FindCoordinator: MessageSchema = {
  apiKey: 10,
  name: 'FindCoordinator',
  validVersions: '0-6',
  flexibleVersions: '3+',
  request: [
    f('key', 'string', '0-3'),
    f('keyType', 'int8', '1+'),
    f('coordinatorKeys', { array: 'string' }, '4+'),
  ],
  response: [
    f('throttleTimeMs', 'int32', '1+'),
    f('errorCode', 'int16', '0-3'),
    f('errorMessage', 'string', '1-3', { nullable: '1-3' }),
    f('nodeId', 'int32', '0-3'),
    f('host', 'string', '0-3'),
    f('port', 'int32', '0-3'),
    f(
      'coordinators',
      arrayOf([
        f('key', 'string', '4+'),
        f('nodeId', 'int32', '4+'),
        f('host', 'string', '4+'),
        f('port', 'int32', '4+'),
        f('errorCode', 'int16', '4+'),
        f('errorMessage', 'string', '4+', { nullable: '4+' }),
      ]),
      '4+',
    ),
  ],
};
