/**
 * The gateway's API table: one handler per Kafka API (or per family of APIs), each in its own file.
 * To add an API: its schema in protocol/kafka/messages/, its handler in gateway/apis/, one line here.
 */
import type { ApiHandler } from '../api.js';
import { apiVersions } from './api-versions.js';
import { alterClientQuotas, describeClientQuotas } from './client-quotas.js';
import { describeConfigs, incrementalAlterConfigs } from './configs.js';
import { describeCluster } from './describe-cluster.js';
import { fetch } from './fetch.js';
import { findCoordinator } from './find-coordinator.js';
import { initProducerId } from './init-producer-id.js';
import { listOffsets } from './list-offsets.js';
import { metadata } from './metadata.js';
import { deleteGroups, describeGroups, listGroups } from './groups-admin.js';
import { heartbeat, joinGroup, leaveGroup, syncGroup } from './groups-classic.js';
import { consumerGroupDescribe, consumerGroupHeartbeat } from './groups-kip848.js';
import { offsetCommit, offsetDelete, offsetFetch } from './groups-offsets.js';
import { offsetForLeaderEpoch } from './offset-for-leader-epoch.js';
import { produce } from './produce.js';
import { saslAuthenticate, saslHandshake } from './sasl.js';
import { createPartitions, createTopics, deleteTopics } from './topics.js';
import { addOffsetsToTxn, addPartitionsToTxn, endTxn, txnOffsetCommit } from './transactions.js';

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

/** The transactional producer (issue 27): InitProducerId with a transactional.id above, and these. */
const TRANSACTION_HANDLERS: readonly ApiHandler[] = [
  addPartitionsToTxn,
  addOffsetsToTxn,
  txnOffsetCommit,
  endTxn,
];

export const API_HANDLERS: readonly ApiHandler[] = [
  apiVersions,
  metadata,
  produce,
  fetch,
  listOffsets,
  offsetForLeaderEpoch,
  findCoordinator,
  initProducerId,
  createTopics,
  deleteTopics,
  createPartitions,
  describeConfigs,
  incrementalAlterConfigs,
  describeCluster,
  saslHandshake,
  saslAuthenticate,
  describeClientQuotas,
  alterClientQuotas,
  ...GROUP_HANDLERS,
  ...TRANSACTION_HANDLERS,
];
