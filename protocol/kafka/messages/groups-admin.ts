/**
 * Group administration and KIP-848's consumer-group APIs (DescribeGroups, ListGroups, DeleteGroups,
 * ConsumerGroupHeartbeat, ConsumerGroupDescribe), transcribed from Kafka's JSON message definitions.
 */
import type { MessageSchema } from '../schema.js';
import { arrayOf, f, struct } from '../schema.js';

/** DescribeGroups (key 15). */
export const DescribeGroups: MessageSchema = {
  apiKey: 15,
  name: 'DescribeGroups',
  validVersions: '0-6',
  flexibleVersions: '5+',
  request: [f('groups', { array: 'string' }), f('includeAuthorizedOperations', 'bool', '3+')],
  response: [
    f('throttleTimeMs', 'int32', '1+'),
    f(
      'groups',
      arrayOf([
        f('errorCode', 'int16'),
        f('errorMessage', 'string', '6+', { nullable: '6+', default: null }),
        f('groupId', 'string'),
        f('groupState', 'string'),
        f('protocolType', 'string'),
        f('protocolData', 'string'),
        f(
          'members',
          arrayOf([
            f('memberId', 'string'),
            f('groupInstanceId', 'string', '4+', { nullable: '4+', default: null }),
            f('clientId', 'string'),
            f('clientHost', 'string'),
            f('memberMetadata', 'bytes'),
            f('memberAssignment', 'bytes'),
          ]),
        ),
        f('authorizedOperations', 'int32', '3+', { default: -2147483648 }),
      ]),
    ),
  ],
};

/** ListGroups (key 16). */
export const ListGroups: MessageSchema = {
  apiKey: 16,
  name: 'ListGroups',
  validVersions: '0-5',
  flexibleVersions: '3+',
  request: [f('statesFilter', { array: 'string' }, '4+'), f('typesFilter', { array: 'string' }, '5+')],
  response: [
    f('throttleTimeMs', 'int32', '1+'),
    f('errorCode', 'int16'),
    f(
      'groups',
      arrayOf([
        f('groupId', 'string'),
        f('protocolType', 'string'),
        f('groupState', 'string', '4+'),
        f('groupType', 'string', '5+'),
      ]),
    ),
  ],
};

/** DeleteGroups (key 42). */
export const DeleteGroups: MessageSchema = {
  apiKey: 42,
  name: 'DeleteGroups',
  validVersions: '0-2',
  flexibleVersions: '2+',
  request: [f('groupsNames', { array: 'string' })],
  response: [
    f('throttleTimeMs', 'int32'),
    f('results', arrayOf([f('groupId', 'string'), f('errorCode', 'int16')])),
  ],
};

const topicPartitions = arrayOf([f('topicId', 'uuid'), f('partitions', { array: 'int32' })]);

/** ConsumerGroupHeartbeat (key 68, KIP-848): topics are named by id. */
export const ConsumerGroupHeartbeat: MessageSchema = {
  apiKey: 68,
  name: 'ConsumerGroupHeartbeat',
  validVersions: '0-1',
  flexibleVersions: '0+',
  request: [
    f('groupId', 'string'),
    f('memberId', 'string'),
    f('memberEpoch', 'int32'),
    f('instanceId', 'string', '0+', { nullable: '0+', default: null }),
    f('rackId', 'string', '0+', { nullable: '0+', default: null }),
    f('rebalanceTimeoutMs', 'int32', '0+', { default: -1 }),
    f('subscribedTopicNames', { array: 'string' }, '0+', { nullable: '0+', default: null }),
    f('subscribedTopicRegex', 'string', '1+', { nullable: '1+', default: null }),
    f('serverAssignor', 'string', '0+', { nullable: '0+', default: null }),
    f('topicPartitions', topicPartitions, '0+', { nullable: '0+', default: null }),
  ],
  response: [
    f('throttleTimeMs', 'int32'),
    f('errorCode', 'int16'),
    f('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
    f('memberId', 'string', '0+', { nullable: '0+', default: null }),
    f('memberEpoch', 'int32'),
    f('heartbeatIntervalMs', 'int32'),
    f('assignment', struct([f('topicPartitions', topicPartitions)]), '0+', { nullable: '0+', default: null }),
  ],
};

const describedAssignment = struct([
  f(
    'topicPartitions',
    arrayOf([f('topicId', 'uuid'), f('topicName', 'string'), f('partitions', { array: 'int32' })]),
  ),
]);

/** ConsumerGroupDescribe (key 69, KIP-848). */
export const ConsumerGroupDescribe: MessageSchema = {
  apiKey: 69,
  name: 'ConsumerGroupDescribe',
  validVersions: '0-1',
  flexibleVersions: '0+',
  request: [f('groupIds', { array: 'string' }), f('includeAuthorizedOperations', 'bool')],
  response: [
    f('throttleTimeMs', 'int32'),
    f(
      'groups',
      arrayOf([
        f('errorCode', 'int16'),
        f('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
        f('groupId', 'string'),
        f('groupState', 'string'),
        f('groupEpoch', 'int32'),
        f('assignmentEpoch', 'int32'),
        f('assignorName', 'string'),
        f(
          'members',
          arrayOf([
            f('memberId', 'string'),
            f('instanceId', 'string', '0+', { nullable: '0+', default: null }),
            f('rackId', 'string', '0+', { nullable: '0+', default: null }),
            f('memberEpoch', 'int32'),
            f('clientId', 'string'),
            f('clientHost', 'string'),
            f('subscribedTopicNames', { array: 'string' }),
            f('subscribedTopicRegex', 'string', '0+', { nullable: '0+', default: null }),
            f('assignment', describedAssignment),
            f('targetAssignment', describedAssignment),
            f('memberType', 'int8', '1+', { default: -1 }),
          ]),
        ),
        f('authorizedOperations', 'int32', '0+', { default: -2147483648 }),
      ]),
    ),
  ],
};
