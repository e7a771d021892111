/**
 * The gateway's API table: one handler per Kafka API (or per family of APIs), each in its own file.
 * To add an API: its schema in protocol/kafka/messages/, its handler in gateway/apis/, one line here.
 */
import type { ApiHandler } from '../api.js';
import { apiVersions } from './api-versions.js';
import { metadata } from './metadata.js';
import { deleteGroups, describeGroups, listGroups } from './groups-admin.js';
import { heartbeat, joinGroup, leaveGroup, syncGroup } from './groups-classic.js';
import { consumerGroupDescribe, consumerGroupHeartbeat } from './groups-kip848.js';
import { offsetCommit, offsetDelete, offsetFetch } from './groups-offsets.js';

/** Consumer groups (gw2): the classic protocol, offsets, administration and KIP-848. */
const GROUP_HANDLERS: readonly ApiHandler[] = [
  joinGroup,
  syncGroup,
  heartbeat,
  leaveGroup,
  offsetCommit,
  offsetFetch,
  offsetDelete,
  listGroups,
  describeGroups,
  deleteGroups,
  consumerGroupHeartbeat,
  consumerGroupDescribe,
];

export const API_HANDLERS: readonly ApiHandler[] = [apiVersions, metadata, ...GROUP_HANDLERS];
