import { describe, expect, it } from 'vitest';
import { dataObjectKey, keys } from '../../../../lib/core/keys.js';
import { materializeTail } from '../../../../lib/core/log/materialize.js';
import { findMaterializedBatch, producerHistoryItems } from '../../../../lib/core/log/producer-history.js';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import type { TailEntry } from '../../../../lib/core/log/partition-state.js';
import { decodePartitionState } from '../../../../lib/core/log/partition-codec.js';
import { encodeRecordBatch } from '../../../../protocol/record-batch/index.js';
import type { Item, MetadataStore, QueryInput } from '../../../../lib/ports/metadata-store.js';
import { memorySluice } from '../../../support/log-support.js';

const BATCH = { 'content-type': 'application/vnd.kafka.record-batch' };

/** One RecordBatch of `count` records with the producer's sequences from `seq`. */
const batchOf = (tag: string, count: number, producer?: { id: number; epoch: number; seq: number }) =>
  encodeRecordBatch(
    Array.from({ length: count }, (_, i) => ({
      key: null,
      value: new Uint8Array(Buffer.from(`${tag}-${i}`)),
      timestamp: 1,
    })),
    producer ? { producerId: producer.id, producerEpoch: producer.epoch, baseSequence: producer.seq } : {},
  );

const setup = async () => {
  const s = memorySluice({ tailFlushEntries: 4 });
  expect((await s.http('POST', '/v1/topics', { name: 't', partitions: 1 })).status).toBe(201);
  const topic = await s.sluice.catalog.get('t');
  const pk = keys.partitionPk(topic.topicId, 0);
  const state = async () => decodePartitionState((await s.store.get(keys.partitionState(topic.topicId, 0)))!);
  const send = (body: Uint8Array) => s.http('POST', '/v1/topics/t/partitions/0/batches', body, BATCH);
  const history = (producerId: number) =>
    s.store.dump().filter((i) => i.pk === pk && i.sk.startsWith(`S#${producerId}#`));
  const newProducer = async (): Promise<number> => (await s.http('POST', '/v1/producers')).body.producerId;
  return { ...s, topic, pk, state, send, history, newProducer };
};

describe('idempotent producer history', () => {
  it('writes one item per producer epoch per pass and finds every batch that left the tail', async () => {
    const s = await setup();
    const p = await s.newProducer();
    const q = await s.newProducer();
    // p sends batches of 3 sequences, several per pass, interleaved with q's single-record batches.
    const sent: { body: Uint8Array; baseOffset: number }[] = [];
    let pSeq = 0;
    let qSeq = 0;
    for (let round = 0; round < 10; round++) {
      for (let k = 0; k < (round % 3) + 1; k++) {
        const body = batchOf(`p${pSeq}`, 3, { id: p, epoch: 0, seq: pSeq });
        pSeq += 3;
        const r = await s.send(body);
        expect(r.status).toBe(200);
        sent.push({ body, baseOffset: r.body.baseOffset });
      }
      const r = await s.send(batchOf(`q${qSeq}`, 1, { id: q, epoch: 0, seq: qSeq++ }));
      expect(r.status).toBe(200);
    }
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    const state = await s.state();
    expect(state.tail).toEqual([]);
    const end = state.nextOffset;
    expect(end).toBe(sent.length * 3 + 10);

    // One item per pass that held a batch of p, keyed by the pass's end, listing p's batches of the pass.
    const items = s.history(p);
    expect(items.length).toBeGreaterThan(1);
    expect(items.length).toBeLessThan(sent.length);
    let passStart = 0;
    for (const item of items) {
      const passEnd = Number(item.sk.split('#').at(-1));
      expect(item.sk).toBe(keys.producerBatches(s.topic.topicId, 0, p, 0, passEnd).sk);
      for (const b of item['b'] as string[]) {
        const baseOffset = Number(b.split('|')[2]);
        expect(baseOffset).toBeGreaterThanOrEqual(passStart);
        expect(baseOffset).toBeLessThan(passEnd);
      }
      passStart = passEnd;
    }
    const listed = items.flatMap((i) => i['b'] as string[]);
    expect(listed).toEqual(sent.map((x, i) => `${i * 3}|${i * 3 + 2}|${x.baseOffset}`));

    // Every retried batch answers with its first and last offset and writes nothing.
    for (const { body, baseOffset } of sent) {
      const again = await s.send(body);
      expect(again.status).toBe(200);
      expect([again.body.baseOffset, again.body.lastOffset]).toEqual([baseOffset, baseOffset + 2]);
    }
    expect((await s.state()).nextOffset).toBe(end);
    // The same first sequence with another last sequence is not a duplicate.
    const forged = await s.send(batchOf('forged', 2, { id: p, epoch: 0, seq: 9 }));
    expect(forged.status).toBe(409);
    expect(forged.body.error.code).toBe('OUT_OF_ORDER_SEQUENCE_NUMBER');
  });

  it('is not misled by the history of an expired incarnation of the same producer epoch', async () => {
    const s = await setup();
    const p = await s.newProducer();
    for (let seq = 0; seq < 8; seq++) await s.send(batchOf(`old${seq}`, 1, { id: p, epoch: 0, seq }));
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    s.clock.time += 86_400_000 + 1;
    await s.sluice.maintenance.run();
    expect((await s.state()).producers).toEqual({});

    // The producer starts over at sequence 0 under the same epoch while its old items are still stored,
    // and its new batches fall into passes at other sequences than the old ones.
    await s.send(batchOf('plain', 1));
    const again: { body: Uint8Array; baseOffset: number }[] = [];
    for (let seq = 0; seq < 6; seq++) {
      const body = batchOf(`new${seq}`, 1, { id: p, epoch: 0, seq });
      again.push({ body, baseOffset: (await s.send(body)).body.baseOffset });
    }
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    expect(again.map((a) => a.baseOffset)).toEqual([9, 10, 11, 12, 13, 14]);
    for (const { body, baseOffset } of again) expect((await s.send(body)).body.baseOffset).toBe(baseOffset);
    expect((await s.state()).nextOffset).toBe(15);
  });

  it('finds a batch whose pass was also written, shorter, by a materializer that stalled', async () => {
    const s = await setup();
    const p = await s.newProducer();
    const sent: { body: Uint8Array; baseOffset: number }[] = [];
    const send = async (seq: number) => {
      const body = batchOf(`b${seq}`, 1, { id: p, epoch: 0, seq });
      sent.push({ body, baseOffset: (await s.send(body)).body.baseOffset });
    };
    for (let seq = 0; seq < 2; seq++) await send(seq);
    // A materializer reads the partition item now and stalls; the tail then grows and is indexed.
    const stateKey = keys.partitionState(s.topic.topicId, 0);
    const snapshot = (await s.store.get(stateKey, { consistent: true }))!;
    for (let seq = 2; seq < 7; seq++) await send(seq);
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    const stale: MetadataStore = Object.create(s.store, {
      get: { value: async (key: Item) => (key.sk === 'STATE' ? snapshot : s.store.get(key)) },
    });
    expect(await materializeTail(stale, s.topic.topicId, 0, options(s.clock.time))).toBe(0);
    expect(s.history(p).map((i) => (i['b'] as string[]).length)).toContain(2);
    for (const { body, baseOffset } of sent) expect((await s.send(body)).body.baseOffset).toBe(baseOffset);
    expect((await s.state()).nextOffset).toBe(7);
  });
});

const options = (now: number) => ({ now, producerExpirationMs: 86_400_000 });

describe('producer history items, directly', () => {
  const entry = (extra: Partial<TailEntry>): TailEntry => ({
    objectKey: dataObjectKey('T', 'x'),
    position: 0,
    sizeInBytes: 10,
    offsetCount: 2,
    recordCount: 2,
    maxTimestamp: 50,
    firstTimestamp: 40,
    ...extra,
  });

  it('leave out a transaction marker, though it carries its producer', () => {
    const moved = [
      { baseOffset: 0, entry: entry({ producerId: 7, producerEpoch: 0, baseSequence: 0, lastSequence: 1 }) },
      {
        baseOffset: 2,
        entry: entry({
          producerId: 7,
          producerEpoch: 0,
          offsetCount: 1,
          controlType: 'COMMIT',
          maxTimestamp: 60,
        }),
      },
    ];
    expect(producerHistoryItems('T', 0, moved, 3, 99)).toEqual([
      { ...keys.producerBatches('T', 0, 7, 0, 3), b: ['0|1|0'], t: [50], expiresAt: 99 },
    ]);
  });

  it('are read on from where the first page stopped', async () => {
    const store = new MemoryMetadataStore();
    // Six passes of producer 7 epoch 0, one batch each (sequence i at offset 10 * i).
    for (let i = 0; i < 6; i++)
      await store.put({
        ...keys.producerBatches('T', 0, 7, 0, 10 * i + 1),
        b: [`${i}|${i}|${10 * i}`],
        t: [i],
        expiresAt: 99,
      });
    const queries: QueryInput[] = [];
    const spy = Object.create(store, {
      query: { value: (input: QueryInput) => (queries.push(input), store.query(input)) },
    }) as MetadataStore;
    const found = await findMaterializedBatch(spy, 'T', 0, {
      producerId: 7,
      producerEpoch: 0,
      firstSequence: 0,
      lastSequence: 0,
    });
    expect(found).toEqual({ firstSequence: 0, lastSequence: 0, baseOffset: 0, maxTimestamp: 0 });
    // Newest first, 4 then up to 32 more: the second query goes on after the first's last item.
    expect(queries.map((q) => [q.limit, q.cursor !== undefined])).toEqual([
      [4, false],
      [32, true],
    ]);
  });
});
