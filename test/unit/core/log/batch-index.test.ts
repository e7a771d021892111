import { describe, expect, it, vi } from 'vitest';
import { keys } from '../../../../lib/core/keys.js';
import { isRetired, pageEntries } from '../../../../lib/core/log/batch-index.js';
import { materializeTail } from '../../../../lib/core/log/materialize.js';
import { decodePartitionState } from '../../../../lib/core/log/partition-codec.js';
import { encodeRecordBatch } from '../../../../protocol/record-batch/index.js';
import type { Item, MetadataStore } from '../../../../lib/ports/metadata-store.js';
import { listOffsetsViolations } from '../../../support/list-offsets.js';
import { checkStorage, storageViolations } from '../../../support/storage.js';
import { memorySluice } from '../../../support/log-support.js';

const BATCH = { 'content-type': 'application/vnd.kafka.record-batch' };

const setup = async (configs: Record<string, string> = {}) => {
  const s = memorySluice({ tailFlushEntries: 1000 });
  await s.http('POST', '/v1/topics', { name: 't', partitions: 1, configs });
  const topic = await s.sluice.catalog.get('t');
  const stateKey = keys.partitionState(topic.topicId, 0);
  const state = async () => decodePartitionState((await s.store.get(stateKey))!);
  const pages = () =>
    s.store
      .dump()
      .filter((i) => i.pk === stateKey.pk && i.sk.startsWith(keys.batchPrefix))
      .sort((a, b) => (a.sk < b.sk ? -1 : 1));
  /** The partition item as it is now, for a materializer that reads it now and stalls. */
  const stalled = async (): Promise<MetadataStore> => {
    const snapshot = (await s.store.get(stateKey))!;
    return Object.create(s.store, {
      get: { value: async (key: Item) => (key.sk === 'STATE' ? snapshot : s.store.get(key)) },
    }) as MetadataStore;
  };
  /** A store whose trims fail: the materializer writes everything, then dies before the trim. */
  const dyingBeforeTrim = Object.create(s.store, {
    update: { value: async () => Promise.reject(new Error('killed')) },
  }) as MetadataStore;
  const materialize = (store: MetadataStore = s.store) =>
    materializeTail(store, topic.topicId, 0, { now: s.clock.now(), producerExpirationMs: 86_400_000 });
  /** Storage invariants and ListOffsets by timestamp against the log. */
  const clean = async () => [
    ...storageViolations(await checkStorage(s.store, [s.objects], topic.topicId, 1)),
    ...(await listOffsetsViolations(s.sluice.fetcher, 't', 1)),
  ];
  const producerId = (await s.http('POST', '/v1/producers')).body.producerId as number;
  const sent: { body: Uint8Array; baseOffset: number }[] = [];
  /** An idempotent batch of one record. */
  const send = async (timestamp = s.clock.now()) => {
    const body = encodeRecordBatch([{ key: null, value: new Uint8Array([sent.length]), timestamp }], {
      producerId,
      producerEpoch: 0,
      baseSequence: sent.length,
    });
    const r = await s.http('POST', '/v1/topics/t/partitions/0/batches', body, BATCH);
    expect(r.status).toBe(200);
    sent.push({ body, baseOffset: r.body.baseOffset });
  };
  const retriesAnswerOriginals = async () => {
    for (const { body, baseOffset } of sent) {
      const again = await s.http('POST', '/v1/topics/t/partitions/0/batches', body, BATCH);
      expect(again.body.baseOffset).toBe(baseOffset);
    }
  };
  return {
    ...s,
    topic,
    state,
    pages,
    stalled,
    dyingBeforeTrim,
    materialize,
    clean,
    send,
    retriesAnswerOriginals,
  };
};

const spans = (pages: Item[]) => pages.map((p) => pageEntries(p).map((x) => x.baseOffset));

describe('batch index pages', () => {
  it('hold a pass each and tile the log', async () => {
    const s = await setup();
    for (let i = 0; i < 5; i++) await s.send();
    expect(await s.materialize()).toBe(5);
    for (let i = 0; i < 3; i++) await s.send();
    expect(await s.materialize()).toBe(3);
    expect(spans(s.pages())).toEqual([
      [0, 1, 2, 3, 4],
      [5, 6, 7],
    ]);
    expect(await s.clean()).toEqual([]);
    const page = await s.http('GET', '/v1/topics/t/partitions/0/records?offset=3&maxBytes=1');
    expect(page.body.records.map((r: { offset: number }) => r.offset)).toEqual([3]);
  });

  it('stay a tiling when a materializer that read a shorter tail wrote first and died', async () => {
    const s = await setup();
    for (let i = 0; i < 3; i++) await s.send();
    const early = await s.stalled();
    for (let i = 0; i < 3; i++) await s.send();
    await expect(
      s.materialize(Object.create(early, { update: { value: s.dyingBeforeTrim.update } })),
    ).rejects.toThrow('killed');
    expect(spans(s.pages())).toEqual([[0, 1, 2]]);
    // The next one finds that page and writes the rest as a page of its own.
    expect(await s.materialize()).toBe(6);
    expect(spans(s.pages())).toEqual([
      [0, 1, 2],
      [3, 4, 5],
    ]);
    expect((await s.state()).tailBase).toBe(6);
    expect(await s.clean()).toEqual([]);
    await s.retriesAnswerOriginals();
  });

  it('take the entries a longer page holds when a materializer that read more wrote first and died', async () => {
    const s = await setup();
    for (let i = 0; i < 3; i++) await s.send();
    const early = await s.stalled();
    for (let i = 0; i < 3; i++) await s.send();
    await expect(s.materialize(s.dyingBeforeTrim)).rejects.toThrow('killed');
    // The one that read only three entries trims all six (the page holds them) and records their facts.
    expect(await s.materialize(early)).toBe(6);
    expect(spans(s.pages())).toEqual([[0, 1, 2, 3, 4, 5]]);
    expect((await s.state()).tail).toEqual([]);
    expect(await s.clean()).toEqual([]);
    await s.retriesAnswerOriginals();
    expect((await s.state()).nextOffset).toBe(6);
  });

  it('are not put back by a stalled materializer once retention retired them', async () => {
    const s = await setup({ 'retention.ms': '60000' });
    const old = s.clock.now() - 120_000;
    for (let i = 0; i < 4; i++) await s.send(old);
    const early = await s.stalled();
    expect(await s.materialize()).toBe(4);
    await s.send();
    const report = await s.sluice.maintenance.run();
    expect(report.errors).toEqual([]);
    expect((await s.state()).logStartOffset).toBe(4);
    const [retired] = s.pages();
    expect(isRetired(retired!)).toBe(true);
    // The stalled materializer finds the marker and gives up.
    const put = vi.spyOn(s.store, 'put');
    expect(await s.materialize(early)).toBe(0);
    expect(put.mock.calls.map(([item]) => item.sk).filter((sk) => sk.startsWith('B#'))).toEqual([
      keys.batch(s.topic.topicId, 0, 0).sk,
    ]);
    expect(isRetired(s.pages()[0]!)).toBe(true);
    expect(await s.clean()).toEqual([]);
    // The objects of the retired page go once nothing references them and the grace period is over.
    s.clock.time += 16 * 60_000;
    expect(await s.sluice.maintenance.collectOrphans(s.topic.topicId, 1)).toBe(4);
  });

  it('are not overwritten by a stalled materializer once compaction rewrote them', async () => {
    const s = await setup();
    await s.http('PATCH', '/v1/topics/t', { configs: { 'cleanup.policy': 'compact' } });
    for (let i = 0; i < 4; i++) {
      const r = await s.http('POST', '/v1/topics/t/records', {
        records: [{ key: 'k', value: `v${i}`, partition: 0 }],
      });
      expect(r.status).toBe(200);
    }
    const early = await s.stalled();
    expect(await s.materialize()).toBe(4);
    await s.sluice.maintenance.run();
    const compacted = s.pages();
    expect(pageEntries(compacted[0]!).map((x) => x.entry.recordCount)).toEqual([0, 0, 0, 1]);
    expect(await s.materialize(early)).toBe(0);
    expect(s.pages()).toEqual(compacted);
    expect(await s.clean()).toEqual([]);
  });
});
