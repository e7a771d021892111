/**
 * Produce: validate, pick partitions, build RecordBatches, write one data object per replica set to
 * every in-sync store, then commit each partition (lib/core/log/commit.ts). Offsets exist only after
 * the commit, so a crash before it leaves an orphan object (collected by maintenance), never a hole.
 */
import { SluiceError, isSluiceError } from '../../../protocol/errors.js';
import { dataObjectKey, keys } from '../keys.js';
import { partitionForKey } from '../../../protocol/partitioner.js';
import type { RecordHeader, RecordInput } from '../../../protocol/record-batch/index.js';
import { BATCH_SIZE_OVERHEAD, estimateRecordSize } from '../../../protocol/record-batch/index.js';
import {
  encodeRecordBatch,
  splitBatches,
  stampPartitionLeaderEpoch,
  validateProducerBatch,
  withLogAppendTime,
} from '../../../protocol/record-batch/index.js';
import type { Acks } from '../replication/commit-clauses.js';
import { electLeader } from '../replication/election.js';
import { removeFromIsr } from '../replication/isr.js';
import { replicatePartition } from '../replication/replicator.js';
import { withinLag } from '../replication/replication-context.js';
import type { TopicConfig } from '../topics/configs.js';
import { effectiveConfig } from '../topics/configs.js';
import type { Topic } from '../topics/model.js';
import type { CommitOutcome, ProducerBatchInfo } from './commit.js';
import { commitBatch } from './commit.js';
import type { LogContext } from './context.js';
import type { Leadership } from './context.js';
import {
  checkSameRequest,
  decodeMark,
  encodeMark,
  idempotencyHash,
  markHash,
  requestFingerprint,
} from './idempotency.js';
import { checkPartition, readPartitionState, withCurrentTopic } from './context.js';
import { materializeTail } from './materialize.js';
import type { PartitionState, TailEntry } from './partition-state.js';
import { commitInSequence } from './sequence-wait.js';

export type { Acks } from '../replication/commit-clauses.js';

export interface ProduceRecord {
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: RecordHeader[];
  partition?: number;
  timestamp?: number;
}

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

/** Per-record overhead of a RecordBatch v2 record beyond key, value and headers (varints, attributes). */
const MAX_COMMIT_ATTEMPTS = 6;

interface PartitionWrite {
  partition: number;
  /** Indexes into the request's records, in order. */
  indexes: number[];
  batches: Uint8Array[];
  timestamps: number[];
  entry?: TailEntry;
  /**
   * The original commit of this request (Idempotency-Key): its base offset, request time and largest
   * timestamp (its tail entry's `t`, kept in the K# item too).
   */
  duplicate?: { baseOffset: number; requestTime: number | undefined; maxTimestamp: number | undefined };
  /** With an Idempotency-Key: this request's fingerprint. */
  fingerprint?: string;
  ikGeneration?: number;
  /** Where the data object went, under which leadership, and when its write started. */
  written?: ReplicaWrites;
  writtenAt?: number;
}

interface ReplicaWrites {
  acks: Acks;
  leader: string;
  leaderEpoch: number;
  isr: string[];
  /** Stores that hold the object. */
  stores: string[];
  /** Stores whose write failed or timed out. */
  failed: string[];
  /** Why the leader's write failed, if it did. */
  leaderError?: unknown;
}

export class Producer {
  private stickyCounter = Math.floor(Math.random() * 1_000_000);
  /** Producer ids below this are known to be issued (the counter only grows, so it may lag). */
  private issuedBelow = 0;

  constructor(private readonly ctx: LogContext) {}

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
    const writes = this.assignPartitions(topic, request, ikHash);
    const fingerprint = ikHash === undefined ? undefined : requestFingerprint(request.records);
    for (const write of writes.values()) {
      this.buildBatches(write, request.records, config, now);
      if (fingerprint !== undefined) write.fingerprint = fingerprint;
    }

    if (ikHash !== undefined) await this.findDuplicates(topic, [...writes.values()], ikHash);
    const fresh = [...writes.values()].filter((w) => !w.duplicate);
    await this.checkReplicas(topic, fresh, config, request.acks);
    const mark =
      ikHash === undefined
        ? undefined
        : encodeMark({ hash: ikHash, fingerprint: fingerprint!, requestTime: now });
    await this.writeObjects(topic, fresh, mark, request.acks);

    const outcomes = await Promise.all(
      fresh.map((w) =>
        this.commit(topic, w, config, undefined, ikHash).then(
          (outcome) => ({ w, outcome }),
          (error: unknown) => ({ w, error: toSluiceError(error) }),
        ),
      ),
    );
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
          ? duplicateTimestamp(w.duplicate, logAppend, request.records[i]!.timestamp, w.timestamps[k]!)
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
    if (body.length === 0) throw new SluiceError('CORRUPT_MESSAGE', 'the body holds no RecordBatch');
    const parts = splitBatches(body);
    const now = ctx.clock.now();
    const logAppend = config['message.timestamp.type'] === 'LogAppendTime';
    let producer: ProducerBatchInfo | undefined;
    let span = 0;
    let records = 0;
    let maxTs = -1;
    let firstTs = Number.MAX_SAFE_INTEGER;
    const limits = { maxMessageBytes: config['max.message.bytes'] };
    const batches = parts.map(({ start, end, header }, i) => {
      // Every batch is decoded and checked in full before anything is written (Kafka's LogValidator).
      const decoded = validateProducerBatch(body.subarray(start, end), header, limits, i);
      if (config['cleanup.policy'] !== 'delete' && decoded.some((r) => r.key === null))
        throw keyRequired(topic, `batch ${i}`);
      producer = chainProducer(producer, header, i);
      span += header.lastOffsetDelta + 1;
      records += header.recordCount;
      maxTs = Math.max(maxTs, logAppend ? now : header.maxTimestamp);
      firstTs = Math.min(firstTs, logAppend ? now : header.baseTimestamp);
      const bytes = body.subarray(start, end);
      return logAppend ? withLogAppendTime(bytes, now) : bytes;
    });
    if (producer) await this.checkIssued(producer.producerId);
    const write: PartitionWrite = { partition, indexes: [], batches, timestamps: [] };
    await this.checkReplicas(topic, [write], config, acks);
    await this.writeObjects(topic, [write], undefined, acks, {
      n: span,
      c: records,
      t: maxTs,
      f: firstTs,
    });
    const outcome = await this.commit(topic, write, config, producer, undefined);
    const baseOffset = outcome.baseOffset;
    // A duplicate is the batch with the same first and last sequence, so its span is this one's. Kafka
    // answers it with the original's offsets and append time (the timestamp its producer state keeps for
    // the batch), found here in the tail or in the producer history. A history item written before the
    // history kept times has none: it answers the retry's clock, the time a fresh append would get, late
    // by the retry's delay only (a Kafka producer stops retrying after delivery.timeout.ms). Not -1: that
    // says the topic keeps CreateTime, and a client would report its own record timestamp instead. Such
    // items are gone once producer.id.expiration.ms has passed since the upgrade (their TTL).
    const appendTime = outcome.kind === 'duplicate' ? (outcome.maxTimestamp ?? now) : now;
    return {
      baseOffset,
      lastOffset: baseOffset + span - 1,
      logAppendTime: logAppend ? appendTime : -1,
      logStartOffset: outcome.logStartOffset,
    };
  }

  /** InitProducerId: a new producer id with epoch 0. */
  async initProducerId(): Promise<{ producerId: number; producerEpoch: number }> {
    const item = await this.ctx.store.update(keys.producerIds, [{ set: 'next', add: 1, initial: 0 }], {
      returnValues: 'allNew',
    });
    return { producerId: (item!['next'] as number) - 1, producerEpoch: 0 };
  }

  /**
   * Idempotent batches must carry an id from InitProducerId: an invented id would add state to the
   * partition item that no producer owns. One consistent read when this instance meets a newer id.
   */
  private async checkIssued(producerId: number): Promise<void> {
    if (producerId < this.issuedBelow) return;
    const item = await this.ctx.store.get(keys.producerIds, { consistent: true });
    this.issuedBelow = Math.max(this.issuedBelow, (item?.['next'] as number | undefined) ?? 0);
    if (producerId >= this.issuedBelow) {
      throw new SluiceError(
        'UNKNOWN_PRODUCER_ID',
        `producer id ${producerId} was never issued; get one from POST /v1/producers`,
      );
    }
  }

  private assignPartitions(
    topic: Topic,
    request: ProduceRequest,
    ikHash: string | undefined,
  ): Map<number, PartitionWrite> {
    // Keyless records of one request stick to one partition (Kafka's sticky partitioner); with an
    // Idempotency-Key the choice derives from the key so a retry lands where the original did.
    const sticky =
      ikHash === undefined
        ? this.stickyCounter++ % topic.partitions
        : Buffer.from(ikHash, 'base64url').readUInt32BE(0) % topic.partitions;
    const writes = new Map<number, PartitionWrite>();
    request.records.forEach((record, i) => {
      let partition: number;
      if (record.partition !== undefined) {
        checkPartition(topic, record.partition);
        partition = record.partition;
      } else if (record.key !== null) partition = partitionForKey(record.key, topic.partitions);
      else partition = sticky;
      let write = writes.get(partition);
      if (!write) writes.set(partition, (write = { partition, indexes: [], batches: [], timestamps: [] }));
      write.indexes.push(i);
    });
    return writes;
  }

  private buildBatches(
    write: PartitionWrite,
    records: readonly ProduceRecord[],
    config: TopicConfig,
    now: number,
  ): void {
    const logAppend = config['message.timestamp.type'] === 'LogAppendTime';
    const limit = config['max.message.bytes'];
    let chunk: RecordInput[] = [];
    let chunkBytes = BATCH_SIZE_OVERHEAD;
    // Never called with an empty chunk: a write has at least one record, and a record that does not
    // fit an empty batch is refused before it is added.
    const flush = () => {
      write.batches.push(
        encodeRecordBatch(chunk, logAppend ? { timestampType: 'LogAppendTime', logAppendTime: now } : {}),
      );
      chunk = [];
      chunkBytes = BATCH_SIZE_OVERHEAD;
    };
    for (const i of write.indexes) {
      const r = records[i]!;
      const timestamp = logAppend ? now : (r.timestamp ?? now);
      write.timestamps.push(timestamp);
      const size = estimateRecordSize(r.key, r.value, r.headers);
      if (BATCH_SIZE_OVERHEAD + size > limit) {
        throw new SluiceError(
          'MESSAGE_TOO_LARGE',
          `record ${i} is about ${size} bytes; topic allows max.message.bytes=${limit} per batch`,
        );
      }
      if (chunkBytes + size > limit) flush();
      chunk.push({ key: r.key, value: r.value, headers: r.headers, timestamp });
      chunkBytes += size;
    }
    flush();
  }

  /** With an Idempotency-Key: partitions that already hold this request answer from the original commit. */
  private async findDuplicates(topic: Topic, writes: PartitionWrite[], ikHash: string): Promise<void> {
    await Promise.all(
      writes.map(async (w) => {
        const state = await readPartitionState(this.ctx.store, topic, w.partition);
        this.ctx.leadership.remember(topic, w.partition, state);
        w.ikGeneration = state.ikGen;
        const inTail = state.tail.findIndex((e) => e.k !== undefined && markHash(e.k) === ikHash);
        if (inTail >= 0) {
          let base = state.tailBase;
          for (let i = 0; i < inTail; i++) base += state.tail[i]!.n;
          const original = state.tail[inTail]!;
          this.answerFromOriginal(topic, w, base, { k: original.k!, t: original.t });
          return;
        }
        const old = await this.ctx.store.get(keys.idempotencyKey(topic.topicId, w.partition, ikHash), {
          consistent: true,
        });
        if (old) {
          this.answerFromOriginal(topic, w, old['o'] as number, {
            k: (old['m'] as string | undefined) ?? ikHash,
            t: old['t'] as number | undefined,
          });
        }
      }),
    );
  }

  /**
   * Marks `w` as answered by its original commit, unless that commit was of a different request. Only
   * called with an Idempotency-Key, so `w` carries the request's fingerprint. `original`: its tail
   * entry's mark and largest timestamp, or the K# item's.
   */
  private answerFromOriginal(
    topic: Topic,
    w: PartitionWrite,
    baseOffset: number,
    original: { k: string; t: number | undefined },
  ): void {
    const mark = decodeMark(original.k);
    checkSameRequest(mark, w.fingerprint!, `${topic.name}-${w.partition}`);
    w.duplicate = { baseOffset, requestTime: mark.requestTime, maxTimestamp: original.t };
  }

  private async checkReplicas(
    topic: Topic,
    writes: PartitionWrite[],
    config: TopicConfig,
    acks: Acks,
  ): Promise<void> {
    for (const w of writes) {
      const { isr } = await this.ctx.leadership.get(topic, w.partition);
      if (acks === 'all' && isr.length < config['min.insync.replicas']) {
        throw new SluiceError(
          'NOT_ENOUGH_REPLICAS',
          `partition ${topic.name}-${w.partition} has ${isr.length} in-sync store(s); min.insync.replicas=${config['min.insync.replicas']}`,
        );
      }
    }
  }

  /**
   * One object per leadership (epoch and target stores: the ISR for acks=all, the leader for acks=1)
   * holding all of the request's batches for those partitions (one PUT per store per request), written
   * before any commit. Each batch carries the epoch in its PartitionLeaderEpoch field. A failed or
   * timed-out store write is recorded, not thrown: the commit step shrinks the ISR or elects.
   */
  private async writeObjects(
    topic: Topic,
    writes: PartitionWrite[],
    mark: string | undefined,
    acks: Acks,
    override?: Pick<TailEntry, 'n' | 'c' | 't' | 'f'>,
  ): Promise<void> {
    const groups = new Map<
      string,
      { target: Omit<ReplicaWrites, 'stores' | 'failed'>; stores: string[]; writes: PartitionWrite[] }
    >();
    for (const w of writes) {
      const { leader, leaderEpoch, isr } = await this.ctx.leadership.get(topic, w.partition);
      const stores = acks === 'all' ? isr : [leader];
      const id = `${leaderEpoch}|${leader}|${isr.join(',')}`;
      const group = groups.get(id) ?? { target: { acks, leader, leaderEpoch, isr }, stores, writes: [] };
      group.writes.push(w);
      groups.set(id, group);
      for (const b of w.batches) stampPartitionLeaderEpoch(b, leaderEpoch);
    }
    await Promise.all(
      [...groups.values()].map(async (group) => {
        const key = dataObjectKey(topic.topicId, this.ctx.newId());
        let offset = 0;
        const chunks: Uint8Array[] = [];
        for (const w of group.writes) {
          const start = offset;
          for (const b of w.batches) {
            chunks.push(b);
            offset += b.length;
          }
          w.entry = {
            o: key,
            b: start,
            l: offset - start,
            n: override?.n ?? w.indexes.length,
            c: override?.c ?? w.indexes.length,
            // A JSON request's timestamps: on a LogAppendTime topic, buildBatches made them all `now`.
            t: override?.t ?? Math.max(...w.timestamps),
            f: override?.f ?? Math.min(...w.timestamps),
            ...(mark === undefined ? {} : { k: mark }),
          };
        }
        // One batch (a binary produce's usual body) is stored as is, without a copy.
        const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
        const writtenAt = this.ctx.clock.now();
        const settled = await Promise.allSettled(
          group.stores.map((id) => this.putWithin(id, key, body, group.target.isr)),
        );
        const failed = group.stores.filter((_, i) => settled[i]!.status === 'rejected');
        const written: ReplicaWrites = {
          ...group.target,
          stores: group.stores.filter((id) => !failed.includes(id)),
          failed,
          ...leaderErrorOf(group.stores, settled, group.target.leader),
        };
        for (const w of group.writes) Object.assign(w, { written, writtenAt });
      }),
    );
  }

  /** One partition's batches as a new object for the current leadership (after an election or ISR change). */
  private async rewrite(topic: Topic, w: PartitionWrite, leadership: Leadership, acks: Acks): Promise<void> {
    // Copies: the first object may still be in flight to a slow store, and it keeps its own epoch.
    w.batches = w.batches.map((b) => {
      const copy = new Uint8Array(b);
      stampPartitionLeaderEpoch(copy, leadership.leaderEpoch);
      return copy;
    });
    const key = dataObjectKey(topic.topicId, this.ctx.newId());
    const body = w.batches.length === 1 ? w.batches[0]! : Buffer.concat(w.batches);
    const stores = acks === 'all' ? leadership.isr : [leadership.leader];
    const writtenAt = this.ctx.clock.now();
    const settled = await Promise.allSettled(
      stores.map((id) => this.putWithin(id, key, body, leadership.isr)),
    );
    const failed = stores.filter((_, i) => settled[i]!.status === 'rejected');
    w.entry = { ...w.entry!, o: key, b: 0, l: body.length };
    w.written = {
      acks,
      ...leadership,
      stores: stores.filter((id) => !failed.includes(id)),
      failed,
      ...leaderErrorOf(stores, settled, leadership.leader),
    };
    w.writtenAt = writtenAt;
    await this.settleReplicas(topic, w);
  }

  /**
   * A store write. With other in-sync stores to fall back on, one slower than replica.lag.time.max.ms
   * counts as failed; a lone store is left to the client's own timeouts.
   */
  private putWithin(id: string, key: string, body: Uint8Array, isr: readonly string[]): Promise<void> {
    const put = this.ctx.objectStore(id).put(key, body);
    return isr.length > 1 ? withinLag(this.ctx, id, put) : put;
  }

  /**
   * Before the commit: a leader store that failed the write is replaced (the client retries under the
   * new leader); failed followers leave the ISR, and the commit then counts only the stores that hold
   * the data.
   */
  private async settleReplicas(topic: Topic, w: PartitionWrite): Promise<void> {
    const written = w.written!;
    if (written.failed.length === 0) return;
    const where = `${topic.name}-${w.partition}`;
    if (written.failed.includes(written.leader)) {
      const election = await electLeader(this.ctx, topic, w.partition, {
        type: 'FAILOVER',
        exclude: written.failed,
        seenEpoch: written.leaderEpoch,
      }).catch((error: unknown) => error);
      // Nobody can take over (a single store, say): the store's own error says what happened.
      if (
        isSluiceError(election) &&
        election.code === 'ELIGIBLE_LEADERS_NOT_AVAILABLE' &&
        written.leaderError
      )
        throw written.leaderError;
      throw new SluiceError(
        'NOT_LEADER_OR_FOLLOWER',
        `the leader store ${written.leader} of ${where} failed the write; ${
          election instanceof Error ? election.message : 'a new leader was elected'
        }; retry`,
      );
    }
    await removeFromIsr(this.ctx, topic, w.partition, written.failed, {
      reason: 'failed',
      seenEpoch: written.leaderEpoch,
    });
  }

  private async commit(
    topic: Topic,
    w: PartitionWrite,
    config: TopicConfig,
    producer: ProducerBatchInfo | undefined,
    ikHash: string | undefined,
  ): Promise<CommitOutcome & { kind: 'committed' | 'duplicate' }> {
    const { ctx } = this;
    await this.settleReplicas(topic, w);
    const where = `${topic.name}-${w.partition}`;
    let fenced: SluiceError | undefined;
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
        await this.rewrite(topic, w, leadership, written.acks);
        written = w.written!;
        if (written.failed.length > 0) continue;
      }
      const entry = {
        ...w.entry!,
        ...(producer
          ? {
              p: producer.producerId,
              e: producer.producerEpoch,
              q: producer.firstSequence,
              z: producer.lastSequence,
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
            ...(ikHash !== undefined
              ? { idempotency: { hash: ikHash, generation: w.ikGeneration ?? 0 } }
              : {}),
            now: ctx.clock.now(),
          }),
        );
        if (outcome.kind === 'committed') {
          await this.maybeMaterialize(topic, w.partition, outcome.state);
          return outcome;
        }
        if (outcome.kind === 'duplicate') {
          // Another attempt of this request committed first: answer as it was, if it was this request.
          if (ikHash !== undefined && outcome.entry?.k !== undefined) {
            this.answerFromOriginal(topic, w, outcome.baseOffset, { k: outcome.entry.k, t: outcome.entry.t });
          }
          return outcome;
        }
        if (outcome.kind === 'lagging') {
          // acks=all needs every ISR store at the leader's LEO: copy what acks=1 writes left behind.
          await replicatePartition(ctx, topic, w.partition);
        } else {
          // The key list was trimmed since we looked: look again (the original may have moved to K#).
          await this.findDuplicates(topic, [w], ikHash!);
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
        throw new SluiceError(
          'REQUEST_TIMED_OUT',
          `commit on ${topic.name}-${w.partition} kept racing; retry`,
        );
      }
    }
  }

  /** `state`: the partition item as this commit left it. */
  private async maybeMaterialize(topic: Topic, partition: number, state: PartitionState): Promise<void> {
    const every = this.ctx.tailFlushEntries;
    const tailLength = state.tail.length;
    // Every commit appends one entry, so each sees its own tail length (at least 1: below `every` the
    // remainder is never 0) and exactly one committer per `every` commits materializes, however many
    // commit at once. (Triggering on every commit once the tail passed 4 * every made all concurrent
    // committers re-read the item and rewrite the same index items: 17 DynamoDB writes per produce with
    // 32 producers on one partition, and throughput fell.)
    if (tailLength % every !== 0) return;
    try {
      await materializeTail(this.ctx.store, topic.topicId, partition, {
        now: this.ctx.clock.now(),
        producerExpirationMs: this.ctx.producerExpirationMs,
        maxProducers: this.ctx.maxProducersPerPartition,
        // The commit's own image is the item as it stood right after it: no read needed.
        state,
      });
    } catch {
      // The commit stands; the next committer or the maintenance run moves the tail.
    }
  }
}

/**
 * A JSON record's timestamp in the answer to a retry of its request: the original's. On a LogAppendTime
 * topic its append time, which was its request time; else the record's own, or the request time for a
 * record that carried none. A mark from before request times were kept has none: on a LogAppendTime
 * topic the original's largest timestamp is its append time (every record got the same), and without
 * either the retry's own timestamp is all there is.
 */
const duplicateTimestamp = (
  original: { requestTime: number | undefined; maxTimestamp: number | undefined },
  logAppend: boolean,
  recordTimestamp: number | undefined,
  retryTimestamp: number,
): number => {
  if (logAppend) return original.requestTime ?? original.maxTimestamp ?? retryTimestamp;
  if (original.requestTime === undefined) return retryTimestamp;
  return recordTimestamp ?? original.requestTime;
};

/** Batches of one request must come from one producer with contiguous sequences, as Kafka sends them. */
const chainProducer = (
  previous: ProducerBatchInfo | undefined,
  header: { producerId: number; producerEpoch: number; baseSequence: number; lastOffsetDelta: number },
  index: number,
): ProducerBatchInfo | undefined => {
  const idempotent = header.producerId >= 0;
  if (index > 0 && idempotent !== (previous !== undefined)) {
    throw new SluiceError('INVALID_RECORD', 'batches of one request must all be idempotent or all not');
  }
  if (!idempotent) return undefined;
  if (header.baseSequence < 0 || header.producerEpoch < 0) {
    throw new SluiceError(
      'INVALID_RECORD',
      `batch ${index} has producerId ${header.producerId} but no sequence or epoch`,
    );
  }
  const lastSequence = header.baseSequence + header.lastOffsetDelta;
  if (!previous) {
    return {
      producerId: header.producerId,
      producerEpoch: header.producerEpoch,
      firstSequence: header.baseSequence,
      lastSequence,
    };
  }
  if (header.producerId !== previous.producerId || header.producerEpoch !== previous.producerEpoch) {
    throw new SluiceError(
      'INVALID_RECORD',
      'batches of one request must come from one producer id and epoch',
    );
  }
  if (header.baseSequence !== previous.lastSequence + 1) {
    throw new SluiceError(
      'OUT_OF_ORDER_SEQUENCE_NUMBER',
      `batch ${index} starts at sequence ${header.baseSequence}; expected ${previous.lastSequence + 1}`,
    );
  }
  return { ...previous, lastSequence };
};

/** Kafka's broker refuses these too: the log cleaner could only ever drop them. */
const keyRequired = (topic: Topic, what: string): SluiceError =>
  new SluiceError(
    'INVALID_RECORD',
    `compacted topic ${topic.name} cannot accept a record without a key (${what} has none)`,
  );

const leaderErrorOf = (
  stores: readonly string[],
  settled: readonly PromiseSettledResult<void>[],
  leader: string,
): { leaderError?: unknown } => {
  const result = settled[stores.indexOf(leader)];
  return result?.status === 'rejected' ? { leaderError: result.reason } : {};
};

const toSluiceError = (error: unknown): SluiceError =>
  error instanceof SluiceError
    ? error
    : new SluiceError('UNKNOWN_SERVER_ERROR', 'commit failed', { cause: error });
