/**
 * One bounded invocation of a source task, with KIP-618's guarantee: a killed task neither skips nor
 * duplicates. Sluice has no transactions spanning partitions, so a poll commits in three steps:
 *
 * 1. Intent: the task item records the poll number, the source range it read (per source partition,
 *    the offset before and the last record's offset) and the high watermark of every topic-partition
 *    it will write — fenced by the task's lease epoch.
 * 2. Records: one JSON produce per topic with an Idempotency-Key (a retry writes nothing twice), each
 *    record pinned to its partition and tagged with the poll's id in the `__connect.source.poll`
 *    header. Records of one partition in one request commit together (API.md).
 * 3. Offsets: one transaction stores the source offsets and clears the intent, fenced by the lease.
 *
 * A task that finds an intent on start replays exactly that range from the source (the connector
 * promises `replay` reads the same records), partitions it the same way, scans each partition from its
 * recorded high watermark for the poll's id, writes only the partitions that do not have it, and then
 * commits the offsets. Nothing past the intent was read, so nothing is skipped; a partition that has
 * the poll is not written again, so nothing is duplicated. See docs/connect.md.
 */
import { partitionForKey } from '../../protocol/partitioner.js';
import type { Clock } from '../../lib/ports/clock.js';
import type { Message, SluiceClient } from '../../sdk/index.js';
import type { Converter } from '../converters.js';
import { createConverter } from '../converters.js';
import type { SourceMap, SourcePlugin, SourceRecord, SourceTask } from '../plugin.js';
import { sourcePartitionKey } from '../plugin.js';
import type { ConnectStateStore, Lease, PendingPoll, SourceOffset } from '../state-store.js';
import type { Chain } from '../transforms/chain.js';
import { buildChain } from '../transforms/chain.js';
import { ErrorHandler, errorPolicyOf } from './error-handler.js';
import { LeaseKeeper } from './lease-keeper.js';

export const POLL_HEADER = '__connect.source.poll';

export interface SourceRunOptions {
  client: SluiceClient;
  state: ConnectStateStore;
  clock: Clock;
  lease: Lease;
  deadline: number;
  leaseTtlMs: number;
  log: (entry: Record<string, unknown>) => void;
  /** Wait between empty polls (default 1000 ms). */
  pollIntervalMs?: number;
  /** Records per poll (default: the connector's batch size, else 500). */
  maxRecords?: number;
}

export interface SourceRunResult {
  records: number;
  polls: number;
  replayed: boolean;
}

interface Output {
  topic: string;
  partition: number;
  message: Message;
}

const UTF8 = new TextEncoder();

export const runSourceTask = async (
  plugin: SourcePlugin,
  config: Record<string, string>,
  options: SourceRunOptions,
): Promise<SourceRunResult> => {
  const { client, state, clock, lease, log } = options;
  const keeper = new LeaseKeeper(lease, state, clock, options.leaseTtlMs);
  const task: SourceTask = await plugin.createTask(config, {
    connector: lease.connector,
    task: lease.task,
    log,
    reportErrant: (_record, error) => Promise.reject(error),
  });
  const keyConverter = createConverter(
    config['key.converter'] ?? 'org.apache.kafka.connect.storage.StringConverter',
  );
  const valueConverter = createConverter(
    config['value.converter'] ?? 'org.apache.kafka.connect.json.JsonConverter',
  );
  const chain = buildChain(config);
  const errors = new ErrorHandler(errorPolicyOf({ ...config, 'errors.deadletterqueue.topic.name': '' }), {
    connector: lease.connector,
    task: lease.task,
    clock,
    log,
    produce: () => Promise.resolve(), // sources have no DLQ in Connect
  });
  const producer = client.producer();
  const admin = client.admin();
  const counts = new Map<string, number>();
  const partitionCount = async (topic: string): Promise<number> => {
    let n = counts.get(topic);
    if (n === undefined) {
      n = (await admin.describeTopic(topic)).partitions.length;
      counts.set(topic, n);
    }
    return n;
  };
  const writer: PollWriter = {
    task,
    keyConverter,
    valueConverter,
    chain,
    errors,
    pollId: (n) => `${lease.connector}/${lease.task}/${n}`,
  };

  const stored = new Map(
    (await state.sourceOffsets(lease.connector)).map((o) => [sourcePartitionKey(o.partition), o.offset]),
  );
  const offsets = new Map<string, SourceMap | null>(
    task.sourcePartitions().map((p) => [sourcePartitionKey(p), stored.get(sourcePartitionKey(p)) ?? null]),
  );
  const record = await state.task(lease.connector, lease.task);
  let poll = record?.lastPoll ?? 0;
  let records = 0;
  let polls = 0;
  let replayed = false;
  try {
    if (record?.pendingPoll) {
      const pending = record.pendingPoll;
      const replay = (
        await Promise.all(pending.ranges.map((r) => task.replay(r.partition, r.from, r.through)))
      ).flat();
      const outputs = await toOutputs(writer, replay, pending.poll, (t) =>
        Promise.resolve(pending.partitionCounts[t] ?? 1),
      );
      const missing = await withoutWritten(client, outputs, pending, writer.pollId(pending.poll));
      await produce(producer, missing);
      const committed = lastOffsets(replay);
      await state.commitPoll(lease, pending.poll, committed);
      for (const o of committed) offsets.set(sourcePartitionKey(o.partition), o.offset);
      poll = pending.poll;
      replayed = true;
      records += missing.length;
    }
    const maxRecords = options.maxRecords ?? Number(config['batch.max.rows'] ?? '500');
    while (clock.now() < options.deadline) {
      await keeper.keep();
      const { records: polled } = await errors.retry(() => task.poll(offsets, maxRecords));
      if (polled.length === 0) {
        await clock.sleep(
          Math.min(options.pollIntervalMs ?? 1_000, Math.max(0, options.deadline - clock.now())),
        );
        continue;
      }
      const next = poll + 1;
      const outputs = await toOutputs(writer, polled, next, partitionCount);
      const pending: PendingPoll = {
        poll: next,
        ranges: rangesOf(polled, offsets),
        marks: await marksOf(client, outputs),
        partitionCounts: Object.fromEntries(
          await Promise.all(
            [...new Set(outputs.map((o) => o.topic))].map(async (t) => [t, await partitionCount(t)] as const),
          ),
        ),
      };
      await state.beginPoll(lease, pending);
      await produce(producer, outputs);
      const committed = lastOffsets(polled);
      await state.commitPoll(lease, next, committed);
      for (const o of committed) offsets.set(sourcePartitionKey(o.partition), o.offset);
      poll = next;
      polls += 1;
      records += outputs.length;
    }
  } finally {
    await task.close().catch(() => undefined);
  }
  return { records, polls, replayed };
};

interface PollWriter {
  task: SourceTask;
  keyConverter: Converter;
  valueConverter: Converter;
  chain: Chain;
  errors: ErrorHandler;
  pollId: (poll: number) => string;
}

/** Converts, transforms and partitions a poll's records; the same records always give the same outputs. */
const toOutputs = async (
  writer: PollWriter,
  records: readonly SourceRecord[],
  poll: number,
  partitionCount: (topic: string) => Promise<number>,
): Promise<Output[]> => {
  const out: Output[] = [];
  const id = UTF8.encode(writer.pollId(poll));
  let keyless = 0;
  for (const record of records) {
    const original = { topic: record.topic, key: null, value: null, headers: [] };
    let transformed: ReturnType<Chain>;
    try {
      transformed = writer.chain(record);
    } catch (error) {
      await writer.errors.report('TRANSFORMATION', 'transforms', original, error);
      continue;
    }
    if (transformed === null) continue;
    let key: Uint8Array | null;
    let value: Uint8Array | null;
    try {
      key = writer.keyConverter.fromConnect(transformed.key);
    } catch (error) {
      await writer.errors.report('KEY_CONVERTER', 'key.converter', original, error);
      continue;
    }
    try {
      value = writer.valueConverter.fromConnect(transformed.value);
    } catch (error) {
      await writer.errors.report('VALUE_CONVERTER', 'value.converter', original, error);
      continue;
    }
    const n = await partitionCount(transformed.topic);
    const partition = transformed.kafkaPartition ?? (key === null ? keyless++ % n : partitionForKey(key, n));
    out.push({
      topic: transformed.topic,
      partition,
      message: {
        key,
        value,
        partition,
        timestamp: transformed.timestamp,
        headers: [
          ...transformed.headers.map((h) => ({
            key: h.key,
            value: h.value === null ? null : UTF8.encode(h.value),
          })),
          { key: POLL_HEADER, value: id },
        ],
      },
    });
  }
  return out;
};

/** One produce per topic; each request carries one Idempotency-Key for all its retries. */
const produce = async (
  producer: ReturnType<SluiceClient['producer']>,
  outputs: readonly Output[],
): Promise<void> => {
  const byTopic = new Map<string, Message[]>();
  for (const o of outputs) byTopic.set(o.topic, [...(byTopic.get(o.topic) ?? []), o.message]);
  for (const [topic, messages] of byTopic) await producer.send({ topic, messages });
};

const rangesOf = (
  records: readonly SourceRecord[],
  before: ReadonlyMap<string, SourceMap | null>,
): PendingPoll['ranges'] => {
  const ranges = new Map<string, PendingPoll['ranges'][number]>();
  for (const r of records) {
    const k = sourcePartitionKey(r.sourcePartition);
    const existing = ranges.get(k);
    ranges.set(k, {
      partition: r.sourcePartition,
      from: existing?.from ?? before.get(k) ?? null,
      through: r.sourceOffset,
    });
  }
  return [...ranges.values()];
};

const lastOffsets = (records: readonly SourceRecord[]): SourceOffset[] => {
  const last = new Map<string, SourceOffset>();
  for (const r of records)
    last.set(sourcePartitionKey(r.sourcePartition), { partition: r.sourcePartition, offset: r.sourceOffset });
  return [...last.values()];
};

const marksOf = async (client: SluiceClient, outputs: readonly Output[]): Promise<PendingPoll['marks']> => {
  const marks: PendingPoll['marks'] = [];
  for (const topic of new Set(outputs.map((o) => o.topic))) {
    const used = new Set(outputs.filter((o) => o.topic === topic).map((o) => o.partition));
    for (const p of await client.admin().fetchTopicOffsets(topic)) {
      if (used.has(p.partition)) marks.push({ topic, partition: p.partition, offset: p.high });
    }
  }
  return marks;
};

/** Drops the outputs of partitions that already hold this poll's records (scanned from the marks). */
const withoutWritten = async (
  client: SluiceClient,
  outputs: readonly Output[],
  pending: PendingPoll,
  pollId: string,
): Promise<Output[]> => {
  const consumer = client.consumer();
  const written = new Set<string>();
  for (const mark of pending.marks) {
    let offset = mark.offset;
    for (;;) {
      const batch = await consumer.fetch(mark.topic, mark.partition, offset, { maxWaitMs: 0 });
      const found = batch.records.some((r) =>
        r.headers.some(
          (h) =>
            h.key === POLL_HEADER && h.value !== null && Buffer.from(h.value).toString('utf8') === pollId,
        ),
      );
      if (found) {
        written.add(`${mark.topic}\u0000${mark.partition}`);
        break;
      }
      if (batch.records.length === 0 || batch.nextOffset >= batch.highWatermark) break;
      offset = batch.nextOffset;
    }
  }
  return outputs.filter((o) => !written.has(`${o.topic}\u0000${o.partition}`));
};
