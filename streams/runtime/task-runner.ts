/**
 * Runs one task against Sluice: fetches its input partitions, processes their records in timestamp
 * order (Kafka's choice among a task's partitions: the smallest head timestamp; a partition with
 * nothing buffered is waited for unless it is caught up), and commits at commit.interval.ms.
 * At-least-once commit order: outputs are acknowledged, then state is written, then input offsets
 * are committed, so a crash anywhere repeats work but never loses any.
 */
import type { ConsumedRecord, Consumer } from '../../sdk/index.js';
import { SluiceError as CoreError } from '../../protocol/errors.js';
import { SluiceError } from '../../sdk/index.js';
import { TaskFencedError } from './eos.js';
import type { RecordCollector } from '../processor.js';
import type { Committer, TaskOutput } from './committer.js';
import type { StreamTask } from '../task.js';

export interface TaskRunnerDeps {
  consumer: Consumer;
  committer: Committer;
  commitIntervalMs: number;
  /** Longest long-poll of an idle task, ms. */
  maxWaitMs?: number;
  log?: (line: string) => void;
}

interface InputPartition {
  topic: string;
  /** Next offset to fetch. */
  fetchPosition: number;
  /** Offset after the last processed record: what a commit stores. */
  processed: number;
  committed: number | undefined;
  buffer: ConsumedRecord[];
  caughtUp: boolean;
}

export class TaskRunner {
  private inputs: InputPartition[] = [];
  private outputs: TaskOutput[] = [];
  private outputBytes = 0;
  private abort = new AbortController();
  private loop: Promise<void> | undefined;
  private uncommitted = false;
  /** Set when a commit found the task taken over by another instance. */
  fenced = false;
  processedRecords = 0;

  readonly task: StreamTask;

  /** `createTask` gets the collector that keeps the task's outputs until commit. */
  constructor(
    createTask: (collector: RecordCollector) => StreamTask,
    private readonly deps: TaskRunnerDeps,
  ) {
    this.task = createTask({
      send: (topic, record) => {
        this.outputs.push({ topic, record });
        this.outputBytes += (record.key?.length ?? 0) + (record.value?.length ?? 0) + 64;
      },
    });
  }

  /** Per input topic, the offset after the last record processed (or skipped); empty until started. */
  positions(): { topic: string; offset: number }[] {
    return this.inputs.map((p) => ({ topic: p.topic, offset: p.processed }));
  }

  start(onError: (error: unknown) => void): void {
    this.loop = this.run().catch(onError);
  }

  /** Stops after the record in hand and commits (on revoke and close); `commit` false when fenced. */
  async stop(commit: boolean): Promise<void> {
    this.abort.abort();
    await this.loop;
    if (commit && !this.fenced) await this.commit();
  }

  private async run(): Promise<void> {
    await this.initPositions();
    let nextCommit = Date.now() + this.deps.commitIntervalMs;
    const signal = this.abort.signal;
    while (!signal.aborted) {
      await this.fill(signal, Math.max(0, Math.min(this.deps.maxWaitMs ?? 1_000, nextCommit - Date.now())));
      await this.processAvailable(signal);
      if (Date.now() >= nextCommit) {
        if (!signal.aborted) await this.commitOrRewind();
        nextCommit = Date.now() + this.deps.commitIntervalMs;
      }
    }
  }

  private async initPositions(): Promise<void> {
    const topics = this.task.inputTopics();
    const positions = await this.deps.committer.start(topics);
    // Kafka Streams' auto.offset.reset is earliest.
    this.inputs = topics.map((topic) => {
      const start = positions.get(topic);
      return {
        topic,
        fetchPosition: start ?? 0,
        processed: start ?? 0,
        committed: start,
        buffer: [],
        caughtUp: false,
      };
    });
  }

  private async fill(signal: AbortSignal, idleWaitMs: number): Promise<void> {
    const empty = this.inputs.filter((p) => p.buffer.length === 0);
    if (empty.length === 0) return;
    const idle = empty.length === this.inputs.length;
    await Promise.all(
      empty.map(async (p) => {
        try {
          const batch = await this.deps.consumer.fetch(p.topic, this.task.partition, p.fetchPosition, {
            maxWaitMs: idle ? idleWaitMs : 0,
            signal,
          });
          p.buffer.push(...batch.records);
          p.fetchPosition = batch.nextOffset;
          p.caughtUp = batch.nextOffset >= batch.highWatermark;
          // Offsets skipped by compaction still count as consumed.
          if (p.buffer.length === 0) p.processed = Math.max(p.processed, batch.nextOffset);
        } catch (error) {
          if (signal.aborted) return;
          if (error instanceof SluiceError && error.code === 'OFFSET_OUT_OF_RANGE') {
            const start = error.details['logStartOffset'];
            if (typeof start === 'number' && start > p.fetchPosition) {
              p.fetchPosition = p.processed = start;
              return;
            }
          }
          throw error;
        }
      }),
    );
  }

  private async processAvailable(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      if (this.inputs.some((p) => p.buffer.length === 0 && !p.caughtUp)) return;
      let next: InputPartition | undefined;
      for (const p of this.inputs) {
        const head = p.buffer[0];
        if (head && (!next || head.timestamp < (next.buffer[0]?.timestamp ?? Infinity))) next = p;
      }
      const record = next?.buffer.shift();
      if (!next || !record) return;
      await this.task.process({
        topic: next.topic,
        key: record.key,
        value: record.value,
        timestamp: record.timestamp,
        headers: record.headers,
      });
      next.processed = record.offset + 1;
      this.processedRecords += 1;
      this.uncommitted = true;
      if (
        this.deps.committer.full({
          stateWrites: this.task.stores.pending().length,
          outputBytes: this.outputBytes,
        })
      )
        await this.commitOrRewind();
    }
  }

  /**
   * A failed commit leaves the task where its last commit left it: state and positions are re-read.
   * A fenced task stops: another instance owns it now, and re-reading would take it back.
   */
  private async commitOrRewind(): Promise<void> {
    try {
      await this.commit();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (error instanceof TaskFencedError) {
        this.fenced = true;
        this.abort.abort();
        this.deps.log?.(`task ${this.task.id}: ${message}; stopping it`);
        return;
      }
      const retriable =
        error instanceof SluiceError
          ? error.retriable || isFencing(error)
          : error instanceof CoreError
            ? error.retriable
            : true;
      if (!retriable) throw error;
      this.deps.log?.(`task ${this.task.id}: commit failed (${message}); rewinding to the last commit`);
      this.outputs = [];
      this.outputBytes = 0;
      this.task.stores.reset();
      await this.initPositions();
    }
  }

  private async commit(): Promise<void> {
    if (!this.uncommitted && this.outputs.length === 0) return;
    const outputs = this.outputs;
    this.outputs = [];
    this.outputBytes = 0;
    const offsets = this.inputs
      .filter((p) => p.processed !== p.committed)
      .map((p) => ({ topic: p.topic, offset: p.processed }));
    await this.deps.committer.commit({ offsets, outputs, stores: this.task.stores });
    for (const p of this.inputs) p.committed = p.processed;
    this.uncommitted = false;
  }
}

const isFencing = (error: SluiceError): boolean =>
  ['STALE_MEMBER_EPOCH', 'FENCED_MEMBER_EPOCH', 'UNKNOWN_MEMBER_ID'].includes(error.code);
