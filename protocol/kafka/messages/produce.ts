import type { MessageSchema } from '../schema.js';
import { arrayOf, f, struct, tagged } from '../schema.js';

const leaderIdAndEpoch = struct([
  f('leaderId', 'int32', '0+', { default: -1 }),
  f('leaderEpoch', 'int32', '0+', { default: -1 }),
]);

/** Produce (key 0). Records are RecordBatch bytes, passed through as they are. */
export const Produce: MessageSchema = {
  apiKey: 0,
  name: 'Produce',
  validVersions: '0-11',
  flexibleVersions: '9+',
  request: [
    f('transactionalId', 'string', '3+', { nullable: '3+' }),
    f('acks', 'int16'),
    f('timeoutMs', 'int32'),
    f(
      'topicData',
      arrayOf([
        f('name', 'string'),
        f('partitionData', arrayOf([f('index', 'int32'), f('records', 'records', '0+', { nullable: '0+' })])),
      ]),
    ),
  ],
  response: [
    f(
      'responses',
      arrayOf([
        f('name', 'string'),
        f(
          'partitionResponses',
          arrayOf([
            f('index', 'int32'),
            f('errorCode', 'int16'),
            f('baseOffset', 'int64'),
            f('logAppendTimeMs', 'int64', '2+', { default: -1 }),
            f('logStartOffset', 'int64', '5+', { default: -1 }),
            f(
              'recordErrors',
              arrayOf([
                f('batchIndex', 'int32'),
                f('batchIndexErrorMessage', 'string', '8+', { nullable: '8+' }),
              ]),
              '8+',
            ),
            f('errorMessage', 'string', '8+', { nullable: '8+' }),
            tagged('currentLeader', leaderIdAndEpoch, 0, '10+'),
          ]),
        ),
      ]),
    ),
    f('throttleTimeMs', 'int32', '1+'),
    tagged(
      'nodeEndpoints',
      arrayOf([
        f('nodeId', 'int32'),
        f('host', 'string'),
        f('port', 'int32'),
        f('rack', 'string', '0+', { nullable: '0+' }),
      ]),
      0,
      '10+',
    ),
  ],
};
