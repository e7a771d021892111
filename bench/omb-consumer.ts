/**
 * The benchmark's consumers: for each subscription a consumer group of `consumerPerSubscription`
 * SDK consumers reading every topic from the beginning. End-to-end latency is receive time minus the
 * record's CreateTime, which the benchmark producer stamps when it generates the message (one clock:
 * producers and consumers run in this process).
 */
import type { SluiceClient } from '../sdk/client.js';
import type { Consumer } from '../sdk/consumer.js';
import { TimedSamples } from './stats.js';

export interface ConsumerRecorder {
  /** End-to-end latency (ms) per message, keyed by receive time. */
  endToEnd: TimedSamples;
  /** Messages received per delivered batch, keyed by receive time. */
  consumed: TimedSamples;
}

export const newConsumerRecorder = (): ConsumerRecorder => ({
  endToEnd: new TimedSamples(),
  consumed: new TimedSamples(),
});

export class BenchConsumers {
  private readonly consumers: { groupId: string; consumer: Consumer; running: Promise<void> }[] = [];

  constructor(
    private readonly client: SluiceClient,
    private readonly recorder: ConsumerRecorder,
  ) {}

  /** Starts the groups and resolves once, in every group, each partition has an owner. */
  async start(options: {
    runId: string;
    topics: string[];
    partitionsPerTopic: number;
    subscriptions: number;
    consumersPerSubscription: number;
    maxWaitMs: number;
    readyTimeoutMs?: number;
  }): Promise<void> {
    for (let s = 0; s < options.subscriptions; s++) {
      const groupId = `${options.runId}-sub-${s}`;
      for (let c = 0; c < options.consumersPerSubscription; c++) {
        const consumer = this.client.consumer({
          groupId,
          maxWaitMs: options.maxWaitMs,
          autoCommitIntervalMs: 5_000,
        });
        consumer.subscribe({ topics: options.topics, fromBeginning: true });
        const running = consumer.run({
          eachBatch: async ({ batch }) => {
            const now = Date.now();
            for (const record of batch.records) this.recorder.endToEnd.add(now, now - record.timestamp);
            this.recorder.consumed.add(now, batch.records.length);
          },
        });
        running.catch((error: unknown) => console.error(`consumer of ${groupId} failed: ${String(error)}`));
        this.consumers.push({ groupId, consumer, running });
      }
    }
    const want = options.topics.length * options.partitionsPerTopic;
    const deadline = Date.now() + (options.readyTimeoutMs ?? 120_000);
    for (;;) {
      const owned = new Map<string, number>();
      for (const { groupId, consumer } of this.consumers) {
        const n = consumer.assignment().reduce((sum, tp) => sum + tp.partitions.length, 0);
        owned.set(groupId, (owned.get(groupId) ?? 0) + n);
      }
      if ([...owned.values()].every((n) => n === want) && owned.size === options.subscriptions) return;
      if (Date.now() > deadline)
        throw new Error(
          `consumer groups did not own all ${want} partitions in time: ${JSON.stringify([...owned])}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.consumers.map(({ consumer }) => consumer.stop()));
    await Promise.all(this.consumers.map(({ running }) => running.catch(() => undefined)));
  }
}
