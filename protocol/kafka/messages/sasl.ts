import type { MessageSchema } from '../schema.js';
import { f } from '../schema.js';

/** SaslHandshake (key 17): the mechanism the client will authenticate with (v1: then SaslAuthenticate). */
export const SaslHandshake: MessageSchema = {
  apiKey: 17,
  name: 'SaslHandshake',
  validVersions: '0-1',
  flexibleVersions: 'none',
  request: [f('mechanism', 'string')],
  response: [f('errorCode', 'int16'), f('mechanisms', { array: 'string' })],
};

/** SaslAuthenticate (key 36): the mechanism's bytes; v1 adds the session lifetime (KIP-368). */
export const SaslAuthenticate: MessageSchema = {
  apiKey: 36,
  name: 'SaslAuthenticate',
  validVersions: '0-2',
  flexibleVersions: '2+',
  request: [f('authBytes', 'bytes')],
  response: [
    f('errorCode', 'int16'),
    f('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
    f('authBytes', 'bytes'),
    f('sessionLifetimeMs', 'int64', '1+', { default: 0 }),
  ],
};
