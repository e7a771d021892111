/**
 * WriteTxnMarkers: the COMMIT/ABORT control batch the coordinator writes into every partition of a
 * transaction. Written once however often it is retried (also by two coordinators at once), never into
 * a deleted topic, closing a transaction whose batch landed while the marker was on its way, catching a
 * lagging follower up first, and giving up with COORDINATOR_NOT_AVAILABLE on a partition that keeps racing.
 */
import { describe, expect, it } from 'vitest';
import { keys } from '../../../../lib/core/keys.js';
import type { LogContext } from '../../../../lib/core/log/context.js';
import type { Marker } from '../../../../lib/core/transactions/markers.js';
import { writeMarker, writeMarkers } from '../../../../lib/core/transactions/markers.js';
import type { ProducerIdAndEpoch } from '../../../../lib/core/transactions/index.js';
import { ConditionFailedError } from '../../../../lib/ports/metadata-store.js';
import { SluiceError } from '../../../../protocol/errors.js';
import { batch, produceCluster } from '../../../support/produce-support.js';
import type { ClusterOptions } from '../../../support/produce-support.js';

const t0 = { topic: 't', partition: 0 };
const t1 = { topic: 't', partition: 1 };
const u0 = { topic: 'u', partition: 0 };

const commit = (producerEpoch: number, extra: Partial<Marker> = {}): Marker => ({
  type: 'COMMIT',
  producerId: 0,
  producerEpoch,
  ...extra,
});

const failure = (p: Promise<unknown>) =>
  p.then(
    (v) => ({ ok: v }),
    (e: unknown) => (e instanceof SluiceError ? { code: e.code, message: e.message } : { thrown: String(e) }),
  );

const setup = async (options: ClusterOptions = {}) => {
  const c = await produceCluster({ partitions: 2, ...options });
  const u = await c.sluice.catalog.create({ name: 'u', partitions: 1, replicationFactor: 1, configs: {} });
  const tc = c.sluice.transactions;
  const ctx: LogContext = c.sluice.log;
  const produce = (topic: string, partition: number, values: string[], p: ProducerIdAndEpoch, seq = 0) =>
    c.sluice.producer.produceBatches(
      topic,
      partition,
      batch(values, { ...p, baseSequence: seq, isTransactional: true }),
      'all',
    );
  const read = async (topic: string, partition: number) => {
    const f = await c.sluice.fetcher.fetchRecords(topic, partition, {
      offset: 0,
      maxBytes: 1 << 20,
      maxWaitMs: 0,
      isolationLevel: 'read_committed',
    });
    return {
      values: f.records.map((r) => Buffer.from(r.value!).toString()),
      lso: f.lastStableOffset,
      hw: f.highWatermark,
    };
  };
  /** A transaction of producer 0 (epoch 0) with a batch in t-0 and u-0, t-1 added but not written. */
  const open = async () => {
    const p = await tc.initProducerId('app', 60_000);
    await tc.addPartitions('app', p, [t0, t1, u0]);
    await produce('t', 0, ['a'], p);
    await produce('u', 0, ['b'], p);
    return p;
  };
  const isMarkerUpdate = (call: { op: string; key?: { sk: string }; actions?: readonly unknown[] }) =>
    call.op === 'update' &&
    call.key?.sk === 'STATE' &&
    (call.actions ?? []).some((a) => (a as { set?: unknown }).set === 'tail');
  return { ...c, u, tc, ctx, produce, read, open, isMarkerUpdate };
};

describe('writeMarkers', () => {
  it('writes the marker into every partition once; written again it is already there', async () => {
    const s = await setup();
    await s.open();
    expect(await writeMarkers(s.ctx, [t0, t1, u0], commit(1))).toEqual(['written', 'written', 'written']);
    expect(await writeMarkers(s.ctx, [t0, t1, u0], commit(1))).toEqual(['already', 'already', 'already']);
    // A marker of an older epoch (a coordinator far behind) changes nothing either.
    expect(await writeMarkers(s.ctx, [t0, t1], commit(0))).toEqual(['already', 'already']);
    expect(await s.read('t', 0)).toEqual({ values: ['a'], lso: 2, hw: 2 });
    expect(await s.read('t', 1)).toEqual({ values: [], lso: 1, hw: 1 });
    expect(await s.read('u', 0)).toEqual({ values: ['b'], lso: 2, hw: 2 });
  });

  it('lets every partition settle before it throws the first failure', async () => {
    const s = await setup();
    await s.open();
    const ctx: LogContext = {
      ...s.ctx,
      catalog: Object.assign(Object.create(s.ctx.catalog) as LogContext['catalog'], {
        get: async (name: string) => {
          if (name === 'u') throw new Error('catalog down');
          return s.ctx.catalog.get(name);
        },
      }),
    };
    expect(await failure(writeMarkers(ctx, [u0, t0], commit(1)))).toEqual({ thrown: 'Error: catalog down' });
    expect((await s.read('t', 0)).lso).toBe(2);
    expect((await s.read('u', 0)).lso).toBe(0);
  });

  it('a partition the producer never wrote to costs one conditional update', async () => {
    const s = await setup();
    await s.open();
    const before = s.calls.filter((c) => c.op === 'update').length;
    expect(await writeMarker(s.ctx, t1, commit(1))).toBe('written');
    expect(s.calls.filter((c) => c.op === 'update').length - before).toBe(1);
  });
});

describe('a marker for a topic that is gone', () => {
  it('unknown to the catalog: topic-gone; any other catalog failure is thrown', async () => {
    const s = await setup();
    expect(await writeMarker(s.ctx, { topic: 'nope', partition: 0 }, commit(1))).toBe('topic-gone');
    const failing = (error: Error): LogContext => ({
      ...s.ctx,
      catalog: Object.assign(Object.create(s.ctx.catalog) as LogContext['catalog'], {
        get: () => Promise.reject(error),
      }),
    });
    expect(
      await failure(
        writeMarker(failing(new SluiceError('COORDINATOR_NOT_AVAILABLE', 'registry busy')), t0, commit(1)),
      ),
    ).toEqual({ code: 'COORDINATOR_NOT_AVAILABLE', message: 'registry busy' });
    expect(await failure(writeMarker(failing(new Error('boom')), t0, commit(1)))).toEqual({
      thrown: 'Error: boom',
    });
    // A partition the topic does not have is a request error, not a deleted topic.
    expect(await failure(writeMarker(s.ctx, { topic: 't', partition: 5 }, commit(1)))).toMatchObject({
      code: 'UNKNOWN_TOPIC_OR_PARTITION',
    });
  });

  it('partition item gone (topic deleted after the catalog was read): topic-gone', async () => {
    const s = await setup();
    await s.open();
    await s.store.delete(keys.partitionState(s.u.topicId, 0));
    expect(await writeMarker(s.ctx, u0, commit(1))).toBe('topic-gone');
  });

  it('deleted or purged between the read and the write: topic-gone, nothing written', async () => {
    for (const how of ['marked', 'purged'] as const) {
      const s = await setup();
      await s.open();
      const key = keys.partitionState(s.topic.topicId, 0);
      s.onMetadata(async (call, run) => {
        if (s.isMarkerUpdate(call)) {
          if (how === 'marked') await s.store.update(key, [{ set: 'deleted', value: true }]);
          else await s.store.delete(key);
        }
        return run();
      });
      expect(await writeMarker(s.ctx, t0, commit(1))).toBe('topic-gone');
      const item = await s.store.get(key);
      if (how === 'marked') expect(item?.['nextOffset']).toBe(1);
      else expect(item).toBeUndefined();
    }
  });
});

describe('a marker racing other writers of the partition', () => {
  it('two coordinators writing the same marker at once write it once', async () => {
    const s = await setup();
    await s.open();
    for (const tp of [t0, t1]) {
      const outcomes = await Promise.all([
        writeMarker(s.ctx, tp, commit(1)),
        writeMarker(s.ctx, tp, commit(1)),
      ]);
      expect(outcomes.sort()).toEqual(['already', 'written']);
    }
    expect(await s.read('t', 0)).toEqual({ values: ['a'], lso: 2, hw: 2 });
    expect(await s.read('t', 1)).toEqual({ values: [], lso: 1, hw: 1 });
  });

  it('under transaction version 1 too (one epoch, the transaction number tells markers apart)', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    await s.tc.addPartitions('app', p, [t0]);
    await s.produce('t', 0, ['a'], p);
    expect(await s.tc.endTxn('app', p, true, 1)).toEqual(p);
    // The second transaction adds the partition but writes nothing there: only the producer's state
    // (epoch, sequence, transaction number) tells the two markers apart.
    await s.tc.addPartitions('app', p, [t0]);
    const second = commit(0, { transactionNumber: 2 });
    const outcomes = await Promise.all([writeMarker(s.ctx, t0, second), writeMarker(s.ctx, t0, second)]);
    expect(outcomes.sort()).toEqual(['already', 'written']);
    expect(await s.read('t', 0)).toEqual({ values: ['a'], lso: 3, hw: 3 });
  });

  it('a batch of the transaction that lands while its ABORT marker is on the way is closed by it', async () => {
    const s = await setup();
    const p = await s.open();
    let raced = false;
    s.onMetadata(async (call, run) => {
      if (s.isMarkerUpdate(call) && !raced) {
        raced = true;
        // Verified while the transaction was open, the batch commits just before the marker.
        await s.produce('t', 1, ['late'], p);
      }
      return run();
    });
    expect(await writeMarker(s.ctx, t1, { type: 'ABORT', producerId: 0, producerEpoch: 1 })).toBe('written');
    expect(raced).toBe(true);
    expect(await s.read('t', 1)).toEqual({ values: [], lso: 2, hw: 2 });
  });

  it('another failure of the write is thrown; a conflict is read again and retried', async () => {
    const s = await setup();
    await s.open();
    let n = 0;
    s.onMetadata(async (call, run) => {
      if (s.isMarkerUpdate(call) && n++ === 0) throw new Error('store down');
      return run();
    });
    expect(await failure(writeMarker(s.ctx, t0, commit(1)))).toEqual({ thrown: 'Error: store down' });
    const current = await s.store.get(keys.partitionState(s.topic.topicId, 0));
    let conflicts = 0;
    s.onMetadata(async (call, run) => {
      if (s.isMarkerUpdate(call) && conflicts++ === 0) throw new ConditionFailedError(current);
      return run();
    });
    expect(await writeMarker(s.ctx, t0, commit(1))).toBe('written');
    expect(conflicts).toBe(2);
  });

  it('gives up after six attempts on a partition that keeps racing', async () => {
    const s = await setup();
    await s.open();
    const current = await s.store.get(keys.partitionState(s.topic.topicId, 0));
    let attempts = 0;
    s.onMetadata(async (call, run) => {
      if (s.isMarkerUpdate(call)) {
        attempts++;
        throw new ConditionFailedError(current);
      }
      return run();
    });
    expect(await failure(writeMarker(s.ctx, t0, commit(1)))).toEqual({
      code: 'COORDINATOR_NOT_AVAILABLE',
      message: 'the COMMIT marker of producer 0 on t-0 kept racing; retry',
    });
    expect(attempts).toBe(6);
  });

  it('catches a lagging follower up before it writes (acks=all)', async () => {
    const s = await setup({ stores: 2, replicationFactor: 2 });
    const p = await s.tc.initProducerId('app', 60_000);
    await s.tc.addPartitions('app', p, [t0]);
    await s.sluice.producer.produceBatches(
      't',
      0,
      batch(['a'], { ...p, baseSequence: 0, isTransactional: true }),
      '1',
    );
    const before = await s.state(0);
    expect(Object.values(before.logEndOffsets).sort()).toEqual([0, 1]);
    expect(await writeMarker(s.ctx, t0, commit(1))).toBe('written');
    const after = await s.state(0);
    expect(Object.values(after.logEndOffsets)).toEqual([2, 2]);
    expect(await s.read('t', 0)).toMatchObject({ values: ['a'], lso: 2 });
  });
});

describe('a marker of a transaction that ends with an epoch bump (transaction version 2)', () => {
  it('leaves no transaction number on the partition: the epoch tells its markers apart', async () => {
    const s = await setup();
    const p = await s.open();
    const before = s.calls.length;
    expect(await s.tc.endTxn('app', p, true)).toEqual({ producerId: 0, producerEpoch: 1 });
    for (const partition of [0, 1]) {
      const state = await s.state(partition);
      // Kills complete() tagging every marker with the transaction number (transactionVersion === 1 → true).
      expect(state.lastMarkedTransactions).toStrictEqual({});
      expect(state.producers['0']?.producerEpoch).toBe(1);
    }
    // Every action of the three marker updates carries a value (DynamoDB cannot marshal an undefined
    // one; the memory store would take it as a remove). Kills recording the absent transaction
    // number (number !== undefined → true).
    const markers = s.calls.slice(before).filter(s.isMarkerUpdate);
    expect(markers).toHaveLength(3);
    for (const call of markers)
      expect(call.actions!.filter((a) => 'value' in a && a.value === undefined)).toEqual([]);
  });

  it('closes a transaction whose next batch lands while the marker is on its way, in one update', async () => {
    const s = await setup();
    const p = await s.open();
    let raced = false;
    s.onMetadata(async (call, run) => {
      if (s.isMarkerUpdate(call) && !raced) {
        raced = true;
        // A second batch of the open transaction: the producer's sequence moves, the transaction's
        // first offset here does not, so the marker's condition still holds.
        await s.produce('t', 0, ['a2'], p, 1);
      }
      return run();
    });
    const before = s.calls.filter(s.isMarkerUpdate).length;
    expect(await writeMarker(s.ctx, t0, commit(1))).toBe('written');
    expect(raced).toBe(true);
    // The batch's commit and the marker's one update. Kills the version-1 condition (producer epoch
    // and sequence as read) used for a version-2 marker (number === undefined → false): a third.
    expect(s.calls.filter(s.isMarkerUpdate).length - before).toBe(2);
    expect(await s.read('t', 0)).toEqual({ values: ['a', 'a2'], lso: 3, hw: 3 });
  });
});

describe('a marker whose write keeps failing', () => {
  it('a topic deleted before the last attempt is topic-gone, not COORDINATOR_NOT_AVAILABLE', async () => {
    const s = await setup();
    await s.open();
    const key = keys.partitionState(s.topic.topicId, 0);
    const current = await s.store.get(key);
    let attempts = 0;
    s.onMetadata(async (call, run) => {
      if (s.isMarkerUpdate(call) && ++attempts < 6) throw new ConditionFailedError(current);
      if (s.isMarkerUpdate(call)) await s.store.update(key, [{ set: 'deleted', value: true }]);
      return run();
    });
    expect(await writeMarker(s.ctx, t0, commit(1))).toBe('topic-gone');
    expect(attempts).toBe(6);
  });

  it('a conflict that is not a lagging follower is read again, with no replication pass', async () => {
    const s = await setup();
    await s.open();
    const current = await s.store.get(keys.partitionState(s.topic.topicId, 0));
    let conflicts = 0;
    s.onMetadata(async (call, run) => {
      if (s.isMarkerUpdate(call) && conflicts++ < 2) throw new ConditionFailedError(current);
      return run();
    });
    const stateReads = () =>
      s.calls.filter((c) => c.op === 'get' && c.key?.pk === keys.partitionState(s.topic.topicId, 0).pk)
        .length;
    const before = stateReads();
    expect(await writeMarker(s.ctx, t0, commit(1))).toBe('written');
    // Three attempts, three reads of the partition: kills replicating on any conflict
    // (failure === 'lagging' → true), whose pass reads the partition once more each time.
    expect(stateReads() - before).toBe(3);
  });
});
