/**
 * Transactions meet the log's maintenance: the cleaner (cleanup.policy=compact) never lets an aborted
 * or still-open transactional record shadow an older committed record of its key, drops aborted
 * records, keeps the markers; retention deletes the aborted-transactions index items (A#) that the
 * new log start leaves behind, and read_committed reads stay right through both.
 */
import { describe, expect, it } from 'vitest';
import { keys } from '../../../../lib/core/keys.js';
import { applyRetention } from '../../../../lib/core/log/retention.js';
import { rollSegment } from '../../../../lib/core/log/segments/roll.js';
import { logEntries, segmentEndOf } from '../../../../lib/core/log/segments/segment-index.js';
import { compactPartition } from '../../../../lib/core/log/compaction.js';
import { readPartitionState } from '../../../../lib/core/log/context.js';
import { effectiveConfig } from '../../../../lib/core/topics/configs.js';
import { SluiceClient } from '../../../../sdk/client.js';
import { routerFetch } from '../../../support/router-fetch.js';
import { setup } from '../../../support/compaction-support.js';
import { memorySluice } from '../../../support/log-support.js';

type Harness = Awaited<ReturnType<typeof setup>>;

const clientOf = (s: Harness) =>
  new SluiceClient({ url: 'http://sluice.invalid', fetch: routerFetch(s.sluice.router()) });

/** key=value of every record, in offset order, at this isolation level. */
const read = async (s: Harness, isolationLevel: 'read_committed' | 'read_uncommitted') => {
  const consumer = clientOf(s).consumer({ isolationLevel });
  const out: string[] = [];
  let offset = (await s.state()).logStartOffset;
  for (;;) {
    const batch = await consumer.fetch('t', 0, offset);
    out.push(
      ...batch.records.map((r) => `${Buffer.from(r.key!).toString()}=${Buffer.from(r.value!).toString()}`),
    );
    if (batch.nextOffset >= (batch.lastStableOffset ?? batch.highWatermark)) return out;
    offset = batch.nextOffset;
  }
};

const abortedItems = async (s: Harness) =>
  (await s.store.query({ pk: keys.partitionPk(s.topic.topicId, 0), sk: { beginsWith: keys.abortedPrefix } }))
    .items;

describe('compaction of a partition with transactions', () => {
  it('keeps the committed record an aborted one would have shadowed, and drops the aborted records', async () => {
    const s = await setup({ 'min.cleanable.dirty.ratio': '0.01' }, 1);
    const producer = clientOf(s).producer({ transactionalId: 'app' });
    await producer.initTransactions();
    await s.produce([['k1', 'v1']]);
    producer.beginTransaction();
    await producer.sendBatch('t', 0, [{ key: 'k1', value: 'aborted' }]);
    await producer.abortTransaction();
    producer.beginTransaction();
    await producer.sendBatch('t', 0, [{ key: 'k2', value: 'c2' }]);
    await producer.commitTransaction();
    await s.produce([['k3', 'x']]);
    await s.produce([['k3', 'y']]);
    expect((await s.state()).tailBase).toBeGreaterThan(5);
    expect(await abortedItems(s)).toHaveLength(1);
    const before = await read(s, 'read_committed');
    expect(before).toEqual(['k1=v1', 'k2=c2', 'k3=x', 'k3=y']);

    const result = await s.compact();
    expect(result.skipped).toBeUndefined();
    expect(await read(s, 'read_committed')).toEqual(['k1=v1', 'k2=c2', 'k3=y']);
    // The aborted record is gone from the log; read_uncommitted no longer sees it either.
    expect(await read(s, 'read_uncommitted')).toEqual(['k1=v1', 'k2=c2', 'k3=y']);
    // The markers stayed: the committed transaction's batch keeps its transactional bit, and a second
    // pass changes nothing.
    const again = await s.compact(s.clock.now(), { config: { 'min.cleanable.dirty.ratio': 0 } });
    expect(again.recordsRemoved).toBe(0);
    expect(await read(s, 'read_committed')).toEqual(['k1=v1', 'k2=c2', 'k3=y']);
  });

  it('keeps a marker whose key bytes a later record of the log repeats, and counts no marker as removed', async () => {
    const s = await setup({ 'min.cleanable.dirty.ratio': '0.01' }, 1);
    const producer = clientOf(s).producer({ transactionalId: 'app' });
    await producer.initTransactions();
    producer.beginTransaction();
    await producer.sendBatch('t', 0, [{ key: 'k1', value: 'aborted' }]);
    await producer.abortTransaction();
    // An ABORT marker's key is version 0 and type 0: four zero bytes, the key of this later record.
    expect(await s.produce([['\0\0\0\0', 'zero']])).toEqual([2]);
    await s.produce([['k3', 'x']]);
    await s.produce([['k3', 'y']]);
    const result = await s.compact();
    expect(result).toMatchObject({ entriesRewritten: 2, recordsRemoved: 2 });
    // The marker's entry is untouched: one record, as written.
    expect((await s.index()).map((e) => e.recordCount)).toEqual([0, 1, 1, 0, 1]);
    expect(await read(s, 'read_committed')).toEqual(['\0\0\0\0=zero', 'k3=y']);
  });

  it('cleans nothing at or past the last stable offset: an open transaction may still abort', async () => {
    const s = await setup({ 'min.cleanable.dirty.ratio': '0.01' }, 1);
    const producer = clientOf(s).producer({ transactionalId: 'app' });
    await producer.initTransactions();
    await s.produce([['k2', 'c2']]);
    producer.beginTransaction();
    await producer.sendBatch('t', 0, [{ key: 'k2', value: 'open' }]);
    await s.produce([['k4', 'a']]);
    await s.produce([['k4', 'b']]);
    const lso = (await clientOf(s).consumer({ isolationLevel: 'read_committed' }).fetch('t', 0, 0))
      .lastStableOffset;
    expect(lso).toBe(1);
    await s.compact();
    await producer.abortTransaction();
    expect(await read(s, 'read_committed')).toEqual(['k2=c2', 'k4=a', 'k4=b']);
    // Once ended, the range is cleanable: the aborted record goes, k2=c2 stays.
    await s.produce([['k5', 'z']]);
    await s.compact(s.clock.now(), { config: { 'min.cleanable.dirty.ratio': 0 } });
    expect(await read(s, 'read_committed')).toEqual(['k2=c2', 'k4=b', 'k5=z']);
    expect(await read(s, 'read_uncommitted')).toEqual(['k2=c2', 'k4=b', 'k5=z']);
  });
});

describe('retention of a partition with transactions', () => {
  it('deletes the aborted-index items the log start passed, and read_committed reads stay right', async () => {
    const s = await setup({ 'cleanup.policy': 'delete' }, 1);
    const producer = clientOf(s).producer({ transactionalId: 'app' });
    await producer.initTransactions();
    for (let t = 0; t < 3; t++) {
      producer.beginTransaction();
      await producer.sendBatch('t', 0, [{ key: `a${t}`, value: 'gone', timestamp: s.clock.now() }]);
      await producer.abortTransaction();
    }
    s.clock.time += 10_000;
    producer.beginTransaction();
    await producer.sendBatch('t', 0, [{ key: 'late', value: 'gone', timestamp: s.clock.now() }]);
    await producer.abortTransaction();
    producer.beginTransaction();
    await producer.sendBatch('t', 0, [{ key: 'c', value: 'kept', timestamp: s.clock.now() }]);
    await producer.commitTransaction();
    await s.produce([['p', '1']]);
    await s.produce([['p', '2']]);
    expect((await abortedItems(s)).map((i) => i.sk)).toEqual(
      [1, 3, 5, 7].map((o) => keys.abortedTransaction(s.topic.topicId, 0, o).sk),
    );
    // retention.ms passes the three early transactions (offsets 0-5), not the late one.
    const config = { ...effectiveConfig(s.topic.configs), 'retention.ms': 5_000 };
    const result = await applyRetention(s.store, s.topic.topicId, 0, config, s.clock.now());
    expect(result.logStartOffset).toBe(6);
    expect((await abortedItems(s)).map((i) => i.sk)).toEqual([
      keys.abortedTransaction(s.topic.topicId, 0, 7).sk,
    ]);
    expect(await read(s, 'read_committed')).toEqual(['c=kept', 'p=1', 'p=2']);
    expect(await read(s, 'read_uncommitted')).toEqual(['late=gone', 'c=kept', 'p=1', 'p=2']);
  });
});

describe('segment rolls of a partition with transactions', () => {
  it('keep markers and aborted runs: read_committed reads the same before and after the roll', async () => {
    const m = memorySluice({ tailFlushEntries: 1 }, { segmentStore: true });
    expect(
      (await m.http('POST', '/v1/topics', { name: 't', partitions: 1, configs: { 'segment.bytes': '400' } }))
        .status,
    ).toBe(201);
    const topic = await m.sluice.catalog.get('t');
    const client = new SluiceClient({ url: 'http://sluice.invalid', fetch: routerFetch(m.sluice.router()) });
    const producer = client.producer({ transactionalId: 'app' });
    const plain = client.producer();
    await producer.initTransactions();
    const expected: string[] = [];
    for (let t = 0; t < 8; t++) {
      producer.beginTransaction();
      await producer.sendBatch('t', 0, [{ value: `t${t}-a` }, { value: `t${t}-b` }]);
      await plain.sendBatch('t', 0, [{ value: `p${t}` }]);
      expected.push(`p${t}`);
      if (t % 2 === 0) await producer.abortTransaction();
      else {
        await producer.commitTransaction();
        expected.push(`t${t}-a`, `t${t}-b`);
      }
    }
    await plain.sendBatch('t', 0, [{ value: 'last' }]);
    expected.push('last');
    const readCommitted = async () => {
      const consumer = client.consumer({ isolationLevel: 'read_committed' });
      const out: string[] = [];
      for (let offset = 0; ;) {
        const batch = await consumer.fetch('t', 0, offset, { maxBytes: 1 });
        out.push(...batch.records.map((r) => Buffer.from(r.value!).toString()));
        if (batch.nextOffset >= batch.lastStableOffset!) return out;
        offset = batch.nextOffset;
      }
    };
    const before = await readCommitted();
    expect([...before].sort()).toEqual([...expected].sort());
    let rolled = 0;
    for (;;) {
      const result = await rollSegment({ ...m.sluice.log, segmentStore: m.segments! }, topic.topicId, 0, {
        'segment.bytes': 400,
        'segment.ms': 604_800_000,
      });
      if (!result.rolled) break;
      rolled++;
    }
    expect(rolled).toBeGreaterThan(2);
    expect(await readCommitted()).toEqual(before);
  });

  it('count a marker among the records of a segment chunk the cleaner rewrites', async () => {
    const m = memorySluice({ tailFlushEntries: 1 }, { segmentStore: true });
    const configs = {
      'segment.bytes': '100000',
      'cleanup.policy': 'compact',
      'min.cleanable.dirty.ratio': '0.01',
    };
    expect((await m.http('POST', '/v1/topics', { name: 't', partitions: 1, configs })).status).toBe(201);
    const topic = await m.sluice.catalog.get('t');
    const client = new SluiceClient({ url: 'http://sluice.invalid', fetch: routerFetch(m.sluice.router()) });
    const producer = client.producer({ transactionalId: 'app' });
    const plain = client.producer();
    await producer.initTransactions();
    // 0: k=a (aborted), 1: its ABORT marker, 2: k=b, 3: k=c, 4: k=d.
    producer.beginTransaction();
    await producer.sendBatch('t', 0, [{ key: 'k', value: 'a' }]);
    await producer.abortTransaction();
    for (const value of ['b', 'c', 'd']) await plain.sendBatch('t', 0, [{ key: 'k', value }]);
    const log = { ...m.sluice.log, segmentStore: m.segments! };
    await m.sluice.maintenance.indexTail(topic.topicId, 0);
    const rolled = await rollSegment(log, topic.topicId, 0, {
      'segment.bytes': 200,
      'segment.ms': 604_800_000,
    });
    // One segment of one chunk: the aborted batch and its marker.
    expect(rolled).toMatchObject({ rolled: { baseOffset: 0, end: 2, chunks: 1 } });
    const result = await compactPartition(
      log,
      topic.topicId,
      0,
      { ...effectiveConfig(topic.configs), 'min.cleanable.dirty.ratio': 0 },
      m.clock.now(),
    );
    expect(result).toMatchObject({ recordsRemoved: 3 });
    const state = await readPartitionState(m.store, topic, 0);
    const entries = [];
    for await (const x of logEntries(m.store, topic.topicId, 0, segmentEndOf(state), 0, state.tailBase))
      entries.push([x.baseOffset, x.entry.offsetCount, x.entry.recordCount]);
    // The chunk kept its marker: one record of two offsets.
    expect(entries).toEqual([
      [0, 2, 1],
      [2, 1, 0],
      [3, 1, 0],
      [4, 1, 1],
    ]);
  });
});
