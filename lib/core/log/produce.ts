/**
 * Produce (Kafka's ReplicaManager.appendRecords, for Sluice's log): validate, pick partitions, build
 * RecordBatches, write one data object per replica set to every in-sync store, then commit each
 * partition. Each step is its own module and returns its result: the partitioning and batching
 * (partition-writes.ts), LogValidator's checks of a binary body (log-validator.ts), producer ids and
 * sequences (producer-state.ts), Idempotency-Key retries (duplicates.ts), the replica writes
 * (lib/core/replication/replica-writes.ts) and the commit loop (append-commit.ts). Offsets exist only
 * after the commit, so a crash before it leaves an orphan object (collected by maintenance), never a hole.
 */
import { SluiceError } from '../../../protocol/errors.js';
import type { Acks } from '../replication/commit-clauses.js';
import { checkReplicas, writeObjects } from '../replication/replica-writes.js';
import { effectiveConfig } from '../topics/configs.js';
import type { Topic } from '../topics/model.js';
import type { TransactionVerifier } from './append-commit.js';
import { commitWrite, toSluiceError } from './append-commit.js';
import type { LogContext } from './context.js';
import { checkPartition, withCurrentTopic } from './context.js';
import { duplicateTimestamp, findDuplicates } from './duplicates.js';
import { encodeMark, idempotencyHash, requestFingerprint } from './idempotency.js';
import { validateBatches } from './log-validator.js';
import type { ProduceRecord } from './partition-writes.js';
import { assignPartitions, buildBatches, keyRequired } from './partition-writes.js';
import { ProducerIds } from './producer-state.js';

export type { Acks } from '../replication/commit-clauses.js';
export type { ProduceRecord } from './partition-writes.js';

export interface ProduceRequest {
  records: readonly ProduceRecord[];
  acks: Acks;
  idempotencyKey?: string;
}

export type ProduceResult =
  | { partition: number; offset: number; timestamp: number }
  | { partition: number; error: { code: string; message: string; retriable: boolean } };

export interface BatchProduceResult {
  baseOffset: number;
  lastOffset: number;
  logAppendTime: number;
  logStartOffset: number;
}

export type { TransactionVerifier } from './append-commit.js';

const refuseTransactional: TransactionVerifier = () =>
  Promise.reject(new SluiceError('INVALID_TXN_STATE', 'this deployment has no transaction coordinator'));

/** The server side of produce: appends producers' records to partitions' logs. */
export class LogAppender {
  private stickyCounter = Math.floor(Math.random() * 1_000_000);
  private readonly producerIds: ProducerIds;

  constructor(
    private readonly ctx: LogContext,
    private readonly verifyTransaction: TransactionVerifier = refuseTransactional,
  ) {
    this.producerIds = new ProducerIds(ctx.store);
  }

  async produce(topicName: string, request: ProduceRequest): Promise<ProduceResult[]> {
    return withCurrentTopic(this.ctx, topicName, (topic) => this.produceTo(topic, request));
  }

  private async produceTo(topic: Topic, request: ProduceRequest): Promise<ProduceResult[]> {
    const { ctx } = this;
    const config = effectiveConfig(topic.configs);
    const keyless = request.records.findIndex((r) => r.key === null);
    if (keyless >= 0 && config['cleanup.policy'] !== 'delete') throw keyRequired(topic, `record ${keyless}`);
    const now = ctx.clock.now();
    const ikHash =
      request.idempotencyKey === undefined
        ? undefined
        : idempotencyHash(topic.topicId, request.idempotencyKey);
    // Keyless records of one request stick to one partition (Kafka's sticky partitioner); with an
    // Idempotency-Key the choice derives from the key so a retry lands where the original did.
    const sticky =
      ikHash === undefined
        ? this.stickyCounter++ % topic.partitions
        : Buffer.from(ikHash, 'base64url').readUInt32BE(0) % topic.partitions;
    const writes = assignPartitions(topic, request.records, sticky);
    const fingerprint = ikHash === undefined ? undefined : requestFingerprint(request.records);
    for (const write of writes.values()) {
      Object.assign(write, buildBatches(write.indexes, request.records, config, now));
      if (fingerprint !== undefined) write.fingerprint = fingerprint;
    }

    if (ikHash !== undefined) await findDuplicates(ctx, topic, [...writes.values()], ikHash);
    const fresh = [...writes.values()].filter((w) => !w.duplicate);
    await checkReplicas(ctx, topic, fresh, config, request.acks);
    const mark =
      ikHash === undefined
        ? undefined
        : encodeMark({ hash: ikHash, fingerprint: fingerprint!, requestTime: now });
    await writeObjects(ctx, topic, fresh, mark, request.acks);

    const outcomes = await Promise.all(
      fresh.map((w) =>
        commitWrite(ctx, topic, w, config, undefined, ikHash).then(
          (outcome) => ({ w, outcome }),
          (error: unknown) => ({ w, error: toSluiceError(error) }),
        ),
      ),
    );
    for (const o of outcomes) {
      if ('outcome' in o && o.outcome.kind === 'committed')
        this.countIn(
          topic,
          o.w.indexes.length,
          o.w.batches.reduce((n, b) => n + b.length, 0),
        );
    }
    const failures = outcomes.filter((o) => 'error' in o);
    if (failures.length === fresh.length && failures.length > 0 && fresh.length === writes.size)
      throw failures[0]!.error;

    const results: ProduceResult[] = new Array(request.records.length);
    for (const w of writes.values()) {
      const settled = outcomes.find((o) => o.w === w);
      if (settled && 'error' in settled) {
        const { code, message, retriable } = settled.error;
        for (const i of w.indexes)
          results[i] = { partition: w.partition, error: { code, message, retriable } };
        continue;
      }
      const base =
        w.duplicate?.baseOffset ?? (settled as { outcome: { baseOffset: number } }).outcome.baseOffset;
      const logAppend = config['message.timestamp.type'] === 'LogAppendTime';
      w.indexes.forEach((i, k) => {
        const timestamp = w.duplicate
          ? duplicateTimestamp(w.duplicate, logAppend, request.records[i]!.timestamp)
          : w.timestamps[k]!;
        results[i] = { partition: w.partition, offset: base + k, timestamp };
      });
    }
    return results;
  }

  /** Binary produce: RecordBatch v2 bytes as an idempotent (or plain) Kafka producer sends them. */
  async produceBatches(
    topicName: string,
    partition: number,
    body: Uint8Array,
    acks: Acks,
  ): Promise<BatchProduceResult> {
    return withCurrentTopic(this.ctx, topicName, (topic) =>
      this.produceBatchesTo(topic, partition, body, acks),
    );
  }

  private async produceBatchesTo(
    topic: Topic,
    partition: number,
    body: Uint8Array,
    acks: Acks,
  ): Promise<BatchProduceResult> {
    const { ctx } = this;
    checkPartition(topic, partition);
    const config = effectiveConfig(topic.configs);
    const now = ctx.clock.now();
    const append = validateBatches(topic, config, body, now);
    if (append.producer) await this.producerIds.checkIssued(append.producer.producerId);
    const write = { partition, indexes: [], batches: append.batches, timestamps: [] };
    await checkReplicas(ctx, topic, [write], config, acks);
    await writeObjects(ctx, topic, [write], undefined, acks, {
      offsetCount: append.span,
      recordCount: append.records,
      maxTimestamp: append.maxTimestamp,
      firstTimestamp: append.firstTimestamp,
    });
    const outcome = await commitWrite(
      ctx,
      topic,
      write,
      config,
      append.producer,
      undefined,
      append.transactional ? { verify: this.verifyTransaction } : undefined,
    );
    const baseOffset = outcome.baseOffset;
    if (outcome.kind === 'committed') this.countIn(topic, append.records, body.length);
    // A duplicate is the batch with the same first and last sequence, so its span is this one's. Kafka
    // answers it with the original's offsets and append time (the timestamp its producer state keeps for
    // the batch), found here in the tail or in the producer history.
    const appendTime = outcome.kind === 'duplicate' ? outcome.maxTimestamp : now;
    return {
      baseOffset,
      lastOffset: baseOffset + append.span - 1,
      logAppendTime: append.logAppend ? appendTime : -1,
      logStartOffset: outcome.logStartOffset,
    };
  }

  /** Kafka's BrokerTopicMetrics for an append that took effect (a duplicate appends nothing). */
  private countIn(topic: Topic, records: number, bytes: number): void {
    this.ctx.telemetry.metric('MessagesInPerSec', records, { topic: topic.name });
    this.ctx.telemetry.metric('BytesInPerSec', bytes, { topic: topic.name });
  }

  /** InitProducerId: a new producer id with epoch 0. */
  initProducerId(): Promise<{ producerId: number; producerEpoch: number }> {
    return this.producerIds.initProducerId();
  }
}
