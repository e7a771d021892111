/**
 * KafkaStreams: runs a topology against Sluice. The application id is a KIP-848 consumer group over
 * every source topic (input and repartition); the server's range assignor hands each member the same
 * partition numbers of every topic, so a task (sub-topology × partition) runs where all its input
 * partitions are owned. State lives behind a StateBackend (DynamoDB through Sluice's metadata table),
 * so a task that moves restores nothing.
 */
import { SluiceError } from '../../protocol/errors.js';
import type { GroupMember, SluiceClient, TopicPartitions } from '../../sdk/index.js';
import { isSluiceError } from '../../sdk/index.js';
import type { StateBackend } from '../state/backend.js';
import { StreamTask, taskIdOf, topicNameOf } from '../task.js';
import type { Topology } from '../topology.js';
import type { StreamsConfig } from './config.js';
import type { Committer } from './committer.js';
import { AtLeastOnceCommitter } from './committer.js';
import { ExactlyOnceCommitter } from './eos.js';
import { TaskLease } from './lease.js';
import { TaskRunner } from './task-runner.js';
import { MetadataStateBackend } from '../state/metadata-backend.js';
import { describeStores, registerStores } from '../query/registry.js';

export type StreamsState = 'CREATED' | 'RUNNING' | 'PENDING_SHUTDOWN' | 'NOT_RUNNING' | 'ERROR';

export interface KafkaStreamsOptions {
  topology: Topology;
  config: StreamsConfig;
  client: SluiceClient;
  state: StateBackend;
  log?: (line: string) => void;
}

const key = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

export class KafkaStreams {
  state: StreamsState = 'CREATED';
  private readonly member: GroupMember;
  private readonly owned = new Set<string>();
  private readonly runners = new Map<string, TaskRunner>();
  private readonly stopping = new AbortController();
  private loop: Promise<void> | undefined;
  private failure: unknown;
  private partitionCount = 0;
  /** Records processed by tasks that have stopped, so processed() survives revocation and close. */
  private readonly finished: Record<string, number> = {};

  constructor(private readonly options: KafkaStreamsOptions) {
    if (
      options.config.processingGuarantee === 'exactly_once_v2' &&
      !(options.state instanceof MetadataStateBackend)
    )
      throw new SluiceError(
        'INVALID_CONFIG',
        'exactly_once_v2 keeps state in the metadata table (MetadataStateBackend)',
      );
    this.member = options.client.groupMember({
      groupId: options.config.applicationId,
      subscribedTopics: this.sourceTopics(),
      serverAssignor: 'range',
    });
  }

  /** Creates missing internal topics, checks co-partitioning, and starts the group loop. */
  async start(): Promise<void> {
    if (this.state !== 'CREATED')
      throw new SluiceError('INVALID_REQUEST', `cannot start a KafkaStreams that is ${this.state}`);
    await this.prepareTopics();
    // Interactive queries find the stores from this record (streams/query/registry.ts).
    const { state, topology, config } = this.options;
    if (state instanceof MetadataStateBackend)
      await registerStores(
        state.store,
        config.applicationId,
        describeStores(topology, this.partitionCount, config.applicationId),
      );
    this.state = 'RUNNING';
    this.loop = this.groupLoop().catch((error: unknown) => this.fail(error));
  }

  /** Settles when the app stops running: after close() or a failure (then call close()). */
  stopped(): Promise<void> {
    return this.loop ?? Promise.resolve();
  }

  /** Records processed per task since start. */
  processed(): Record<string, number> {
    const totals = { ...this.finished };
    for (const [id, r] of this.runners) totals[id] = (totals[id] ?? 0) + r.processedRecords;
    return totals;
  }

  /**
   * Where each running task has processed its input partitions to (`topic`, `partition`, the offset
   * after the last record processed): what a bounded run (streams/lambda) waits on before closing.
   */
  positions(): { topic: string; partition: number; offset: number }[] {
    return [...this.runners.values()].flatMap((r) =>
      r.positions().map((p) => ({ ...p, partition: r.task.partition })),
    );
  }

  /** Commits every task, leaves the group and stops; rejects with the error that failed the app, if any. */
  async close(): Promise<void> {
    if (this.state === 'RUNNING') this.state = 'PENDING_SHUTDOWN';
    this.stopping.abort();
    await this.loop;
    await this.stopTasks([...this.runners.keys()], this.failure === undefined);
    await this.member.leave().catch(() => undefined);
    this.state = this.failure === undefined ? 'NOT_RUNNING' : 'ERROR';
    if (this.failure !== undefined) throw this.failure;
  }

  private sourceTopics(): string[] {
    const { topology, config } = this.options;
    return [
      ...new Set(
        topology.subTopologies.flatMap((s) => s.sources.map((t) => topicNameOf(config.applicationId, t))),
      ),
    ];
  }

  private async prepareTopics(): Promise<void> {
    const { topology, config, client } = this.options;
    const admin = client.admin();
    const external = [
      ...new Set(
        topology.subTopologies.flatMap((s) => s.sources.filter((t) => !t.internal).map((t) => t.name)),
      ),
    ];
    const counts = new Map<string, number>();
    for (const name of external) counts.set(name, (await admin.describeTopic(name)).partitions.length);
    // Repartition topics get as many partitions as the widest input, as in Kafka Streams.
    this.partitionCount = Math.max(...counts.values());
    for (const name of topology.internalTopics()) {
      const full = `${config.applicationId}-${name}`;
      try {
        await admin.createTopic({ name: full, partitions: this.partitionCount });
      } catch (error) {
        // The SDK's error (the API's answer), not the core's: a restarted app finds its topics there.
        if (!(isSluiceError(error) && error.code === 'TOPIC_ALREADY_EXISTS')) throw error;
      }
      counts.set(full, (await admin.describeTopic(full)).partitions.length);
    }
    await this.checkSinkTopics(new Set(counts.keys()));
    for (const sub of topology.subTopologies) {
      const widths = new Set(sub.sources.map((t) => counts.get(topicNameOf(config.applicationId, t))));
      if (widths.size > 1)
        throw new SluiceError(
          'INVALID_CONFIG',
          `sub-topology ${sub.id} joins topics that are not co-partitioned: ${sub.sources.map((t) => `${topicNameOf(config.applicationId, t)} (${counts.get(topicNameOf(config.applicationId, t))})`).join(', ')}`,
        );
    }
  }

  /**
   * Output topics must exist before the first record is processed, not when the first output is
   * produced (which may be long after start): each missing one is created when the app sets
   * auto.create.topics.enable=true (as a broker with that setting would, with as many partitions as
   * the widest input), and otherwise refused here, every missing one named.
   */
  private async checkSinkTopics(known: Set<string>): Promise<void> {
    const { topology, config, client } = this.options;
    const admin = client.admin();
    const sinks = [
      ...new Set(
        topology.subTopologies.flatMap((s) => s.sinks.filter((t) => !t.internal).map((t) => t.name)),
      ),
    ].filter((name) => !known.has(name));
    const missing: string[] = [];
    for (const name of sinks) {
      try {
        await admin.describeTopic(name);
      } catch (error) {
        if (!(isSluiceError(error) && error.code === 'UNKNOWN_TOPIC_OR_PARTITION')) throw error;
        missing.push(name);
      }
    }
    if (missing.length === 0) return;
    if (!config.autoCreateTopics) {
      const list = missing.join(', ');
      throw new SluiceError(
        'UNKNOWN_TOPIC_OR_PARTITION',
        `output topic${missing.length > 1 ? 's' : ''} ${list} of ${config.applicationId} ${missing.length > 1 ? 'do' : 'does'} not exist: create ${missing.length > 1 ? 'them' : 'it'} first (sluice topics create ${missing[0]} --partitions ${this.partitionCount}) or set auto.create.topics.enable=true`,
      );
    }
    for (const name of missing) {
      try {
        await admin.createTopic({ name, partitions: this.partitionCount });
        this.options.log?.(`created output topic ${name} (${this.partitionCount} partitions)`);
      } catch (error) {
        if (!(isSluiceError(error) && error.code === 'TOPIC_ALREADY_EXISTS')) throw error;
      }
    }
  }

  private async groupLoop(): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted && this.failure === undefined) {
      const outcome = await this.member.heartbeat(this.ownedPartitions());
      let released = false;
      if (outcome.kind === 'fenced') {
        // Our partitions may be someone else's already: nothing of ours may be committed.
        await this.stopTasks([...this.runners.keys()], false);
        this.owned.clear();
        continue;
      }
      if (outcome.kind === 'assignment') {
        const target = new Set(
          outcome.topicPartitions.flatMap((tp) => tp.partitions.map((p) => key(tp.topic, p))),
        );
        const revoked = [...this.owned].filter((k) => !target.has(k));
        if (revoked.length > 0) {
          const affected = [...this.runners].filter(([, r]) =>
            r.task.inputTopics().some((t) => revoked.includes(key(t, r.task.partition))),
          );
          await this.stopTasks(
            affected.map(([id]) => id),
            true,
          );
          for (const k of revoked) this.owned.delete(k);
          released = true;
        }
        for (const k of target) this.owned.add(k);
        this.startRunnableTasks();
      }
      if (!released) await sleep(this.member.heartbeatIntervalMs, signal);
    }
  }

  private startRunnableTasks(): void {
    const { topology, config, client, state, log } = this.options;
    for (const sub of topology.subTopologies) {
      for (let partition = 0; partition < this.partitionCount; partition++) {
        const id = taskIdOf(sub.id, partition);
        if (this.runners.has(id)) continue;
        const topics = sub.sources.map((t) => topicNameOf(config.applicationId, t));
        if (!topics.every((t) => this.owned.has(key(t, partition)))) continue;
        const runner = new TaskRunner(
          (collector) => new StreamTask(topology, sub, partition, config.applicationId, state, collector),
          {
            consumer: client.consumer(),
            committer: this.committerFor(taskIdOf(sub.id, partition), partition),
            commitIntervalMs: config.commitIntervalMs,
            ...(log ? { log } : {}),
          },
        );
        this.runners.set(id, runner);
        runner.start((error) => this.fail(error));
      }
    }
  }

  private committerFor(taskId: string, partition: number): Committer {
    const { config, client, state } = this.options;
    const producer = client.producer();
    return config.processingGuarantee === 'exactly_once_v2' && state instanceof MetadataStateBackend
      ? new ExactlyOnceCommitter(state, taskId, producer, this.member, partition)
      : new AtLeastOnceCommitter(
          this.member,
          producer,
          partition,
          state instanceof MetadataStateBackend ? new TaskLease(state, taskId) : undefined,
        );
  }

  private async stopTasks(ids: string[], commit: boolean): Promise<void> {
    await Promise.all(
      ids.map(async (id) => {
        const runner = this.runners.get(id);
        this.runners.delete(id);
        if (runner) this.finished[id] = (this.finished[id] ?? 0) + runner.processedRecords;
        await runner?.stop(commit && this.failure === undefined).catch((error: unknown) => this.fail(error));
      }),
    );
  }

  private ownedPartitions(): TopicPartitions[] {
    const byTopic = new Map<string, number[]>();
    for (const k of this.owned) {
      const [topic, partition] = k.split('\u0000') as [string, string];
      byTopic.set(topic, [...(byTopic.get(topic) ?? []), Number(partition)]);
    }
    return [...byTopic].map(([topic, partitions]) => ({
      topic,
      partitions: partitions.sort((a, b) => a - b),
    }));
  }

  private fail(error: unknown): void {
    this.failure ??= error;
    this.state = 'ERROR';
    this.options.log?.(`streams failed: ${error instanceof Error ? error.message : String(error)}`);
    this.stopping.abort();
  }
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
