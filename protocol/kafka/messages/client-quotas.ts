import type { MessageSchema } from '../schema.js';
import { arrayOf, f } from '../schema.js';

/** A quota entity: `user` and/or `client-id` components, a null name being the default. */
const entity = () =>
  f('entity', arrayOf([f('entityType', 'string'), f('entityName', 'string', '0+', { nullable: '0+' })]));

/** DescribeClientQuotas (key 48, KIP-546). MatchType 0 exact, 1 default, 2 any. */
export const DescribeClientQuotas: MessageSchema = {
  apiKey: 48,
  name: 'DescribeClientQuotas',
  validVersions: '0-1',
  flexibleVersions: '1+',
  request: [
    f(
      'components',
      arrayOf([
        f('entityType', 'string'),
        f('matchType', 'int8'),
        f('match', 'string', '0+', { nullable: '0+' }),
      ]),
    ),
    f('strict', 'bool'),
  ],
  response: [
    f('throttleTimeMs', 'int32'),
    f('errorCode', 'int16'),
    f('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
    f(
      'entries',
      arrayOf([entity(), f('values', arrayOf([f('key', 'string'), f('value', 'float64')]))]),
      '0+',
      { nullable: '0+', default: null },
    ),
  ],
};

/** AlterClientQuotas (key 49, KIP-546). */
export const AlterClientQuotas: MessageSchema = {
  apiKey: 49,
  name: 'AlterClientQuotas',
  validVersions: '0-1',
  flexibleVersions: '1+',
  request: [
    f(
      'entries',
      arrayOf([
        entity(),
        f('ops', arrayOf([f('key', 'string'), f('value', 'float64'), f('remove', 'bool')])),
      ]),
    ),
    f('validateOnly', 'bool'),
  ],
  response: [
    f('throttleTimeMs', 'int32'),
    f(
      'entries',
      arrayOf([
        f('errorCode', 'int16'),
        f('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
        entity(),
      ]),
    ),
  ],
};
