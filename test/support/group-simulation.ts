/**
 * What it takes to run the group coordinator without AWS or a log: a topic catalog and log offsets held
 * in memory, a clock that moves only when told, a seeded random source, and a store wrapper whose calls
 * interleave like network calls. Used by the simulation tests and the benchmark.
 */
import type { Clock } from '../../lib/ports/clock.js';
import type { MetadataCall } from '../../lib/adapters/forwarding.js';
import { ForwardingMetadataStore } from '../../lib/adapters/forwarding.js';
import type { MetadataStore } from '../../lib/ports/metadata-store.js';
import type { GroupTopics, PartitionOffsets } from '../../lib/core/groups/types.js';

interface PartitionLog {
  logStartOffset: number;
  highWatermark: number;
  /** Record timestamps by offset, for forTimestamp. */
  timestamps: number[];
}

export class InMemoryTopics implements GroupTopics, PartitionOffsets {
  private readonly topics = new Map<string, { topicId: string; logs: PartitionLog[] }>();
  private nextId = 1;

  constructor(partitionsByTopic: Record<string, number> = {}) {
    for (const [name, partitions] of Object.entries(partitionsByTopic)) this.create(name, partitions);
  }

  create(name: string, partitions: number): void {
    const topicId = `topic-${this.nextId++}`;
    this.topics.set(name, { topicId, logs: Array.from({ length: partitions }, () => emptyLog()) });
  }

  /** Partitions only grow, as in Kafka. */
  grow(name: string, partitions: number): void {
    const topic = this.topics.get(name);
    if (!topic) throw new Error(`no topic ${name}`);
    while (topic.logs.length < partitions) topic.logs.push(emptyLog());
  }

  remove(name: string): void {
    this.topics.delete(name);
  }

  partitionCount(name: string): number | undefined {
    return this.topics.get(name)?.logs.length;
  }

  names(): string[] {
    return [...this.topics.keys()].sort();
  }

  /** Appends records (one per timestamp) to a partition's log. */
  append(name: string, partition: number, timestamps: number[]): void {
    const log = this.log(name, partition);
    log.timestamps.push(...timestamps);
    log.highWatermark += timestamps.length;
  }

  /** Retention: moves the log start forward. */
  truncate(name: string, partition: number, logStartOffset: number): void {
    const log = this.log(name, partition);
    log.logStartOffset = Math.max(log.logStartOffset, Math.min(logStartOffset, log.highWatermark));
  }

  async describe(name: string): Promise<{ topicId: string; partitions: number } | undefined> {
    const topic = this.topics.get(name);
    return topic ? { topicId: topic.topicId, partitions: topic.logs.length } : undefined;
  }

  async earliest(topic: string, partition: number): Promise<number> {
    return this.log(topic, partition).logStartOffset;
  }

  async latest(topic: string, partition: number): Promise<number> {
    return this.log(topic, partition).highWatermark;
  }

  async forTimestamp(topic: string, partition: number, timestampMs: number): Promise<number | null> {
    const log = this.log(topic, partition);
    for (let offset = log.logStartOffset; offset < log.highWatermark; offset++) {
      if ((log.timestamps[offset] ?? -Infinity) >= timestampMs) return offset;
    }
    return null;
  }

  private log(name: string, partition: number): PartitionLog {
    const log = this.topics.get(name)?.logs[partition];
    if (!log) throw new Error(`no partition ${name}/${partition}`);
    return log;
  }
}

const emptyLog = (): PartitionLog => ({ logStartOffset: 0, highWatermark: 0, timestamps: [] });

/** Yields to the event loop once: other pending work (timers, other requests) gets to run. */
export const yieldTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Time moves only through `advance`. `sleep(ms)` lets `ms` turns of the event loop pass without moving
 * time, so backoff still spreads concurrent retries out while sessions see no time pass.
 */
export class ManualClock implements Clock {
  constructor(private current = 1_700_000_000_000) {}

  now(): number {
    return this.current;
  }

  advance(ms: number): void {
    this.current += ms;
  }

  async sleep(ms: number): Promise<void> {
    for (let i = 0; i < Math.ceil(ms); i++) await yieldTurn();
  }
}

/** mulberry32: a small, fast, seedable PRNG in [0, 1). */
export const seededRandom = (seed: number): (() => number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

/**
 * A store whose every call first waits 0..maxTurns event-loop turns, so concurrent requests interleave
 * between their reads and their conditional writes the way network round trips make them.
 */
export class InterleavingStore extends ForwardingMetadataStore {
  constructor(
    inner: MetadataStore,
    private readonly random: () => number,
    private readonly maxTurns = 3,
  ) {
    super(inner);
  }

  protected override async around<T>(_call: MetadataCall, run: () => Promise<T>): Promise<T> {
    const turns = Math.floor(this.random() * (this.maxTurns + 1));
    for (let i = 0; i < turns; i++) await yieldTurn();
    return run();
  }
}
