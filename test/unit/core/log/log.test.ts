import { describe, expect, it, vi } from 'vitest';
import { encodeRecordBatch } from '../../../../protocol/record-batch/index.js';
import { keys } from '../../../../lib/core/keys.js';
import { pageEntries } from '../../../../lib/core/log/batch-index.js';
import { decodePartitionState } from '../../../../lib/core/log/partition-codec.js';
import { memorySluice } from '../../../support/log-support.js';

const batchOf = (values: string[], producer?: { id: number; epoch: number; seq: number }) =>
  encodeRecordBatch(
    values.map((v) => ({ key: null, value: new Uint8Array(Buffer.from(v)), timestamp: 1 })),
    producer ? { producerId: producer.id, producerEpoch: producer.epoch, baseSequence: producer.seq } : {},
  );
const BATCH = { 'content-type': 'application/vnd.kafka.record-batch' };

const setup = async (config = {}) => {
  const s = memorySluice({ tailFlushEntries: 4, ...config });
  expect((await s.http('POST', '/v1/topics', { name: 't', partitions: 2 })).status).toBe(201);
  const topic = await s.sluice.catalog.get('t');
  const state = async (p = 0) =>
    decodePartitionState((await s.store.get(keys.partitionState(topic.topicId, p)))!);
  return { ...s, topic, state };
};

describe('commits', () => {
  it('assigns dense offsets to 100 concurrent produces on one partition without reading first', async () => {
    const s = await setup({ tailFlushEntries: 1000 });
    await s.http('POST', '/v1/topics/t/records', { records: [{ value: 'warm', partition: 0 }] });
    const before = s.store.meter.read();
    const replies = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        s.http('POST', '/v1/topics/t/records', {
          records: [
            { value: `v${i}`, partition: 0 },
            { value: `w${i}`, partition: 0 },
          ],
        }),
      ),
    );
    const after = s.store.meter.read();
    expect(after.metadataReads - before.metadataReads).toBe(0);
    expect(after.metadataWrites - before.metadataWrites).toBe(100);
    const offsets = replies
      .flatMap((r) => r.body.results.map((x: { offset: number }) => x.offset))
      .sort((a, b) => a - b);
    expect(offsets).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    // Each request's two records are adjacent and in order.
    for (const r of replies) expect(r.body.results[1].offset).toBe(r.body.results[0].offset + 1);
    const fetched = await s.http('GET', '/v1/topics/t/partitions/0/records?offset=0&maxBytes=1000000');
    expect(fetched.body.records).toHaveLength(201);
    for (const r of replies) {
      const [a, b] = r.body.results;
      expect(fetched.body.records[a.offset].value).toMatch(/^v\d+$/);
      expect(fetched.body.records[b.offset].value).toBe(
        fetched.body.records[a.offset].value.replace('v', 'w'),
      );
    }
  });

  it('moves the tail into the batch index and reads across the boundary', async () => {
    const s = await setup();
    for (let i = 0; i < 30; i++) {
      await s.http('POST', '/v1/topics/t/records', {
        records: [{ value: `r${i}`, partition: 0, timestamp: 1000 + i }],
      });
    }
    const state = await s.state();
    expect(state.tail.length).toBeLessThan(4);
    expect(state.tailBase + state.tail.reduce((n, e) => n + e.offsetCount, 0)).toBe(30);
    const indexed = await s.store.query({
      pk: keys.partitionPk(s.topic.topicId, 0),
      sk: { beginsWith: 'B#' },
    });
    // One page per pass, holding an entry per produce.
    expect(indexed.items.flatMap(pageEntries).map((x) => x.baseOffset)).toEqual(
      Array.from({ length: state.tailBase }, (_, i) => i),
    );
    expect(indexed.items.length).toBeLessThan(state.tailBase / 2);
    for (const from of [0, 5, state.tailBase - 1, state.tailBase, 29]) {
      const page = await s.http('GET', `/v1/topics/t/partitions/0/records?offset=${from}`);
      expect(page.body.records.map((r: { value: string }) => r.value)).toEqual(
        Array.from({ length: 30 - from }, (_, i) => `r${from + i}`),
      );
    }
    for (const ts of [999, 1000, 1013, 1029]) {
      const at = await s.http('GET', `/v1/topics/t/partitions/0/offsets?at=${ts}`);
      expect(at.body).toEqual({ offset: Math.max(0, ts - 1000), timestamp: Math.max(1000, ts) });
    }
    expect((await s.http('GET', '/v1/topics/t/partitions/0/offsets?at=1030')).body.offset).toBeNull();
  });

  it('answers a retried producer batch with its original offset after it left the tail', async () => {
    const s = await setup();
    const { producerId } = (await s.http('POST', '/v1/producers')).body;
    const sent: Uint8Array[] = [];
    const answers: number[] = [];
    for (let seq = 0; seq < 12; seq++) {
      const b = batchOf([`p${seq}`], { id: producerId, epoch: 0, seq });
      sent.push(b);
      await s.http('POST', '/v1/topics/t/partitions/1/batches', batchOf(['other']), BATCH);
      answers.push((await s.http('POST', '/v1/topics/t/partitions/1/batches', b, BATCH)).body.baseOffset);
    }
    const state = await s.state(1);
    expect(state.tailBase).toBeGreaterThan(answers[8]!);
    // Kafka remembers a producer's last five batches; Sluice keeps every batch item until the producer
    // expires, so each retried batch answers with its first offset and writes nothing.
    for (let seq = 0; seq < 12; seq++) {
      const again = await s.http('POST', '/v1/topics/t/partitions/1/batches', sent[seq], BATCH);
      expect(again.status).toBe(200);
      expect(again.body.baseOffset).toBe(answers[seq]);
    }
    // The same first sequence with other contents is not a duplicate.
    const forged = batchOf(['p0', 'extra'], { id: producerId, epoch: 0, seq: 0 });
    const refused = await s.http('POST', '/v1/topics/t/partitions/1/batches', forged, BATCH);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('OUT_OF_ORDER_SEQUENCE_NUMBER');
    const state2 = await s.state(1);
    expect(state2.nextOffset).toBe(24);
    // The hot item carries no per-producer history.
    expect(JSON.stringify(state2).length).toBeLessThan(2500);
  });

  it('keeps an Idempotency-Key answering after its entry left the partition item', async () => {
    const s = await setup();
    const body = { records: [{ value: 'once', partition: 0 }] };
    const first = await s.http('POST', '/v1/topics/t/records', body, { 'idempotency-key': 'k1' });
    for (let i = 0; i < 10; i++)
      await s.http('POST', '/v1/topics/t/records', { records: [{ value: `x${i}`, partition: 0 }] });
    expect((await s.state()).idempotencyKeys).toEqual([]);
    const retry = await s.http('POST', '/v1/topics/t/records', body, { 'idempotency-key': 'k1' });
    expect(retry.body.results[0].offset).toBe(first.body.results[0].offset);
    expect((await s.state()).nextOffset).toBe(11);
  });

  it('refetches the leader epoch once when a commit is fenced, then succeeds', async () => {
    const s = await setup();
    await s.http('POST', '/v1/topics/t/records', { records: [{ value: 'a', partition: 0 }] });
    await s.store.update(keys.partitionState(s.topic.topicId, 0), [{ set: 'leaderEpoch', add: 1 }]);
    const r = await s.http('POST', '/v1/topics/t/records', { records: [{ value: 'b', partition: 0 }] });
    expect(r.status).toBe(200);
    expect(r.body.results[0].offset).toBe(1);
  });

  it('leaves no hole when the commit fails after the object was written, and the orphan is collected', async () => {
    const s = await setup();
    await s.http('POST', '/v1/topics/t/records', { records: [{ value: 'a', partition: 0 }] });
    const spy = vi.spyOn(s.store, 'update').mockRejectedValueOnce(new Error('network down'));
    const failed = await s.http('POST', '/v1/topics/t/records', {
      records: [{ value: 'lost', partition: 0 }],
    });
    spy.mockRestore();
    expect(failed.status).toBe(500);
    await s.http('POST', '/v1/topics/t/records', { records: [{ value: 'c', partition: 0 }] });
    const page = await s.http('GET', '/v1/topics/t/partitions/0/records?offset=0');
    expect(page.body.records.map((r: { offset: number; value: string }) => [r.offset, r.value])).toEqual([
      [0, 'a'],
      [1, 'c'],
    ]);
    expect(s.objects.keys()).toHaveLength(3);
    expect(await s.sluice.maintenance.collectOrphans(s.topic.topicId, 2)).toBe(0);
    s.clock.time += 16 * 60_000;
    expect(await s.sluice.maintenance.collectOrphans(s.topic.topicId, 2)).toBe(1);
    expect(s.objects.keys()).toHaveLength(2);
    expect((await s.http('GET', '/v1/topics/t/partitions/0/records?offset=0')).body.records).toHaveLength(2);
  });

  it('refuses to serve a stored batch whose bytes were corrupted', async () => {
    const s = await setup();
    await s.http('POST', '/v1/topics/t/records', { records: [{ value: 'precious', partition: 0 }] });
    const [key] = s.objects.keys();
    const body = await s.objects.get(key!);
    body[body.length - 2]! ^= 0x01;
    await s.objects.put(key!, body);
    const r = await s.http('GET', '/v1/topics/t/partitions/0/records?offset=0');
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe('KAFKA_STORAGE_ERROR');
  });

  it('expires idle producers in maintenance and keeps active ones', async () => {
    const s = await setup();
    const idle = (await s.http('POST', '/v1/producers')).body.producerId;
    const active = (await s.http('POST', '/v1/producers')).body.producerId;
    await s.http(
      'POST',
      '/v1/topics/t/partitions/0/batches',
      batchOf(['i'], { id: idle, epoch: 0, seq: 0 }),
      BATCH,
    );
    s.clock.time += 86_400_000 + 1;
    await s.http(
      'POST',
      '/v1/topics/t/partitions/0/batches',
      batchOf(['a'], { id: active, epoch: 0, seq: 0 }),
      BATCH,
    );
    await s.sluice.maintenance.run();
    const state = await s.state();
    expect(Object.keys(state.producers)).toEqual([String(active)]);
    expect(state.tail).toEqual([]);
  });

  it('purges a deleted topic’s items and objects', async () => {
    const s = await setup();
    await s.http('POST', '/v1/topics/t/records', {
      records: [
        { value: 'a', partition: 0 },
        { value: 'b', partition: 1 },
      ],
    });
    expect((await s.http('DELETE', '/v1/topics/t')).status).toBe(204);
    expect(s.objects.keys()).toEqual([]);
    expect(s.store.dump().filter((i) => i.pk.startsWith(`P#${s.topic.topicId}`))).toEqual([]);
  });
});

describe('retention', () => {
  it('drops batches past retention.ms from the start, advances logStartOffset and keeps ListOffsets exact', async () => {
    const s = await setup();
    await s.http('PATCH', '/v1/topics/t', { configs: { 'retention.ms': '60000' } });
    const now = s.clock.time;
    // Old records with out-of-order timestamps, then recent ones.
    const stamps = [now - 300_000, now - 100_000, now - 200_000, now - 90_000, now - 10, now - 5, now];
    for (const [i, ts] of stamps.entries()) {
      await s.http('POST', '/v1/topics/t/records', {
        records: [{ value: `r${i}`, partition: 0, timestamp: ts }],
      });
    }
    const report = await s.sluice.maintenance.run();
    expect(report.errors).toEqual([]);
    expect(report.batchesExpired).toBe(4);
    const state = await s.state();
    expect(state.logStartOffset).toBe(4);
    const gone = await s.http('GET', '/v1/topics/t/partitions/0/records?offset=0');
    expect(gone.status).toBe(416);
    expect(gone.body.logStartOffset).toBe(4);
    const kept = await s.http('GET', '/v1/topics/t/partitions/0/records?offset=4');
    expect(kept.body.records.map((r: { value: string }) => r.value)).toEqual(['r4', 'r5', 'r6']);
    expect((await s.http('GET', '/v1/topics/t/partitions/0/offsets?at=earliest')).body.offset).toBe(4);
    expect((await s.http('GET', `/v1/topics/t/partitions/0/offsets?at=${now - 400_000}`)).body.offset).toBe(
      4,
    );
    expect((await s.http('GET', `/v1/topics/t/partitions/0/offsets?at=${now - 6}`)).body.offset).toBe(5);
    // Newer batches keep the time index right after the reset.
    await s.http('POST', '/v1/topics/t/records', {
      records: [{ value: 'r7', partition: 0, timestamp: now - 7 }],
    });
    await s.sluice.maintenance.run();
    expect((await s.http('GET', `/v1/topics/t/partitions/0/offsets?at=${now - 8}`)).body.offset).toBe(5);
    await s.http('POST', '/v1/topics/t/records', {
      records: [{ value: 'r8', partition: 0, timestamp: now + 50 }],
    });
    await s.sluice.maintenance.run();
    expect((await s.http('GET', `/v1/topics/t/partitions/0/offsets?at=${now + 1}`)).body.offset).toBe(8);
    // Objects of expired batches go once the grace period is over.
    s.clock.time += 16 * 60_000;
    const before = s.objects.keys().length;
    await s.sluice.maintenance.collectOrphans(s.topic.topicId, 2);
    expect(s.objects.keys().length).toBe(before - 4);
  });

  it('keeps the log under retention.bytes, never removing the newest batches', async () => {
    const s = await setup();
    await s.http('PATCH', '/v1/topics/t', { configs: { 'retention.bytes': '500' } });
    for (let i = 0; i < 12; i++)
      await s.http('POST', '/v1/topics/t/records', { records: [{ value: 'x'.repeat(100), partition: 0 }] });
    await s.sluice.maintenance.run();
    const state = await s.state();
    expect(state.logStartOffset).toBeGreaterThan(6);
    expect(state.nextOffset).toBe(12);
    const page = await s.http('GET', `/v1/topics/t/partitions/0/records?offset=${state.logStartOffset}`);
    expect(page.body.records.length).toBe(12 - state.logStartOffset);
  });

  it('leaves compacted-only topics alone', async () => {
    const s = await setup();
    await s.http('PATCH', '/v1/topics/t', { configs: { 'cleanup.policy': 'compact', 'retention.ms': '1' } });
    await s.http('POST', '/v1/topics/t/records', { records: [{ value: 'a', partition: 0, timestamp: 1 }] });
    await s.sluice.maintenance.run();
    expect((await s.state()).logStartOffset).toBe(0);
  });
});
