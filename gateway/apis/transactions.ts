/**
 * The transactional producer's APIs: AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit and EndTxn,
 * each one call of Sluice's transaction routes (lib/http/routes/transactions.ts), where the coordinator
 * keeps every transactional.id's state; the gateway keeps none. A client whose EndTxn is v0-v4 (kafkajs,
 * librdkafka, Java before KIP-890) cannot learn a new epoch, so its transactions end under transaction
 * version 1 (the epoch and its sequences stay, as Kafka's coordinator keeps them); EndTxn v5 ends them
 * under version 2 and answers the bumped epoch. One connection's calls for one transactional.id apply in
 * the order they were sent, as a broker applies them.
 */
import {
  MAX_OFFSETS_PER_TRANSACTION,
  MAX_PARTITIONS_PER_TRANSACTION,
} from '../../protocol/transaction-limits.js';
import type { Message } from '../../protocol/kafka/codec.js';
import { ERROR } from '../../protocol/kafka/error-codes.js';
import {
  AddOffsetsToTxn,
  AddPartitionsToTxn,
  EndTxn,
  TxnOffsetCommit,
} from '../../protocol/kafka/messages/transactions.js';
import type { ApiHandler, RequestContext } from '../api.js';
import { errorCodeOf } from '../api.js';
import type { TransactionalProducer } from '../sluice.js';
import { classicErrorCode, isGroupId } from './groups-errors.js';
import type { CommittedTopics } from './groups-offsets.js';
import { commitAnswer } from './groups-offsets.js';

/** Kafka's offset.metadata.max.bytes default, as the core bounds it. */
const MAX_METADATA_CHARS = 4096;
const MAX_TRANSACTIONAL_ID_CHARS = 249;

/**
 * KIP-588: PRODUCER_FENCED is answered from these versions on; older clients know the fence as
 * INVALID_PRODUCER_EPOCH, which Kafka answers them instead.
 */
const FENCED_SINCE: Record<string, number> = {
  InitProducerId: 4,
  AddPartitionsToTxn: 2,
  AddOffsetsToTxn: 2,
  EndTxn: 2,
  TxnOffsetCommit: 3,
};

/** Kafka's code for an error of a transaction call, as this API version knows it. */
export function transactionErrorCode(error: unknown, api: string, version: number): number {
  const code = errorCodeOf(error);
  if (code === ERROR.PRODUCER_FENCED && version < (FENCED_SINCE[api] ?? 0))
    return ERROR.INVALID_PRODUCER_EPOCH;
  return code;
}

/** Whether a transactional.id is one the coordinator accepts (1-249 characters, no control characters). */
export const isTransactionalId = (id: string): boolean =>
  id.length > 0 && id.length <= MAX_TRANSACTIONAL_ID_CHARS && !/\p{Cc}/u.test(id);

/** Runs a transaction call after the connection's earlier calls for the same transactional.id. */
const inOrder = <T>(ctx: RequestContext, transactionalId: string, task: () => Promise<T>): Promise<T> =>
  ctx.connection.inOrder(`txn\u0000${transactionalId}`, task);

interface TopicPartitions {
  name: string;
  partitions: number[];
}

interface AddPartitionsRequest {
  v3AndBelowTransactionalId: string;
  v3AndBelowProducerId: number;
  v3AndBelowProducerEpoch: number;
  v3AndBelowTopics: TopicPartitions[];
  transactions: {
    transactionalId: string;
    producerId: number;
    producerEpoch: number;
    verifyOnly: boolean;
    topics: TopicPartitions[];
  }[];
}

const topicResults = (topics: TopicPartitions[], code: (topic: string, partition: number) => number) =>
  topics.map((t) => ({
    name: t.name,
    resultsByPartition: t.partitions.map((partitionIndex) => ({
      partitionIndex,
      partitionErrorCode: code(t.name, partitionIndex),
    })),
  }));

export const addPartitionsToTxn: ApiHandler = {
  schema: AddPartitionsToTxn,
  minVersion: 0,
  // v4+ batches transactions for brokers' verification (KIP-890), an inter-broker call.
  maxVersion: 3,
  errorResponse(request, errorCode, version) {
    const body = request as unknown as AddPartitionsRequest;
    if (version >= 4)
      return {
        throttleTimeMs: 0,
        errorCode,
        resultsByTransaction: body.transactions.map((t) => ({
          transactionalId: t.transactionalId,
          topicResults: topicResults(t.topics, () => errorCode),
        })),
      };
    return {
      throttleTimeMs: 0,
      resultsByTopicV3AndBelow: topicResults(body.v3AndBelowTopics, () => errorCode),
    };
  },
  async handle(request, ctx) {
    const body = request as unknown as AddPartitionsRequest;
    const topics = body.v3AndBelowTopics;
    const answer = (code: (topic: string, partition: number) => number): Message => ({
      throttleTimeMs: 0,
      resultsByTopicV3AndBelow: topicResults(topics, code),
    });
    const producer: TransactionalProducer = {
      transactionalId: body.v3AndBelowTransactionalId,
      producerId: body.v3AndBelowProducerId,
      producerEpoch: body.v3AndBelowProducerEpoch,
    };
    if (!isTransactionalId(producer.transactionalId)) return answer(() => ERROR.INVALID_REQUEST);
    // Kafka answers the partitions it refuses with their error and the rest OPERATION_NOT_ATTEMPTED.
    const bad = (topic: string, partition: number): boolean =>
      topic.length === 0 || topic.length > 249 || partition < 0;
    if (topics.some((t) => t.partitions.some((p) => bad(t.name, p))))
      return answer((t, p) => (bad(t, p) ? ERROR.UNKNOWN_TOPIC_OR_PARTITION : ERROR.OPERATION_NOT_ATTEMPTED));
    const merged = new Map<string, Set<number>>();
    for (const t of topics) {
      const set = merged.get(t.name) ?? new Set<number>();
      for (const p of t.partitions) set.add(p);
      merged.set(t.name, set);
    }
    const count = [...merged.values()].reduce((n, s) => n + s.size, 0);
    if (count > MAX_PARTITIONS_PER_TRANSACTION) return answer(() => ERROR.INVALID_REQUEST);
    try {
      await inOrder(ctx, producer.transactionalId, () =>
        ctx.gateway.sluice.addPartitionsToTxn(
          producer,
          [...merged].map(([topic, partitions]) => ({ topic, partitions: [...partitions] })),
        ),
      );
      return answer(() => ERROR.NONE);
    } catch (error) {
      const code = transactionErrorCode(error, 'AddPartitionsToTxn', ctx.version);
      return answer(() => code);
    }
  },
};

interface AddOffsetsRequest {
  transactionalId: string;
  producerId: number;
  producerEpoch: number;
  groupId: string;
}

export const addOffsetsToTxn: ApiHandler = {
  schema: AddOffsetsToTxn,
  minVersion: 0,
  maxVersion: 4,
  async handle(request, ctx) {
    const { transactionalId, producerId, producerEpoch, groupId } = request as unknown as AddOffsetsRequest;
    const answer = (errorCode: number): Message => ({ throttleTimeMs: 0, errorCode });
    if (!isTransactionalId(transactionalId)) return answer(ERROR.INVALID_REQUEST);
    if (!isGroupId(groupId)) return answer(ERROR.INVALID_GROUP_ID);
    try {
      await inOrder(ctx, transactionalId, () =>
        ctx.gateway.sluice.addOffsetsToTxn({ transactionalId, producerId, producerEpoch }, groupId),
      );
      return answer(ERROR.NONE);
    } catch (error) {
      return answer(transactionErrorCode(error, 'AddOffsetsToTxn', ctx.version));
    }
  },
};

interface TxnOffsetCommitRequest extends CommittedTopics {
  transactionalId: string;
  groupId: string;
  producerId: number;
  producerEpoch: number;
  generationId: number;
  memberId: string;
}

export const txnOffsetCommit: ApiHandler = {
  schema: TxnOffsetCommit,
  minVersion: 0,
  maxVersion: 5,
  errorResponse: (request, errorCode) =>
    commitAnswer(request as unknown as TxnOffsetCommitRequest, () => errorCode),
  async handle(request, ctx) {
    const commit = request as unknown as TxnOffsetCommitRequest;
    const all = (code: number) => commitAnswer(commit, () => code);
    if (!isTransactionalId(commit.transactionalId)) return all(ERROR.INVALID_REQUEST);
    if (!isGroupId(commit.groupId)) return all(ERROR.INVALID_GROUP_ID);
    // Refusals Kafka gives per partition without asking the coordinator.
    const local = new Map<string, number>();
    const offsets = new Map<string, { topic: string; partition: number; offset: number; metadata: string }>();
    for (const t of commit.topics) {
      for (const p of t.partitions) {
        const key = `${t.name}\u0000${p.partitionIndex}`;
        const offset = Number(p.committedOffset);
        const metadata = p.committedMetadata ?? '';
        if (metadata.length > MAX_METADATA_CHARS) local.set(key, ERROR.OFFSET_METADATA_TOO_LARGE);
        else if (offset < 0 || !Number.isSafeInteger(offset) || p.partitionIndex < 0 || t.name.length === 0)
          local.set(key, ERROR.INVALID_COMMIT_OFFSET_SIZE);
        else offsets.set(key, { topic: t.name, partition: p.partitionIndex, offset, metadata });
      }
    }
    if (offsets.size > MAX_OFFSETS_PER_TRANSACTION) return all(ERROR.INVALID_REQUEST);
    let code: number = ERROR.NONE;
    if (offsets.size > 0) {
      // v3+ carries the consumer's group metadata (KIP-447); before, the commit is outside the group protocol.
      const member = ctx.version >= 3 && commit.memberId !== '' ? commit.memberId : null;
      try {
        await inOrder(ctx, commit.transactionalId, () =>
          ctx.gateway.sluice.txnOffsetCommit(
            {
              transactionalId: commit.transactionalId,
              producerId: commit.producerId,
              producerEpoch: commit.producerEpoch,
            },
            {
              groupId: commit.groupId,
              memberId: member,
              generationId: member === null ? -1 : commit.generationId,
              offsets: [...offsets.values()],
            },
          ),
        );
      } catch (error) {
        const fenced = transactionErrorCode(error, 'TxnOffsetCommit', ctx.version);
        code = fenced === errorCodeOf(error) ? classicErrorCode(error) : fenced;
      }
    }
    return commitAnswer(commit, (t, p) => local.get(`${t}\u0000${p}`) ?? code);
  },
};

interface EndTxnRequest {
  transactionalId: string;
  producerId: number;
  producerEpoch: number;
  committed: boolean;
}

export const endTxn: ApiHandler = {
  schema: EndTxn,
  minVersion: 0,
  maxVersion: 5,
  async handle(request, ctx) {
    const { transactionalId, producerId, producerEpoch, committed } = request as unknown as EndTxnRequest;
    const answer = (errorCode: number, next = { producerId: -1, producerEpoch: -1 }): Message => ({
      throttleTimeMs: 0,
      errorCode,
      ...next,
    });
    if (!isTransactionalId(transactionalId)) return answer(ERROR.INVALID_REQUEST);
    try {
      const next = await inOrder(ctx, transactionalId, () =>
        ctx.gateway.sluice.endTxn(
          { transactionalId, producerId, producerEpoch },
          committed,
          ctx.version >= 5 ? 2 : 1,
        ),
      );
      return answer(ERROR.NONE, next);
    } catch (error) {
      return answer(transactionErrorCode(error, 'EndTxn', ctx.version));
    }
  },
};
