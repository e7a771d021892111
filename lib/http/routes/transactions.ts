/**
 * Kafka's transaction APIs over HTTP (KIP-98): InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn,
 * TxnOffsetCommit, EndTxn. The transaction coordinator is a coordinator like the group coordinator
 * (Kafka's FindCoordinator answers both, and TxnOffsetCommit writes into groups), so the groups
 * function serves these beside the groups' routes; the listings are the admin function's.
 */
import type { ErrorCode } from '../../../protocol/errors.js';
import type { TransactionCoordinator, TransactionMetadata } from '../../core/transactions/index.js';
import type {
  AddOffsetsToTxnRequest,
  AddPartitionsToTxnRequest,
  EndTxnRequest,
  InitTransactionalProducerIdRequest,
  ProducerIdentity,
  TxnOffsetCommitRequest,
} from '../../wire/types.js';
import { defineRoute } from '../define-route.js';
import { json } from '../types.js';
import { TOPIC_ERRORS } from './errors.js';
import '../validators/transactions.js';

export interface TransactionRoutesOptions {
  transactions: TransactionCoordinator;
}

const TXN_ERRORS: ErrorCode[] = [
  'PRODUCER_FENCED',
  'INVALID_PRODUCER_EPOCH',
  'INVALID_PRODUCER_ID_MAPPING',
  'INVALID_TXN_STATE',
  'CONCURRENT_TRANSACTIONS',
  'COORDINATOR_NOT_AVAILABLE',
];

const ACL = { operation: 'WRITE', resourceType: 'TRANSACTIONAL_ID', param: 'transactionalId' } as const;

/** The body, validated against its schema (defineRoute's `body`) before the handler runs. */
const bodyAs = <T>(body: Record<string, unknown>): T => body as unknown as T;

const producerOf = (body: ProducerIdentity): ProducerIdentity => ({
  producerId: body.producerId,
  producerEpoch: body.producerEpoch,
});

const describe = (m: TransactionMetadata) => ({
  transactionalId: m.transactionalId,
  producerId: m.producerId,
  producerEpoch: m.producerEpoch,
  state: m.state,
  transactionTimeoutMs: m.transactionTimeoutMs,
  transactionStartTimeMs: m.transactionStartTimeMs,
  partitions: [...new Set(m.partitions.map((p) => p.topic))].map((topic) => ({
    topic,
    partitions: m.partitions.filter((p) => p.topic === topic).map((p) => p.partition),
  })),
  groups: m.groups,
});

export const TRANSACTION_ROUTES = [
  defineRoute<TransactionRoutesOptions>({
    method: 'POST',
    path: '/v1/transactions/{transactionalId}/producer',
    job: 'groups',
    acl: ACL,
    id: 'initTransactionalProducerId',
    summary:
      'InitProducerId with a transactional.id: bumps the epoch, fencing the previous instance and aborting its open transaction.',
    body: 'InitTransactionalProducerId',
    ok: { 200: 'ProducerId' },
    errors: ['INVALID_TRANSACTION_TIMEOUT', ...TXN_ERRORS],
    handler:
      ({ transactions }) =>
      async (request, body = {}) =>
        json(
          200,
          await transactions.initProducerId(
            request.params['transactionalId']!,
            bodyAs<InitTransactionalProducerIdRequest>(body).transactionTimeoutMs,
          ),
        ),
  }),
  defineRoute<TransactionRoutesOptions>({
    method: 'POST',
    path: '/v1/transactions/{transactionalId}/partitions',
    job: 'groups',
    acl: ACL,
    bodyNamesResources: true,
    id: 'addPartitionsToTxn',
    summary:
      'AddPartitionsToTxn: the partitions the open transaction writes to (begins one if none is open).',
    body: 'AddPartitionsToTxn',
    ok: { 204: 'empty' },
    errors: [...TOPIC_ERRORS, ...TXN_ERRORS],
    handler:
      ({ transactions }) =>
      async (request, body = {}) => {
        const add = bodyAs<AddPartitionsToTxnRequest>(body);
        const topics = add.topics;
        await transactions.addPartitions(
          request.params['transactionalId']!,
          producerOf(add),
          topics.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition }))),
        );
        return { status: 204, headers: {}, body: new Uint8Array() };
      },
  }),
  defineRoute<TransactionRoutesOptions>({
    method: 'POST',
    path: '/v1/transactions/{transactionalId}/groups',
    job: 'groups',
    acl: ACL,
    bodyNamesResources: true,
    id: 'addOffsetsToTxn',
    summary: 'AddOffsetsToTxn: the consumer group whose offsets the transaction commits.',
    body: 'AddOffsetsToTxn',
    ok: { 204: 'empty' },
    errors: TXN_ERRORS,
    handler:
      ({ transactions }) =>
      async (request, body = {}) => {
        const add = bodyAs<AddOffsetsToTxnRequest>(body);
        await transactions.addOffsets(request.params['transactionalId']!, producerOf(add), add.groupId);
        return { status: 204, headers: {}, body: new Uint8Array() };
      },
  }),
  defineRoute<TransactionRoutesOptions>({
    method: 'POST',
    path: '/v1/transactions/{transactionalId}/offsets',
    job: 'groups',
    acl: ACL,
    bodyNamesResources: true,
    id: 'txnOffsetCommit',
    summary:
      "TxnOffsetCommit: offsets that become the group's committed offsets only when the transaction commits; fenced by the member's epoch (KIP-447).",
    body: 'TxnOffsetCommit',
    ok: { 204: 'empty' },
    errors: [...TOPIC_ERRORS, ...TXN_ERRORS, 'UNKNOWN_MEMBER_ID', 'STALE_MEMBER_EPOCH'],
    handler:
      ({ transactions }) =>
      async (request, body = {}) => {
        const commit = bodyAs<TxnOffsetCommitRequest>(body);
        const offsets = commit.offsets.map((o) => ({
          topic: o.topic,
          partition: o.partition,
          offset: o.offset,
          metadata: o.metadata ?? '',
        }));
        await transactions.txnOffsetCommit(request.params['transactionalId']!, producerOf(commit), {
          groupId: commit.groupId,
          memberId: commit.memberId ?? null,
          generationId: commit.generationId ?? -1,
          offsets,
        });
        return { status: 204, headers: {}, body: new Uint8Array() };
      },
  }),
  defineRoute<TransactionRoutesOptions>({
    method: 'POST',
    path: '/v1/transactions/{transactionalId}/end',
    job: 'groups',
    acl: ACL,
    id: 'endTxn',
    summary: 'EndTxn: commit or abort; answers the producer epoch for the next transaction (KIP-890).',
    body: 'EndTxn',
    ok: { 200: 'ProducerId' },
    errors: TXN_ERRORS,
    handler:
      ({ transactions }) =>
      async (request, body = {}) =>
        json(
          200,
          await transactions.endTxn(
            request.params['transactionalId']!,
            producerOf(bodyAs<EndTxnRequest>(body)),
            bodyAs<EndTxnRequest>(body).committed === true,
            bodyAs<EndTxnRequest>(body).transactionVersion === 1 ? 1 : 2,
          ),
        ),
  }),
  defineRoute<TransactionRoutesOptions>({
    method: 'GET',
    path: '/v1/transactions',
    job: 'admin',
    acl: { operation: 'DESCRIBE', resourceType: 'CLUSTER' },
    id: 'listTransactions',
    summary: 'ListTransactions (kafka-transactions.sh list).',
    ok: { 200: 'TransactionListing' },
    errors: [],
    handler:
      ({ transactions }) =>
      async () =>
        json(200, { transactions: (await transactions.list()).map(describe) }),
  }),
  defineRoute<TransactionRoutesOptions>({
    method: 'GET',
    path: '/v1/transactions/{transactionalId}',
    job: 'admin',
    acl: { operation: 'DESCRIBE', resourceType: 'TRANSACTIONAL_ID', param: 'transactionalId' },
    id: 'describeTransactions',
    summary: 'DescribeTransactions (kafka-transactions.sh describe).',
    ok: { 200: 'TransactionDescription' },
    errors: ['NOT_FOUND'],
    handler:
      ({ transactions }) =>
      async (request) =>
        json(200, describe(await transactions.describe(request.params['transactionalId']!))),
  }),
];
