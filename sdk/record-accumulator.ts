/**
 * Kafka's RecordAccumulator for one topic: records are appended to an open batch per partition, and a
 * batch is sent once it holds `batchSize` bytes or `maxBatchRecords` records, or once its first record
 * has waited `lingerMs`. linger.ms is a maximum delay, as in Kafka's producer: a slow trickle of records
 * still goes out within it, not only when the input pauses.
 *
 * Partitions are chosen as Kafka's Java producer chooses them: an explicit partition, else murmur2 of
 * the key, else the sticky partition of KIP-480 (keyless records fill one partition's batch, and the
 * next batch goes to the next partition), so a key lands where it would in Apache Kafka.
 *
 * One batch per partition is in flight at a time, so a partition's records are written in append
 * order; once a batch fails, that partition's later batches fail with the same error without being
 * sent, so nothing is ever written after a record of the same partition that was not.
 */
import { partitionForKey } from '../protocol/partitioner.js';
import { BATCH_SIZE_OVERHEAD, estimateRecordSize } from '../protocol/record-batch/index.js';
import { SluiceError } from './errors.js';
import type { Bytes, Message } from './types.js';

/** What one sent batch became: its records' append indices and their offsets, or the error. */
export type BatchOutcome = {
  partition: number;
  /** Append indices (from 0) of the batch's records, in append order. */
  indices: number[];
} & ({ baseOffset: number; lastOffset: number } | { error: unknown });

/** Sends one partition's batch in one request (e.g. `Producer.sendBatch`); resolves its offsets. */
export type BatchSender = (
  partition: number,
  messages: Message[],
) => Promise<{ baseOffset: number; lastOffset: number }>;

export interface RecordAccumulatorOptions {
  /** The topic's partition count. */
  partitions: number;
  send: BatchSender;
  /** Kafka's batch.size: the bytes of one partition's batch (default 16384). */
  batchSize?: number;
  /** Records of one batch at most (default unbounded: batchSize alone decides). */
  maxBatchRecords?: number;
  /** Kafka's linger.ms: the longest a record waits for its batch to fill (default 5, Kafka 4's). */
  lingerMs?: number;
  /** Kafka's buffer.memory: `append` waits while this many bytes are unsent (default 32 MiB). */
  bufferMemory?: number;
  /** Called once per batch, when its request has an answer, in the order answers arrive. */
  onBatch?: (outcome: BatchOutcome) => void;
  /** The first sticky partition for keyless records (default random), for replayable tests. */
  stickyStart?: number;
}

interface Batch {
  partition: number;
  messages: Message[];
  indices: number[];
  bytes: number;
  timer: NodeJS.Timeout | undefined;
}

interface PartitionQueue {
  open: Batch | undefined;
  ready: Batch[];
  inFlight: Promise<void> | undefined;
  /** The error of this partition's first failed batch: its later batches fail with it, unsent. */
  failed: { error: unknown } | undefined;
}

export class RecordAccumulator {
  private readonly options: Required<Omit<RecordAccumulatorOptions, 'onBatch' | 'stickyStart'>> &
    Pick<RecordAccumulatorOptions, 'onBatch'>;
  private readonly queues: PartitionQueue[];
  private sticky: number;
  private appended = 0;
  private buffered = 0;
  private spaceFreed: (() => void)[] = [];

  constructor({
    partitions,
    send,
    batchSize = 16_384,
    maxBatchRecords = Number.POSITIVE_INFINITY,
    lingerMs = 5,
    bufferMemory = 32 * 1024 * 1024,
    onBatch,
    stickyStart,
  }: RecordAccumulatorOptions) {
    if (!Number.isInteger(partitions) || partitions < 1)
      throw new SluiceError('INVALID_REQUEST', `partitions must be a positive integer, got ${partitions}`, {
        retriable: false,
      });
    this.options = {
      partitions,
      send,
      batchSize,
      maxBatchRecords,
      lingerMs,
      bufferMemory,
      ...(onBatch ? { onBatch } : {}),
    };
    this.queues = Array.from({ length: partitions }, () => ({
      open: undefined,
      ready: [],
      inFlight: undefined,
      failed: undefined,
    }));
    this.sticky = (stickyStart ?? Math.floor(Math.random() * partitions)) % partitions;
  }

  /** Records appended so far; the next one gets this index. */
  get count(): number {
    return this.appended;
  }

  /** The partition `message` goes to (explicit, murmur2 of its key, or the sticky one). */
  partitionOf(message: Message): number {
    const { partitions } = this.options;
    if (message.partition !== undefined) {
      if (!Number.isInteger(message.partition) || message.partition < 0 || message.partition >= partitions)
        throw new SluiceError(
          'UNKNOWN_TOPIC_OR_PARTITION',
          `partition ${message.partition} is not one of the topic's ${partitions}`,
          { retriable: false },
        );
      return message.partition;
    }
    if (message.key !== undefined && message.key !== null)
      return partitionForKey(toBytes(message.key), partitions);
    return this.sticky;
  }

  /**
   * Adds a record to its partition's batch and returns its append index; waits (before adding) while
   * `bufferMemory` bytes are unsent. Throws only for a partition the topic does not have.
   */
  async append(message: Message): Promise<number> {
    while (this.buffered >= this.options.bufferMemory)
      await new Promise<void>((resolve) => this.spaceFreed.push(resolve));
    const sticky = message.partition === undefined && (message.key === undefined || message.key === null);
    let partition = this.partitionOf(message);
    const size = recordBytes(message);
    let queue = this.queues[partition]!;
    if (queue.open && queue.open.bytes + size > this.options.batchSize) {
      this.close(queue);
      // Closing the sticky partition's batch moved keyless records on: this one starts the next batch.
      if (sticky) {
        partition = this.sticky;
        queue = this.queues[partition]!;
        if (queue.open && queue.open.bytes + size > this.options.batchSize) this.close(queue);
      }
    }
    const batch = (queue.open ??= this.openBatch(partition, queue));
    const index = this.appended++;
    batch.messages.push(message);
    batch.indices.push(index);
    batch.bytes += size;
    this.buffered += size;
    if (batch.messages.length >= this.options.maxBatchRecords || batch.bytes >= this.options.batchSize)
      this.close(queue);
    return index;
  }

  /** Sends every open batch now and resolves once every batch appended so far has an answer. */
  async flush(): Promise<void> {
    for (const queue of this.queues) if (queue.open) this.close(queue);
    for (;;) {
      const pending = this.queues.flatMap((q) => (q.inFlight ? [q.inFlight] : []));
      if (pending.length === 0) return;
      await Promise.all(pending);
    }
  }

  private openBatch(partition: number, queue: PartitionQueue): Batch {
    const batch: Batch = {
      partition,
      messages: [],
      indices: [],
      bytes: BATCH_SIZE_OVERHEAD,
      timer: undefined,
    };
    batch.timer = setTimeout(() => {
      if (queue.open === batch) this.close(queue);
    }, this.options.lingerMs);
    return batch;
  }

  /** The open batch is complete: queue it for sending; keyless records move on to the next partition. */
  private close(queue: PartitionQueue): void {
    const batch = queue.open;
    if (!batch) return;
    clearTimeout(batch.timer);
    queue.open = undefined;
    queue.ready.push(batch);
    if (batch.partition === this.sticky) this.sticky = (this.sticky + 1) % this.options.partitions;
    this.pump(queue);
  }

  private pump(queue: PartitionQueue): void {
    if (queue.inFlight) return;
    const batch = queue.ready.shift();
    if (!batch) return;
    queue.inFlight = this.sendOne(queue, batch).finally(() => {
      queue.inFlight = undefined;
      this.buffered -= batch.bytes - BATCH_SIZE_OVERHEAD;
      for (const resolve of this.spaceFreed.splice(0)) resolve();
      this.pump(queue);
    });
  }

  private async sendOne(queue: PartitionQueue, batch: Batch): Promise<void> {
    const { partition, indices } = batch;
    let outcome: BatchOutcome;
    if (queue.failed) outcome = { partition, indices, error: queue.failed.error };
    else {
      try {
        const { baseOffset, lastOffset } = await this.options.send(partition, batch.messages);
        outcome = { partition, indices, baseOffset, lastOffset };
      } catch (error) {
        queue.failed = { error };
        outcome = { partition, indices, error };
      }
    }
    this.options.onBatch?.(outcome);
  }
}

const UTF8 = new TextEncoder();

const toBytes = (b: Bytes): Uint8Array => (typeof b === 'string' ? UTF8.encode(b) : b);

/** An upper bound of the bytes a record adds to its batch (protocol/'s estimate, as the server's). */
const recordBytes = (m: Message): number =>
  estimateRecordSize(
    m.key,
    m.value,
    m.headers === undefined
      ? []
      : Array.isArray(m.headers)
        ? m.headers
        : Object.entries(m.headers).map(([key, value]) => ({ key, value })),
  );
