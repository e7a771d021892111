/**
 * TopologyTestDriver, after Kafka's: runs a topology in process, with no storage and simulated time,
 * for users' unit tests. Every sub-topology is one task (partition 0); records a sink writes to a
 * topic the topology reads (repartition topics) are processed at once, and the task commits after
 * every input record, so each update is visible downstream as it happens. Piping is asynchronous
 * (state stores are), so `await` each pipe.
 */
import { SluiceError } from '../protocol/errors.js';
import type { Header, SerializedRecord } from './processor.js';
import type { Serde } from './serdes.js';
import { deserializeNullable, serializeNullable } from './serdes.js';
import { KEY_END } from './state/backend.js';
import { MemoryStateBackend } from './state/memory-backend.js';
import { decodeKey, encodeKey } from './state/stores.js';
import { StreamTask, taskIdOf, topicNameOf } from './task.js';
import type { StoreSpec, Topology } from './topology.js';

export interface TestRecord<K, V> {
  key: K | null;
  value: V | null;
  timestamp: number;
  headers: Header[];
}

export class TopologyTestDriver {
  private readonly backend = new MemoryStateBackend();
  private readonly tasks: StreamTask[];
  private readonly outputs = new Map<string, SerializedRecord[]>();
  private readonly pending: { topic: string; record: SerializedRecord }[] = [];
  private wallClockMs: number;
  readonly applicationId: string;

  constructor(
    private readonly topology: Topology,
    config: Record<string, string> = {},
    initialWallClockTimeMs = 0,
  ) {
    this.applicationId = config['application.id'] ?? 'test-driver';
    this.wallClockMs = initialWallClockTimeMs;
    const collector = { send: (topic: string, record: SerializedRecord) => this.capture(topic, record) };
    this.tasks = topology.subTopologies.map(
      (s) => new StreamTask(topology, s, 0, this.applicationId, this.backend, collector),
    );
  }

  /** Records piped without a timestamp get the topic's start time (with auto-advance) or the simulated wall clock. */
  createInputTopic<K, V>(
    name: string,
    keySerde: Serde<K>,
    valueSerde: Serde<V>,
    options: { startTimestampMs?: number; autoAdvanceMs?: number } = {},
  ): TestInputTopic<K, V> {
    return new TestInputTopic(this, name, keySerde, valueSerde, options);
  }

  createOutputTopic<K, V>(name: string, keySerde: Serde<K>, valueSerde: Serde<V>): TestOutputTopic<K, V> {
    return new TestOutputTopic(() => this.outputQueue(name), keySerde, valueSerde);
  }

  /** Advances the simulated wall clock (the time of records piped without a timestamp). */
  advanceWallClockTime(ms: number): void {
    if (!Number.isSafeInteger(ms) || ms < 0)
      throw new SluiceError('INVALID_REQUEST', `cannot advance the wall clock by ${ms} ms`);
    this.wallClockMs += ms;
  }

  wallClockTime(): number {
    return this.wallClockMs;
  }

  /** Every topic written so far, internal ones with their full names. */
  producedTopicNames(): string[] {
    return [...this.outputs.keys()].sort();
  }

  getKeyValueStore<K, V>(name: string): { get(key: K): V | null; all(): { key: K; value: V }[] } {
    const { spec, task } = this.storeOf(name, 'key-value');
    return {
      get: (key) => {
        const entry = this.backend.getNow(task, name, encodeKey(spec.keySerde, key));
        return entry === undefined ? null : (spec.valueSerde.deserialize(entry.value) as V);
      },
      all: () =>
        this.backend.rangeNow(task, name, '', KEY_END).map((e) => ({
          key: decodeKey(spec.keySerde, e.key) as K,
          value: spec.valueSerde.deserialize(e.value) as V,
        })),
    };
  }

  /** A window store: a key's windows with start in [timeFrom, timeTo], by start. */
  getWindowStore<K, V>(
    name: string,
  ): { fetch(key: K, timeFrom: number, timeTo: number): { windowStart: number; value: V }[] } {
    const { spec, task } = this.storeOf(name, 'window');
    return {
      fetch: (key, timeFrom, timeTo) => {
        const prefix = encodeKey(spec.keySerde, key);
        return this.backend
          .rangeNow(task, name, `${prefix}|`, `${prefix}|${KEY_END}`)
          .map((e) => ({
            windowStart: Number(e.key.slice(prefix.length + 1)),
            value: spec.valueSerde.deserialize(e.value) as V,
          }))
          .filter((w) => w.windowStart >= timeFrom && w.windowStart <= timeTo);
      },
    };
  }

  close(): void {
    this.outputs.clear();
  }

  /** @internal Processes one input record and whatever it writes to topics the topology reads. */
  async pipe(topic: string, record: SerializedRecord): Promise<void> {
    this.pending.push({ topic, record });
    while (this.pending.length > 0) {
      const next = this.pending.shift();
      if (!next) break;
      const task = this.taskFor(next.topic);
      if (!task)
        throw new SluiceError('UNKNOWN_TOPIC_OR_PARTITION', `the topology reads no topic ${next.topic}`);
      await task.process({ topic: next.topic, ...next.record });
    }
    // Commit after every record, as Kafka's driver does: caches flush and every update is visible.
    for (const task of this.tasks) await task.stores.flush();
  }

  private capture(topic: string, record: SerializedRecord): void {
    this.outputQueue(topic).push(record);
    if (this.taskFor(topic)) this.pending.push({ topic, record });
  }

  private taskFor(topic: string): StreamTask | undefined {
    const sub = this.topology.subTopologyOf(topic, (t) => topicNameOf(this.applicationId, t));
    return sub && this.tasks[sub.id];
  }

  private outputQueue(topic: string): SerializedRecord[] {
    let queue = this.outputs.get(topic);
    if (!queue) this.outputs.set(topic, (queue = []));
    return queue;
  }

  private storeOf(name: string, kind: StoreSpec['kind']): { spec: StoreSpec; task: string } {
    const spec = this.topology.stores.get(name);
    const sub = this.topology.subTopologies.find((s) => s.stores.includes(name));
    if (!spec || spec.kind !== kind || !sub)
      throw new SluiceError('INVALID_REQUEST', `the topology has no ${kind} store named ${name}`);
    return { spec, task: taskIdOf(sub.id, 0) };
  }
}

export class TestInputTopic<K, V> {
  private nextTimestamp: number | undefined;

  constructor(
    private readonly driver: TopologyTestDriver,
    readonly name: string,
    private readonly keySerde: Serde<K>,
    private readonly valueSerde: Serde<V>,
    private readonly options: { startTimestampMs?: number; autoAdvanceMs?: number },
  ) {
    this.nextTimestamp = options.startTimestampMs;
  }

  pipeInput(key: K | null, value: V | null, timestamp?: number, headers: Header[] = []): Promise<void> {
    return this.driver.pipe(this.name, {
      key: serializeNullable(this.keySerde, key),
      value: serializeNullable(this.valueSerde, value),
      timestamp: timestamp ?? this.takeTimestamp(),
      headers,
    });
  }

  async pipeValueList(values: V[]): Promise<void> {
    for (const v of values) await this.pipeInput(null, v);
  }

  async pipeKeyValueList(pairs: { key: K | null; value: V | null }[]): Promise<void> {
    for (const p of pairs) await this.pipeInput(p.key, p.value);
  }

  async pipeRecordList(records: { key: K | null; value: V | null; timestamp?: number }[]): Promise<void> {
    for (const r of records) await this.pipeInput(r.key, r.value, r.timestamp);
  }

  private takeTimestamp(): number {
    if (this.nextTimestamp === undefined) return this.driver.wallClockTime();
    const t = this.nextTimestamp;
    this.nextTimestamp += this.options.autoAdvanceMs ?? 0;
    return t;
  }
}

export class TestOutputTopic<K, V> {
  constructor(
    private readonly queue: () => SerializedRecord[],
    private readonly keySerde: Serde<K>,
    private readonly valueSerde: Serde<V>,
  ) {}

  readRecord(): TestRecord<K, V> {
    const r = this.queue().shift();
    if (!r) throw new SluiceError('INVALID_REQUEST', 'the output topic has no record to read');
    return {
      key: deserializeNullable(this.keySerde, r.key),
      value: deserializeNullable(this.valueSerde, r.value),
      timestamp: r.timestamp,
      headers: r.headers,
    };
  }

  readValue(): V | null {
    return this.readRecord().value;
  }

  readKeyValue(): { key: K | null; value: V | null } {
    const { key, value } = this.readRecord();
    return { key, value };
  }

  readRecordsToList(): TestRecord<K, V>[] {
    const out: TestRecord<K, V>[] = [];
    while (!this.isEmpty()) out.push(this.readRecord());
    return out;
  }

  readKeyValuesToList(): { key: K | null; value: V | null }[] {
    return this.readRecordsToList().map(({ key, value }) => ({ key, value }));
  }

  /** The last value per key; a null key is an error, as in Kafka. */
  readKeyValuesToMap(): Map<K, V | null> {
    const out = new Map<K, V | null>();
    for (const { key, value } of this.readRecordsToList()) {
      if (key === null) throw new SluiceError('INVALID_REQUEST', 'readKeyValuesToMap cannot hold a null key');
      out.set(key, value);
    }
    return out;
  }

  getQueueSize(): number {
    return this.queue().length;
  }

  isEmpty(): boolean {
    return this.queue().length === 0;
  }
}
