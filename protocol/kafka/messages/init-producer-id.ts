import type { MessageSchema } from '../schema.js';
import { f } from '../schema.js';

/** InitProducerId (key 22): a producer id and epoch for the idempotent (and transactional) producer. */
export const InitProducerId: MessageSchema = {
  apiKey: 22,
  name: 'InitProducerId',
  validVersions: '0-5',
  flexibleVersions: '2+',
  request: [
    f('transactionalId', 'string', '0+', { nullable: '0+' }),
    f('transactionTimeoutMs', 'int32'),
    f('producerId', 'int64', '3+', { default: -1 }),
    f('producerEpoch', 'int16', '3+', { default: -1 }),
  ],
  response: [
    f('throttleTimeMs', 'int32'),
    f('errorCode', 'int16'),
    f('producerId', 'int64', '0+', { default: -1 }),
    f('producerEpoch', 'int16'),
  ],
};
