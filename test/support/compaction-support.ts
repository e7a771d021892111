/** A compacted one-partition topic on a memory Sluice, with views of its index and cleaner state. */
import { expect } from 'vitest';
import { keys, offsetFromBatchSk } from '../../lib/core/keys.js';
import { pageEntries, pageItem } from '../../lib/core/log/batch-index.js';
import type { CompactionOptions } from '../../lib/core/log/compaction.js';
import type { CompactionDeps } from '../../lib/core/log/compaction-swap.js';
import { compactPartition } from '../../lib/core/log/compaction.js';
import { decodePartitionState } from '../../lib/core/log/partition-codec.js';
import type { TopicConfig } from '../../lib/core/topics/configs.js';
import { effectiveConfig } from '../../lib/core/topics/configs.js';
import { memorySluice } from './log-support.js';

export const BATCH = { 'content-type': 'application/vnd.kafka.record-batch' };
export const RAW = { accept: 'application/vnd.kafka.record-batch' };
export const utf8 = (s: string) => new Uint8Array(Buffer.from(s));

export type Row = [offset: number, key: string | null, value: string | null];

export const setup = async (configs: Record<string, string> = {}, tailFlushEntries = 1000) => {
  const s = memorySluice({ tailFlushEntries });
  const created = await s.http('POST', '/v1/topics', {
    name: 't',
    partitions: 1,
    configs: { 'cleanup.policy': 'compact', ...configs },
  });
  expect(created.status).toBe(201);
  const topic = await s.sluice.catalog.get('t');
  const state = async () => decodePartitionState((await s.store.get(keys.partitionState(topic.topicId, 0)))!);
  const cleaner = async () =>
    (await s.store.get(keys.partitionState(topic.topicId, 0))) as unknown as {
      cleanedThrough?: number;
      cleanBytes?: number;
      oldestTombstone?: number;
    };
  const pages = async () =>
    (await s.store.query({ pk: keys.partitionPk(topic.topicId, 0), sk: { beginsWith: 'B#' } })).items;
  /** The batch index's entries, in offset order. */
  const index = async () => (await pages()).flatMap(pageEntries).map((x) => x.entry);
  /** Points the entry at `offset` at another object, as another writer would. */
  const repoint = async (offset: number, o: string) => {
    const page = (await pages()).find((p) => pageEntries(p).some((x) => x.baseOffset === offset))!;
    const entries = pageEntries(page).map((x) =>
      x.baseOffset === offset ? { ...x.entry, objectKey: o } : x.entry,
    );
    await s.store.put(pageItem(topic.topicId, 0, offsetFromBatchSk(page.sk), entries));
  };
  /** One request, so one index entry; returns the offsets. */
  const produce = async (records: [string | null, string | null, number?][]): Promise<number[]> => {
    const r = await s.http('POST', '/v1/topics/t/records', {
      records: records.map(([key, value, timestamp]) => ({
        key,
        value,
        partition: 0,
        ...(timestamp === undefined ? {} : { timestamp }),
      })),
    });
    expect(r.status).toBe(200);
    return r.body.results.map((x: { offset: number }) => x.offset);
  };
  const fetchRows = async (offset = 0, maxBytes = 1_000_000) => {
    const r = await s.http('GET', `/v1/topics/t/partitions/0/records?offset=${offset}&maxBytes=${maxBytes}`);
    expect(r.status).toBe(200);
    const rows: Row[] = r.body.records.map(
      (x: { offset: number; key: string | null; value: string | null }) => [x.offset, x.key, x.value],
    );
    return { rows, nextOffset: r.body.nextOffset as number, highWatermark: r.body.highWatermark as number };
  };
  /** A consumer that reads one record per fetch, following nextOffset to the high watermark. */
  const consumeAll = async () => {
    const rows: Row[] = [];
    let offset = 0;
    for (let fetches = 0; fetches < 1000; fetches++) {
      const page = await fetchRows(offset, 1);
      rows.push(...page.rows);
      expect(page.nextOffset).toBeGreaterThan(offset);
      offset = page.nextOffset;
      if (offset >= page.highWatermark) return rows;
    }
    throw new Error('the consumer did not reach the high watermark');
  };
  /** One pass at `now`, with config values and deps (a wrapped store, say) replaced as given. */
  const compact = (
    now = s.clock.now(),
    over: {
      config?: Partial<TopicConfig>;
      deps?: Partial<CompactionDeps>;
      options?: CompactionOptions;
      partition?: number;
    } = {},
  ) =>
    compactPartition(
      { ...s.sluice.log, ...over.deps },
      topic.topicId,
      over.partition ?? 0,
      { ...effectiveConfig(topic.configs), ...over.config },
      now,
      over.options,
    );
  return { ...s, topic, state, cleaner, index, repoint, produce, fetchRows, consumeAll, compact };
};

/** The latest record of each key, in offset order: what a compacted log must hold. */
export const latestPerKey = (rows: readonly Row[]): Row[] => {
  const latest = new Map<string | null, Row>();
  for (const row of rows) latest.set(row[1], row);
  return [...latest.values()].sort((a, b) => a[0] - b[0]);
};
