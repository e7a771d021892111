/**
 * The classic group protocol's messages (JoinGroup, SyncGroup, Heartbeat, LeaveGroup), transcribed
 * from Kafka's JSON message definitions.
 */
import type { MessageSchema } from '../schema.js';
import { arrayOf, f } from '../schema.js';

/** JoinGroup (key 11). v4+ answers a first join without a member id with MEMBER_ID_REQUIRED (KIP-394). */
export const JoinGroup: MessageSchema = {
  apiKey: 11,
  name: 'JoinGroup',
  validVersions: '0-9',
  flexibleVersions: '6+',
  request: [
    f('groupId', 'string'),
    f('sessionTimeoutMs', 'int32'),
    f('rebalanceTimeoutMs', 'int32', '1+', { default: -1 }),
    f('memberId', 'string'),
    f('groupInstanceId', 'string', '5+', { nullable: '5+', default: null }),
    f('protocolType', 'string'),
    f('protocols', arrayOf([f('name', 'string'), f('metadata', 'bytes')])),
    f('reason', 'string', '8+', { nullable: '8+', default: null }),
  ],
  response: [
    f('throttleTimeMs', 'int32', '2+'),
    f('errorCode', 'int16'),
    f('generationId', 'int32', '0+', { default: -1 }),
    f('protocolType', 'string', '7+', { nullable: '7+', default: null }),
    f('protocolName', 'string', '0+', { nullable: '7+' }),
    f('leader', 'string'),
    f('skipAssignment', 'bool', '9+', { default: false }),
    f('memberId', 'string'),
    f(
      'members',
      arrayOf([
        f('memberId', 'string'),
        f('groupInstanceId', 'string', '5+', { nullable: '5+', default: null }),
        f('metadata', 'bytes'),
      ]),
    ),
  ],
};

/** SyncGroup (key 14). */
export const SyncGroup: MessageSchema = {
  apiKey: 14,
  name: 'SyncGroup',
  validVersions: '0-5',
  flexibleVersions: '4+',
  request: [
    f('groupId', 'string'),
    f('generationId', 'int32'),
    f('memberId', 'string'),
    f('groupInstanceId', 'string', '3+', { nullable: '3+', default: null }),
    f('protocolType', 'string', '5+', { nullable: '5+', default: null }),
    f('protocolName', 'string', '5+', { nullable: '5+', default: null }),
    f('assignments', arrayOf([f('memberId', 'string'), f('assignment', 'bytes')])),
  ],
  response: [
    f('throttleTimeMs', 'int32', '1+'),
    f('errorCode', 'int16'),
    f('protocolType', 'string', '5+', { nullable: '5+', default: null }),
    f('protocolName', 'string', '5+', { nullable: '5+', default: null }),
    f('assignment', 'bytes'),
  ],
};

/** Heartbeat (key 12). */
export const Heartbeat: MessageSchema = {
  apiKey: 12,
  name: 'Heartbeat',
  validVersions: '0-4',
  flexibleVersions: '4+',
  request: [
    f('groupId', 'string'),
    f('generationId', 'int32'),
    f('memberId', 'string'),
    f('groupInstanceId', 'string', '3+', { nullable: '3+', default: null }),
  ],
  response: [f('throttleTimeMs', 'int32', '1+'), f('errorCode', 'int16')],
};

/** LeaveGroup (key 13). v3+ leaves several members (by member id or group instance id) at once. */
export const LeaveGroup: MessageSchema = {
  apiKey: 13,
  name: 'LeaveGroup',
  validVersions: '0-5',
  flexibleVersions: '4+',
  request: [
    f('groupId', 'string'),
    f('memberId', 'string', '0-2'),
    f(
      'members',
      arrayOf([
        f('memberId', 'string', '3+'),
        f('groupInstanceId', 'string', '3+', { nullable: '3+', default: null }),
        f('reason', 'string', '5+', { nullable: '5+', default: null }),
      ]),
      '3+',
    ),
  ],
  response: [
    f('throttleTimeMs', 'int32', '1+'),
    f('errorCode', 'int16'),
    f(
      'members',
      arrayOf([
        f('memberId', 'string', '3+'),
        f('groupInstanceId', 'string', '3+', { nullable: '3+' }),
        f('errorCode', 'int16', '3+'),
      ]),
      '3+',
    ),
  ],
};
