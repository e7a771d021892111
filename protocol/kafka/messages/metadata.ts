import type { MessageSchema } from '../schema.js';
import { arrayOf, f } from '../schema.js';

/** Metadata (key 3). A null topic list (v1+) or an empty one (v0) asks for every topic. */
export const Metadata: MessageSchema = {
  apiKey: 3,
  name: 'Metadata',
  validVersions: '0-12',
  flexibleVersions: '9+',
  request: [
    f(
      'topics',
      arrayOf([f('topicId', 'uuid', '10+'), f('name', 'string', '0+', { nullable: '10+' })]),
      '0+',
      {
        nullable: '1+',
      },
    ),
    f('allowAutoTopicCreation', 'bool', '4+', { default: true }),
    f('includeClusterAuthorizedOperations', 'bool', '8-10'),
    f('includeTopicAuthorizedOperations', 'bool', '8+'),
  ],
  response: [
    f('throttleTimeMs', 'int32', '3+'),
    f(
      'brokers',
      arrayOf([
        f('nodeId', 'int32'),
        f('host', 'string'),
        f('port', 'int32'),
        f('rack', 'string', '1+', { nullable: '1+' }),
      ]),
    ),
    f('clusterId', 'string', '2+', { nullable: '2+' }),
    f('controllerId', 'int32', '1+', { default: -1 }),
    f(
      'topics',
      arrayOf([
        f('errorCode', 'int16'),
        f('name', 'string', '0+', { nullable: '12+' }),
        f('topicId', 'uuid', '10+'),
        f('isInternal', 'bool', '1+'),
        f(
          'partitions',
          arrayOf([
            f('errorCode', 'int16'),
            f('partitionIndex', 'int32'),
            f('leaderId', 'int32'),
            f('leaderEpoch', 'int32', '7+', { default: -1 }),
            f('replicaNodes', { array: 'int32' }),
            f('isrNodes', { array: 'int32' }),
            f('offlineReplicas', { array: 'int32' }, '5+'),
          ]),
        ),
        f('topicAuthorizedOperations', 'int32', '8+', { default: -2147483648 }),
      ]),
    ),
    f('clusterAuthorizedOperations', 'int32', '8-10', { default: -2147483648 }),
  ],
};
