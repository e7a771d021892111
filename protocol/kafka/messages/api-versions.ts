import type { MessageSchema } from '../schema.js';
import { arrayOf, f, tagged } from '../schema.js';

/** ApiVersions (key 18). KIP-511 added the client's software name and version in v3. */
export const ApiVersions: MessageSchema = {
  apiKey: 18,
  name: 'ApiVersions',
  validVersions: '0-4',
  flexibleVersions: '3+',
  request: [f('clientSoftwareName', 'string', '3+'), f('clientSoftwareVersion', 'string', '3+')],
  response: [
    f('errorCode', 'int16'),
    f('apiKeys', arrayOf([f('apiKey', 'int16'), f('minVersion', 'int16'), f('maxVersion', 'int16')])),
    f('throttleTimeMs', 'int32', '1+'),
    tagged(
      'supportedFeatures',
      arrayOf([f('name', 'string'), f('minVersion', 'int16'), f('maxVersion', 'int16')]),
      0,
      '3+',
    ),
    tagged('finalizedFeaturesEpoch', 'int64', 1, '3+', { default: -1 }),
    tagged(
      'finalizedFeatures',
      arrayOf([f('name', 'string'), f('maxVersionLevel', 'int16'), f('minVersionLevel', 'int16')]),
      2,
      '3+',
    ),
    tagged('zkMigrationReady', 'bool', 3, '3+'),
  ],
};
