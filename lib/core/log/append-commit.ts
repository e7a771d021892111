/**
 * The commit of one partition's write (the append to the partition item, lib/core/log/commit.ts),
 * retried while leadership moves: the data goes again to the stores that lead now, a producer waits
 * for the batches before it in sequence, acks=all waits for the ISR to catch up, and every
 * tailFlushEntries commits one committer materializes the tail (after its answer, with
 * materializeAfterAck).
 */
import { SluiceError } from '../../../protocol/errors.js';
import { replicatePartition } from '../replication/replicator.js';
import { rewrite, settleReplicas } from '../replication/replica-writes.js';
import type { TopicConfig } from '../topics/configs.js';
import type { Topic } from '../topics/model.js';
import type { CommitOutcome, ProducerBatchInfo } from './commit.js';
import { commitBatch } from './commit.js';
import type { LogContext } from './context.js';
import { answerFromOriginal, findDuplicates } from './duplicates.js';
import { materializeTail } from './materialize.js';
import type { PartitionState } from './partition-state.js';
import type { PartitionWrite } from './partition-writes.js';
import { commitInSequence } from './sequence-wait.js';

const MAX_COMMIT_ATTEMPTS = 6;

/**
 * KIP-890's check, asked before a producer's first transactional batch in a partition: the
 * transaction coordinator confirms the partition is in the producer's open transaction at this epoch
 * (lib/core/transactions), or throws the error the producer gets (PRODUCER_FENCED, INVALID_TXN_STATE).
 * It answers the open transaction's number: the batch commits only while the partition holds no marker
 * of that transaction (a transaction ended without an epoch bump leaves the epoch no help).
 */
export type TransactionVerifier = (
  producerId: number,
  producerEpoch: number,
  topic: string,
  partition: number,
) => Promise<number>;

/** A transactional write's check with the transaction coordinator (KIP-890). */
export interface TransactionalCommit {
  verify: TransactionVerifier;
}

export const commitWrite = async (
  ctx: LogContext,
  topic: Topic,
  w: PartitionWrite,
  config: TopicConfig,
  producer: ProducerBatchInfo | undefined,
  ikHash: string | undefined,
  transactional?: TransactionalCommit,
): Promise<CommitOutcome & { kind: 'committed' | 'duplicate' }> => {
  await settleReplicas(ctx, topic, w);
  const where = `${topic.name}-${w.partition}`;
  let fenced: SluiceError | undefined;
  let verified: number | undefined;
  for (let attempt = 1; ; attempt++) {
    const leadership = await ctx.leadership.get(topic, w.partition, { fresh: attempt > 1 });
    // A new epoch, or an ISR with a store that never got this object: write the batches again, stamped
    // with the new epoch, to the stores that lead now (what the client's retry would do).
    let written = w.written!;
    const holders = written.acks === 'all' ? leadership.isr : [leadership.leader];
    if (
      leadership.leaderEpoch !== written.leaderEpoch ||
      !holders.every((id) => written.stores.includes(id))
    ) {
      if (attempt >= MAX_COMMIT_ATTEMPTS)
        throw (
          fenced ??
          new SluiceError(
            'FENCED_LEADER_EPOCH',
            `${where} moved to leader epoch ${leadership.leaderEpoch}, ISR [${leadership.isr.join(', ')}] while this write went to [${written.stores.join(', ')}] under epoch ${written.leaderEpoch}`,
          )
        );
      await rewrite(ctx, topic, w, leadership, written.acks);
      written = w.written!;
      if (written.failed.length > 0) continue;
    }
    const entry = {
      ...w.entry!,
      ...(producer
        ? {
            producerId: producer.producerId,
            producerEpoch: producer.producerEpoch,
            baseSequence: producer.firstSequence,
            lastSequence: producer.lastSequence,
          }
        : {}),
    };
    const minIsr = config['min.insync.replicas'];
    if (written.acks === 'all' && leadership.isr.length < minIsr) {
      throw new SluiceError(
        'NOT_ENOUGH_REPLICAS',
        `partition ${where} has ${leadership.isr.length} in-sync store(s) after a store failed; min.insync.replicas=${minIsr}`,
      );
    }
    // Past the deadline the collector may take the object for an orphan and delete it.
    if (ctx.clock.now() - (w.writtenAt ?? 0) > ctx.commitDeadlineMs) {
      throw new SluiceError(
        'REQUEST_TIMED_OUT',
        `the data of ${topic.name}-${w.partition} was written over ${ctx.commitDeadlineMs} ms ago and is not committed; retry`,
      );
    }
    try {
      const outcome = await commitInSequence(ctx.clock, ctx.sequenceGapWaitMs, () =>
        commitBatch(ctx.store, {
          topicId: topic.topicId,
          topic: topic.name,
          partition: w.partition,
          replica: {
            acks: written.acks,
            leader: leadership.leader,
            leaderEpoch: leadership.leaderEpoch,
            isr: leadership.isr,
          },
          entry,
          ...(producer ? { producer } : {}),
          ...(transactional
            ? {
                transactional:
                  verified === undefined
                    ? { verified: false }
                    : { verified: true, transactionNumber: verified },
              }
            : {}),
          ...(ikHash !== undefined ? { idempotency: { hash: ikHash, generation: w.ikGeneration ?? 0 } } : {}),
          now: ctx.clock.now(),
        }),
      );
      if (outcome.kind === 'committed') {
        if (ctx.materializeAfterAck) {
          const state = outcome.state;
          ctx.background.start(() => maybeMaterialize(ctx, topic, w.partition, state));
        } else {
          await maybeMaterialize(ctx, topic, w.partition, outcome.state);
        }
        return outcome;
      }
      if (outcome.kind === 'duplicate') {
        // Another attempt of this request committed first: answer as it was, if it was this request.
        if (ikHash !== undefined && outcome.entry?.idempotencyMark !== undefined) {
          answerFromOriginal(topic, w, outcome.baseOffset, {
            idempotencyMark: outcome.entry.idempotencyMark,
            maxTimestamp: outcome.entry.maxTimestamp,
          });
        }
        return outcome;
      }
      if (outcome.kind === 'unverified') {
        // The transaction's first batch here: the coordinator must know the partition (KIP-890).
        verified = await transactional!.verify(
          producer!.producerId,
          producer!.producerEpoch,
          topic.name,
          w.partition,
        );
        continue;
      }
      if (outcome.kind === 'lagging') {
        // acks=all needs every ISR store at the leader's LEO: copy what acks=1 writes left behind.
        await replicatePartition(ctx, topic, w.partition);
      } else {
        // The key list was trimmed since we looked: look again (the original may have moved to K#).
        await findDuplicates(ctx, topic, [w], ikHash!);
        if (w.duplicate)
          return {
            kind: 'duplicate',
            baseOffset: w.duplicate.baseOffset,
            entry: undefined,
            maxTimestamp: w.duplicate.maxTimestamp,
            logStartOffset: 0,
          };
      }
    } catch (error) {
      if (
        !(error instanceof SluiceError && error.code === 'FENCED_LEADER_EPOCH') ||
        attempt >= MAX_COMMIT_ATTEMPTS
      )
        throw error;
      fenced = error;
    }
    if (attempt >= MAX_COMMIT_ATTEMPTS) {
      throw new SluiceError('REQUEST_TIMED_OUT', `commit on ${topic.name}-${w.partition} kept racing; retry`);
    }
  }
};

/** `state`: the partition item as this commit left it. */
const maybeMaterialize = async (
  ctx: LogContext,
  topic: Topic,
  partition: number,
  state: PartitionState,
): Promise<void> => {
  const every = ctx.tailFlushEntries;
  const tailLength = state.tail.length;
  // Every commit appends one entry, so each sees its own tail length (at least 1: below `every` the
  // remainder is never 0) and exactly one committer per `every` commits materializes, however many
  // commit at once. (Triggering on every commit once the tail passed 4 * every made all concurrent
  // committers re-read the item and rewrite the same index items: 17 DynamoDB writes per produce with
  // 32 producers on one partition, and throughput fell.)
  if (tailLength % every !== 0) return;
  try {
    await materializeTail(ctx.store, topic.topicId, partition, {
      now: ctx.clock.now(),
      producerExpirationMs: ctx.producerExpirationMs,
      maxProducers: ctx.maxProducersPerPartition,
      // The commit's own image is the item as it stood right after it: no read needed.
      state,
    });
  } catch {
    // The commit stands; the next committer or the maintenance run moves the tail.
  }
};

export const toSluiceError = (error: unknown): SluiceError =>
  error instanceof SluiceError
    ? error
    : new SluiceError('UNKNOWN_SERVER_ERROR', 'commit failed', { cause: error });
