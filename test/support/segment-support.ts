/** A memory Sluice with a segment store, a workload of timestamped requests, and a full snapshot of reads. */
import { expect } from 'vitest';
import { keys } from '../../lib/core/keys.js';
import { pageEntries } from '../../lib/core/log/batch-index.js';
import { decodePartitionState } from '../../lib/core/log/partition-codec.js';
import { effectiveConfig } from '../../lib/core/topics/configs.js';
import type { MemorySluiceOptions } from './log-support.js';
import { memorySluice } from './log-support.js';
import type { ItemKey, MetadataStore, QueryInput } from '../../lib/ports/metadata-store.js';

export const T0 = 1_700_000_000_000 - 3_600_000;

export const segmentSetup = async (
  configs: Record<string, string> = {},
  partitions = 1,
  wrap: Omit<MemorySluiceOptions, 'segmentStore'> = {},
) => {
  const s = memorySluice({ tailFlushEntries: 1000 }, { segmentStore: true, ...wrap });
  const created = await s.http('POST', '/v1/topics', {
    name: 't',
    partitions,
    configs: { 'segment.bytes': '16384', ...configs },
  });
  expect(created.status).toBe(201);
  const topic = await s.sluice.catalog.get('t');
  const pk = (p = 0) => keys.partitionPk(topic.topicId, p);
  const state = async (p = 0) =>
    decodePartitionState((await s.store.get(keys.partitionState(topic.topicId, p)))!);
  const items = async (prefix: string, p = 0) =>
    (await s.store.query({ pk: pk(p), sk: { beginsWith: prefix }, consistent: true })).items;
  const livePages = async (p = 0) => (await items('B#', p)).filter((i) => Array.isArray(i['e']));
  const segmentItems = async (p = 0) => (await items('G#', p)).filter((i) => Array.isArray(i['e']));
  /** One request per call; `records` of [partition, key, value size, timestamp]. */
  const produce = async (records: [number, string | null, number, number][]): Promise<number[]> => {
    const r = await s.http('POST', '/v1/topics/t/records', {
      records: records.map(([partition, key, size, timestamp], i) => ({
        partition,
        key,
        value: `${timestamp}-${i}-`.padEnd(size, 'x'),
        timestamp,
      })),
    });
    expect(r.status).toBe(200);
    return r.body.results.map((x: { offset: number }) => x.offset);
  };
  /** `requests` requests of 10 records of ~200 bytes to partition p, timestamps rising from `from`. */
  const write = async (requests: number, from = T0, p = 0) => {
    for (let i = 0; i < requests; i++)
      await produce(
        Array.from({ length: 10 }, (_, j) => [p, `k${(i * 10 + j) % 13}`, 200, from + i * 1000 + j]),
      );
  };
  const index = async (p = 0) => s.sluice.maintenance.indexTail(topic.topicId, p);
  const config = () => effectiveConfig(topic.configs);
  const roll = async (p = 0) => s.sluice.maintenance.rollSegments(topic.topicId, p, config());
  return { ...s, topic, pk, state, items, livePages, segmentItems, produce, write, index, config, roll };
};

export type SegmentSetup = Awaited<ReturnType<typeof segmentSetup>>;

/**
 * Every read a consumer can make, from every offset: the raw batches (bytes as hex) and the decoded
 * records of one small fetch, plus ListOffsets for every timestamp written and between them.
 */
export const snapshot = async (s: SegmentSetup, p = 0, timestamps: readonly number[] = []) => {
  const st = await s.state(p);
  const reads: unknown[] = [];
  for (let offset = st.logStartOffset; offset < st.nextOffset; offset++) {
    const raw = await s.sluice.fetcher.fetchBatches('t', p, { offset, maxBytes: 3000, maxWaitMs: 0 });
    const records = await s.sluice.fetcher.fetchRecords('t', p, { offset, maxBytes: 3000, maxWaitMs: 0 });
    reads.push({
      offset,
      batches: raw.batches.map((b) => Buffer.from(b).toString('hex')),
      next: raw.nextOffset,
      records: records.records.map((r) => ({ ...r, key: hex(r.key), value: hex(r.value) })),
      recordsNext: records.nextOffset,
    });
  }
  const times = [];
  for (const t of timestamps) times.push({ t, at: await s.sluice.fetcher.listOffsets('t', p, t) });
  return { logStartOffset: st.logStartOffset, nextOffset: st.nextOffset, reads, times };
};

const hex = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b).toString('hex'));

/** Object keys referenced by the partition's live index items and tail. */
export const referencedObjects = async (s: SegmentSetup, p = 0): Promise<string[]> => {
  const live = [...(await s.livePages(p)), ...(await s.segmentItems(p))];
  const st = await s.state(p);
  return [
    ...new Set([
      ...live.flatMap(pageEntries).map((x) => x.entry.objectKey),
      ...st.tail.map((e) => e.objectKey),
    ]),
  ].sort();
};

/** The store, recording whether each read (get or query) asked for a strongly consistent answer. */
export const readsRecorded = (inner: MetadataStore) => {
  const reads: { op: 'get' | 'query'; consistent: boolean }[] = [];
  const store = Object.create(inner, {
    get: {
      value: (key: ItemKey, options?: { consistent?: boolean }) => {
        reads.push({ op: 'get', consistent: options?.consistent === true });
        return inner.get(key, options);
      },
    },
    query: {
      value: (input: QueryInput) => {
        reads.push({ op: 'query', consistent: input.consistent === true });
        return inner.query(input);
      },
    },
  }) as MetadataStore;
  return { store, reads };
};
