/**
 * The produce path over replica stores (lib/core/log/produce.ts): which stores a write goes to for
 * acks=all and acks=1, what a failed or slow store write does before the commit (ISR shrink, election,
 * the store's own error), min.insync.replicas before and after the write, the commit deadline, a
 * request whose partitions fail apart, and the rewrite when the leadership moved before the commit.
 */
import { describe, expect, it } from 'vitest';
import { SluiceError } from '../../../../protocol/errors.js';
import { dataObjectKey, keys } from '../../../../lib/core/keys.js';
import { storageUnavailable } from '../../../../lib/ports/storage-errors.js';
import type { Cluster } from '../../../support/produce-support.js';
import {
  T0,
  batch,
  concat,
  metricPoints,
  produceCluster,
  records,
} from '../../../support/produce-support.js';

const STORAGE_MESSAGE = 'storage is unavailable; the request may or may not have taken effect';

const send = (c: Cluster, values: string[], acks: 'all' | '1' = 'all', partition = 0) =>
  c.sluice.producer.produce('t', { records: records(values, { partition }), acks });

/** Store writes fail for the stores in `down` (a set the test changes). */
const failing = (c: Cluster) => {
  const down = new Set<string>();
  c.onPut((id) => {
    if (down.has(id)) throw storageUnavailable(`store ${id}`);
  });
  return down;
};

/** The stores that hold object `key`. */
const holding = (c: Cluster, key: string) => c.raw.filter((s) => s.keys().includes(key)).map((s) => s.id);

/** Sets the partition item's fields as a controller would (an election, an ISR change). */
const setLeadership = (c: Cluster, changes: { leaderEpoch?: number; isr?: string[] }) =>
  c.store.update(
    keys.partitionState(c.topic.topicId, 0),
    Object.entries(changes).map(([set, value]) => ({ set, value })),
  );

describe('where a produce writes', () => {
  const threeLeaders = async () => {
    const c = await produceCluster({ stores: 3, replicationFactor: 3, partitions: 3 });
    const leaders = await Promise.all([0, 1, 2].map(async (p) => (await c.state(p)).leader));
    expect(new Set(leaders).size).toBe(3);
    const request = (acks: 'all' | '1') =>
      c.sluice.producer.produce('t', {
        records: [0, 1, 2, 0].flatMap((partition, i) => records([`v${i}`], { partition })),
        acks,
      });
    return { c, leaders, request };
  };
  const valuesIn = async (c: Cluster, store: string, key: string) =>
    (await c.stored(store, key)).flatMap((b) => b.records.map((r) => Buffer.from(r.value!).toString()));

  it('writes one object per partition to its leader alone with acks=1', async () => {
    const { c, leaders, request } = await threeLeaders();
    await request('1');
    expect(Object.values(c.objectKeys()).map((k) => k.length)).toEqual([1, 1, 1]);
    for (const p of [0, 1, 2]) {
      const [entry] = (await c.state(p)).tail;
      // Each partition's object is written once: under the id drawn for it (the topic drew id-1).
      expect(entry!.objectKey).toBe(dataObjectKey(c.topic.topicId, `id-${p + 2}`));
      expect(holding(c, entry!.objectKey)).toEqual([leaders[p]]);
      expect(await valuesIn(c, leaders[p]!, entry!.objectKey)).toEqual(p === 0 ? ['v0', 'v3'] : [`v${p}`]);
    }
    expect(c.commits()).toHaveLength(3);
  });

  it('writes one object per leadership to every ISR store with acks=all', async () => {
    const { c, request } = await threeLeaders();
    await request('all');
    expect(Object.values(c.objectKeys()).map((k) => k.length)).toEqual([3, 3, 3]);
    for (const p of [0, 1, 2]) {
      const [entry] = (await c.state(p)).tail;
      expect(holding(c, entry!.objectKey)).toEqual(['s0', 's1', 's2']);
      expect(await valuesIn(c, 's1', entry!.objectKey)).toEqual(p === 0 ? ['v0', 'v3'] : [`v${p}`]);
    }
    expect(c.commits()).toHaveLength(3);
  });

  it('checks min.insync.replicas after a failed write and again before writing the next request', async () => {
    const c = await produceCluster({
      stores: 3,
      replicationFactor: 3,
      configs: { 'min.insync.replicas': '2' },
    });
    const down = failing(c);
    const { leader, replicas } = await c.state();
    for (const s of replicas) if (s !== leader) down.add(s);
    await expect(send(c, ['a'])).rejects.toMatchObject({
      code: 'NOT_ENOUGH_REPLICAS',
      message: 'partition t-0 has 1 in-sync store(s) after a store failed; min.insync.replicas=2',
    });
    expect((await c.state()).isr).toEqual([leader]);
    const objects = c.objectKeys();
    for (const attempt of [
      () => send(c, ['b']),
      () => c.sluice.producer.produceBatches('t', 0, batch(['b']), 'all'),
    ]) {
      await expect(attempt()).rejects.toMatchObject({
        code: 'NOT_ENOUGH_REPLICAS',
        message: 'partition t-0 has 1 in-sync store(s); min.insync.replicas=2',
      });
    }
    expect(c.objectKeys()).toEqual(objects);
    expect(c.commits()).toHaveLength(0);
    // acks=1 needs the leader alone.
    expect(await send(c, ['c'], '1')).toMatchObject([{ partition: 0, offset: 0 }]);
  });
});

describe('a failed store write', () => {
  it('elects another leader, excluding every store that failed, and answers NOT_LEADER_OR_FOLLOWER', async () => {
    const c = await produceCluster({ stores: 3, replicationFactor: 3 });
    const down = failing(c);
    const { leader, replicas } = await c.state();
    const [follower, last] = replicas.filter((s) => s !== leader);
    down.add(leader).add(follower!);
    await expect(send(c, ['a'])).rejects.toMatchObject({
      code: 'NOT_LEADER_OR_FOLLOWER',
      message: `the leader store ${leader} of t-0 failed the write; a new leader was elected; retry`,
    });
    const after = await c.state();
    expect([after.leader, after.leaderEpoch, after.nextOffset]).toEqual([last, 1, 0]);
    down.clear();
    expect(await send(c, ['a'])).toMatchObject([{ partition: 0, offset: 0 }]);
    const [stored] = await c.stored(last!, (await c.state()).tail[0]!.objectKey);
    expect(stored!.header.partitionLeaderEpoch).toBe(1);
  });

  it('answers with the election’s error when the election itself fails', async () => {
    const c = await produceCluster({ stores: 2, replicationFactor: 2 });
    const down = failing(c);
    const { leader } = await c.state();
    down.add(leader);
    c.onMetadata((call, run) => {
      if (call.op === 'update' && call.actions!.some((a) => 'set' in a && a.set === 'leader'))
        return Promise.reject(storageUnavailable('metadata'));
      return run();
    });
    await expect(send(c, ['a'])).rejects.toMatchObject({
      code: 'NOT_LEADER_OR_FOLLOWER',
      message: `the leader store ${leader} of t-0 failed the write; ${STORAGE_MESSAGE}; retry`,
    });
    expect((await c.state()).leaderEpoch).toBe(0);
  });

  it('on a lone store answers with the store’s own error', async () => {
    const c = await produceCluster();
    failing(c).add('s0');
    const error = await send(c, ['a'], '1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SluiceError);
    expect(error).toMatchObject({ code: 'KAFKA_STORAGE_ERROR', message: STORAGE_MESSAGE, retriable: true });
    expect((await c.state()).nextOffset).toBe(0);
  });

  it('cuts off a follower slower than replica.lag.time.max.ms and commits without it', async () => {
    const c = await produceCluster({ stores: 3, replicationFactor: 3 });
    const { leader, replicas } = await c.state();
    const slow = replicas.find((s) => s !== leader)!;
    // The slow store answers after 300 ms of real time; the lag limit passes at once on the test clock.
    c.onPut((id) => (id === slow ? new Promise((r) => setTimeout(r, 300)) : undefined));
    expect(await send(c, ['a'])).toMatchObject([{ partition: 0, offset: 0 }]);
    const state = await c.state();
    expect(state.isr).toEqual(replicas.filter((s) => s !== slow));
    expect(state.logEndOffsets[slow]).toBe(0);
    expect(state.highWatermark).toBe(1);
  });
});

describe('the commit deadline', () => {
  it.each([
    [1_000, 'commits'],
    [1_001, 'refuses'],
  ])('after a write of %i ms with a 1000 ms deadline %s', async (ms, outcome) => {
    const c = await produceCluster();
    c.onPut(() => void (c.clock.time += ms));
    const producer = c.producerWith({ commitDeadlineMs: 1_000 });
    const produced = producer.produce('t', { records: records(['a']), acks: '1' });
    if (outcome === 'commits') {
      expect(await produced).toEqual([{ partition: 0, offset: 0, timestamp: T0 }]);
      return;
    }
    await expect(produced).rejects.toMatchObject({
      code: 'REQUEST_TIMED_OUT',
      message: 'the data of t-0 was written over 1000 ms ago and is not committed; retry',
    });
    expect(c.commits()).toHaveLength(0);
  });
});

describe('a request whose partitions fail apart', () => {
  const twoPartitions = async () => {
    const c = await produceCluster({ stores: 2, partitions: 2 });
    const leaders = [(await c.state(0)).leader, (await c.state(1)).leader];
    expect(new Set(leaders).size).toBe(2);
    const request = (idempotencyKey?: string) =>
      c.sluice.producer.produce('t', {
        records: [0, 1, 0].flatMap((partition, i) => records([`v${i}`], { partition })),
        acks: '1',
        ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
      });
    return { c, leaders, request };
  };

  it('answers each record of a failed partition with its error and the others with offsets', async () => {
    const { c, leaders, request } = await twoPartitions();
    failing(c).add(leaders[1]!);
    expect(await request()).toEqual([
      { partition: 0, offset: 0, timestamp: T0 },
      {
        partition: 1,
        error: { code: 'KAFKA_STORAGE_ERROR', message: STORAGE_MESSAGE, retriable: true },
      },
      { partition: 0, offset: 1, timestamp: T0 },
    ]);
  });

  it('answers a commit that fails with a foreign error as UNKNOWN_SERVER_ERROR, keeping the cause', async () => {
    const { c, request } = await twoPartitions();
    const cause = new Error('socket hang up');
    c.onMetadata((call, run) =>
      call.op === 'update' && call.key?.pk === keys.partitionState(c.topic.topicId, 1).pk
        ? Promise.reject(cause)
        : run(),
    );
    expect(await request()).toEqual([
      { partition: 0, offset: 0, timestamp: T0 },
      { partition: 1, error: { code: 'UNKNOWN_SERVER_ERROR', message: 'commit failed', retriable: false } },
      { partition: 0, offset: 1, timestamp: T0 },
    ]);
    const alone = await c.sluice.producer
      .produce('t', { records: records(['x'], { partition: 1 }), acks: '1' })
      .catch((e: unknown) => e);
    expect(alone).toMatchObject({ code: 'UNKNOWN_SERVER_ERROR', message: 'commit failed', cause });
  });

  it('counts in MessagesInPerSec and BytesInPerSec only the partition whose commit took effect', async () => {
    // Kills the mutants that count every partition's write or read an outcome a failed commit lacks.
    const { c } = await twoPartitions();
    c.onMetadata((call, run) =>
      call.op === 'update' && call.key?.pk === keys.partitionState(c.topic.topicId, 1).pk
        ? Promise.reject(new Error('socket hang up'))
        : run(),
    );
    const m = metricPoints();
    const sent = [0, 1, 0].flatMap((partition, i) => records([`v${i}`], { partition }));
    const results = await c
      .producerWith({ telemetry: m.telemetry })
      .produce('t', { records: sent, acks: '1' });
    expect(results.map((r) => 'error' in r)).toEqual([false, true, false]);
    const [entry] = (await c.state(0)).tail;
    expect(m.points).toEqual([
      ['MessagesInPerSec', 2, { topic: 't' }],
      ['BytesInPerSec', entry!.sizeInBytes, { topic: 't' }],
    ]);
  });

  it('answers a retry whose one new partition fails again with the original offsets and that error', async () => {
    const { c, leaders, request } = await twoPartitions();
    const down = failing(c);
    down.add(leaders[1]!);
    const first = await request('req-9');
    expect(first[0]).toEqual({ partition: 0, offset: 0, timestamp: T0 });
    c.clock.time += 1_000;
    expect(await request('req-9')).toEqual(first);
    down.clear();
    expect(await request('req-9')).toEqual([
      first[0],
      { partition: 1, offset: 0, timestamp: T0 + 1_000 },
      first[2],
    ]);
    expect([(await c.state(0)).nextOffset, (await c.state(1)).nextOffset]).toEqual([2, 1]);
  });
});

describe('a leadership that moved between the write and the commit', () => {
  /** RF 3; the first object write runs `change` (once). */
  const moved = async (change: (c: Cluster) => Promise<unknown>, acks: 'all' | '1' = 'all') => {
    const c = await produceCluster({ stores: 3, replicationFactor: 3 });
    let changed = false;
    const down = new Set<string>();
    c.onPut(async (id) => {
      if (down.has(id)) throw storageUnavailable(`store ${id}`);
      if (changed) return;
      changed = true;
      await change(c);
    });
    const { producerId } = await c.sluice.producer.initProducerId();
    const body = concat(
      batch(['a', 'b'], { producerId, producerEpoch: 0, baseSequence: 0 }),
      batch(['c'], { producerId, producerEpoch: 0, baseSequence: 2 }),
    );
    const produce = () => c.sluice.producer.produceBatches('t', 0, body, acks);
    return { c, down, body, produce };
  };

  it('writes both batches again, stamped with the new epoch, to the ISR, and commits them', async () => {
    const { c, body, produce } = await moved((c) => setLeadership(c, { leaderEpoch: 1 }));
    expect(await produce()).toMatchObject({ baseOffset: 0, lastOffset: 2 });
    const state = await c.state();
    const entry = state.tail[0]!;
    expect([entry.position, entry.sizeInBytes, entry.offsetCount, entry.recordCount]).toEqual([
      0,
      body.length,
      3,
      3,
    ]);
    expect(holding(c, entry.objectKey)).toEqual(['s0', 's1', 's2']);
    const rewritten = await c.stored(state.leader, entry.objectKey);
    expect(rewritten.map((b) => [b.header.partitionLeaderEpoch, b.records.length])).toEqual([
      [1, 2],
      [1, 1],
    ]);
    // The first object keeps its own epoch (it may still have been in flight to a slow store).
    const first = c.raw[0]!.keys().find((k) => k !== entry.objectKey)!;
    expect((await c.stored('s0', first)).map((b) => b.header.partitionLeaderEpoch)).toEqual([0, 0]);
    // One commit fenced by the new epoch, one that lands.
    expect(c.commits()).toHaveLength(2);
    expect(state.logEndOffsets).toEqual({ s0: 3, s1: 3, s2: 3 });
  });

  it('with acks=1 writes again to the leader alone', async () => {
    const { c, produce } = await moved((c) => setLeadership(c, { leaderEpoch: 1 }), '1');
    expect(await produce()).toMatchObject({ baseOffset: 0, lastOffset: 2 });
    const state = await c.state();
    expect(holding(c, state.tail[0]!.objectKey)).toEqual([state.leader]);
    expect(Object.values(c.objectKeys()).flat()).toHaveLength(2);
  });

  it('shrinks the ISR when a store fails the second write, and commits to the rest', async () => {
    const { c, down, produce } = await moved(async (c) => {
      await setLeadership(c, { leaderEpoch: 1 });
      down.add('s2');
    });
    expect(await produce()).toMatchObject({ baseOffset: 0, lastOffset: 2 });
    const state = await c.state();
    expect([state.isr, state.logEndOffsets, state.highWatermark]).toEqual([
      ['s0', 's1'],
      { s0: 3, s1: 3, s2: 0 },
      3,
    ]);
    expect(holding(c, state.tail[0]!.objectKey)).toEqual(['s0', 's1']);
    // The first object everywhere, the second where it was written: no third write.
    expect(Object.values(c.objectKeys()).map((k) => k.length)).toEqual([2, 2, 1]);
    // Fenced by the epoch, then (after the ISR shrink) committed: the rewrite's failure costs no commit.
    expect(c.commits()).toHaveLength(2);
  });

  it('writes again to a store that rejoined the ISR, so it holds what its LEO counts', async () => {
    const { c, down, produce } = await moved(async (c) => {
      down.delete('s2');
      await setLeadership(c, { isr: ['s0', 's1', 's2'] });
    });
    // The ISR was [s0, s1] when the write started.
    await setLeadership(c, { isr: ['s0', 's1'] });
    down.add('s2');
    await c.sluice.log.leadership.get(c.topic, 0, { fresh: true });
    expect(await produce()).toMatchObject({ baseOffset: 0, lastOffset: 2 });
    const state = await c.state();
    expect(state.isr).toEqual(['s0', 's1', 's2']);
    expect(holding(c, state.tail[0]!.objectKey)).toEqual(['s0', 's1', 's2']);
    expect(state.logEndOffsets).toEqual({ s0: 3, s1: 3, s2: 3 });
  });
  it.each([
    ['the first write', 1],
    ['the write again under a new epoch', 2],
  ])(
    'writes again to a store that failed %s and rejoined the ISR right after leaving it',
    async (_, failedWrite) => {
      const { c, produce } = await moved(() => Promise.resolve());
      let writes = 0;
      let bumped = false;
      c.onPut(async (id) => {
        if (failedWrite === 2 && !bumped) {
          bumped = true;
          await setLeadership(c, { leaderEpoch: 1 });
        }
        if (id === 's2' && ++writes === failedWrite) throw storageUnavailable('store s2');
      });
      let rejoined = false;
      c.onMetadata(async (call, run) => {
        const result = await run();
        const shrink = call.op === 'update' && call.actions!.some((a) => 'set' in a && a.set === 'isr');
        if (shrink && !rejoined) {
          rejoined = true;
          await setLeadership(c, { isr: ['s0', 's1', 's2'] });
        }
        return result;
      });
      expect(await produce()).toMatchObject({ baseOffset: 0, lastOffset: 2 });
      const state = await c.state();
      expect(rejoined).toBe(true);
      expect(state.isr).toEqual(['s0', 's1', 's2']);
      expect(holding(c, state.tail[0]!.objectKey)).toEqual(['s0', 's1', 's2']);
    },
  );
});
