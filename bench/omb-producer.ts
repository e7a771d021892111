/**
 * A benchmark producer after OMB's: messages are generated on a fixed schedule (or as fast as the
 * in-flight limit allows) and batched per partition like Kafka's record accumulator — a batch is sent
 * when it is full, or when it has lingered and its partition has nothing in flight; the partition is
 * sticky until then. Publish latency is per message, from the moment it was handed to the producer
 * to its acknowledgement; publish delay is how far generation fell behind the schedule (back-pressure).
 */
import { randomBytes } from 'node:crypto';
import type { Producer } from '../sdk/producer.js';
import type { Message } from '../sdk/types.js';
import { TimedSamples } from './stats.js';

export interface ProducerRecorder {
  /** Publish latency (ms) per acknowledged message, keyed by acknowledgement time (epoch ms). */
  publishLatency: TimedSamples;
  /** Publish delay (µs, OMB's unit) per generated message, keyed by generation time. */
  publishDelay: TimedSamples;
  /** Acknowledged messages and their bytes, keyed by acknowledgement time. */
  published: TimedSamples;
  errors: TimedSamples;
}

export const newProducerRecorder = (): ProducerRecorder => ({
  publishLatency: new TimedSamples(),
  publishDelay: new TimedSamples(),
  published: new TimedSamples(),
  errors: new TimedSamples(),
});

export interface BenchProducerOptions {
  topic: string;
  partitions: number;
  messageSize: number;
  /** Messages per second for this producer; 0 = unlimited. */
  rate: number;
  batchBytes: number;
  lingerMs: number;
  /**
   * Per-record framing counted against batchBytes (default 21, the SDK's upper bound for a RecordBatch
   * v2 record's varints), so a full batch is one RecordBatch the SDK does not split.
   */
  recordOverhead?: number;
  /**
   * Requests in flight per partition, Kafka's max.in.flight.requests.per.connection (default 1): a
   * lingered batch is sent while fewer are in flight, and one full batch more may wait beside them.
   */
  maxInFlight?: number;
  /** Wraps each batch's send (the latency benchmark's trace, bench/trace.ts). */
  wrapSend?: (handedAt: readonly number[], send: () => Promise<unknown>) => Promise<unknown>;
}

interface OpenBatch {
  partition: number;
  messages: Message[];
  /** performance.now() at which each message was handed over. */
  handedAt: number[];
  bytes: number;
  openedAt: number;
}

export class BenchProducer {
  private readonly payload: Uint8Array;
  private readonly pending: number[];
  private open: OpenBatch;
  private wake: (() => void) | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly producer: Producer,
    private readonly options: BenchProducerOptions,
    private readonly recorder: ProducerRecorder,
  ) {
    this.payload = randomBytes(options.messageSize);
    this.pending = new Array<number>(options.partitions).fill(0);
    this.open = this.openBatch(Math.floor(Math.random() * options.partitions));
  }

  /** Produces until `untilEpochMs`, then flushes and waits for every acknowledgement. */
  async run(untilEpochMs: number): Promise<void> {
    const { rate } = this.options;
    const interval = rate > 0 ? 1000 / rate : 0;
    let scheduled = performance.now();
    while (Date.now() < untilEpochMs) {
      const now = performance.now();
      if (rate > 0) {
        while (scheduled <= now && !this.blocked()) {
          this.add(scheduled, now);
          scheduled += interval;
        }
      } else {
        while (!this.blocked()) this.add(now, now);
      }
      this.maybeSealOnLinger(performance.now());
      const nextDue = rate > 0 ? scheduled - performance.now() : Number.POSITIVE_INFINITY;
      const lingerDue =
        this.open.messages.length > 0
          ? this.open.openedAt + this.options.lingerMs - performance.now()
          : Number.POSITIVE_INFINITY;
      const untilEnd = untilEpochMs - Date.now();
      await this.sleep(Math.max(1, Math.min(nextDue, lingerDue, untilEnd)));
    }
    if (this.open.messages.length > 0) this.seal();
    while (this.inFlight.size > 0) await Promise.race(this.inFlight);
  }

  /** Sealed batches can go nowhere: the open batch is full and every partition has its queue full. */
  private blocked(): boolean {
    return this.open.bytes + this.recordBytes() > this.capacity() && !this.trySealFull();
  }

  /** Room for records in a batch: batchBytes less the 61-byte RecordBatch header. */
  private capacity(): number {
    return this.options.batchBytes - 61;
  }

  private recordBytes(): number {
    return this.options.messageSize + (this.options.recordOverhead ?? 21);
  }

  private add(intendedAt: number, now: number): void {
    this.recorder.publishDelay.add(Date.now(), Math.round((now - intendedAt) * 1000));
    if (this.open.messages.length === 0) this.open.openedAt = now;
    this.open.messages.push({ value: this.payload, timestamp: Date.now() });
    this.open.handedAt.push(now);
    this.open.bytes += this.recordBytes();
    if (this.open.bytes + this.recordBytes() > this.capacity()) this.trySealFull();
  }

  private maxInFlight(): number {
    return this.options.maxInFlight ?? 1;
  }

  /** A full batch is sealed if its partition can queue it; then the producer moves to a free partition. */
  private trySealFull(): boolean {
    if (this.pending[this.open.partition]! > this.maxInFlight()) return false;
    this.seal();
    return true;
  }

  private maybeSealOnLinger(now: number): void {
    const batch = this.open;
    if (batch.messages.length === 0 || now - batch.openedAt < this.options.lingerMs) return;
    // Like Kafka, a lingered batch waits while its partition has max.in.flight requests out, and keeps filling.
    if (this.pending[batch.partition]! < this.maxInFlight()) this.seal();
  }

  private seal(): void {
    const batch = this.open;
    this.pending[batch.partition]!++;
    const send = () => this.producer.sendBatch(this.options.topic, batch.partition, batch.messages);
    const sent = (this.options.wrapSend ? this.options.wrapSend(batch.handedAt, send) : send()).then(
      () => {
        const acked = performance.now();
        const at = Date.now();
        for (const handed of batch.handedAt) this.recorder.publishLatency.add(at, acked - handed);
        this.recorder.published.add(at, batch.messages.length);
      },
      (error: unknown) => {
        this.recorder.errors.add(Date.now(), batch.messages.length);
        console.error(`publish failed on ${this.options.topic}-${batch.partition}: ${String(error)}`);
      },
    );
    const tracked: Promise<void> = sent.finally(() => {
      this.pending[batch.partition]!--;
      this.inFlight.delete(tracked);
      this.wake?.();
    });
    this.inFlight.add(tracked);
    this.open = this.openBatch(this.nextPartition(batch.partition));
  }

  private nextPartition(after: number): number {
    const n = this.options.partitions;
    for (let i = 1; i <= n; i++) {
      const p = (after + i) % n;
      if (this.pending[p]! <= this.maxInFlight()) return p;
    }
    return (after + 1) % n;
  }

  private openBatch(partition: number): OpenBatch {
    return { partition, messages: [], handedAt: [], bytes: 0, openedAt: performance.now() };
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        if (this.wake === done) this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}
