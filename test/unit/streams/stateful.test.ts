import { describe, expect, it } from 'vitest';
import type { KTable, Windowed } from '../../../streams/index.js';
import {
  BufferConfig,
  Grouped,
  Materialized,
  Serdes,
  SessionWindows,
  StreamsBuilder,
  Suppressed,
  TimeWindows,
  TopologyTestDriver,
} from '../../../streams/index.js';

const S = Serdes.String();
type Row = [string | null, string | null, number];

const drive = async (
  builder: StreamsBuilder,
  inputs: [topic: string, key: string | null, value: string | null, ts: number][],
): Promise<{ rows: (topic: string) => Row[]; driver: TopologyTestDriver }> => {
  const driver = new TopologyTestDriver(builder.build(), { 'application.id': 'app' });
  for (const [topic, k, v, t] of inputs) await driver.createInputTopic(topic, S, S).pipeInput(k, v, t);
  return {
    driver,
    rows: (topic) =>
      driver
        .createOutputTopic(topic, S, S)
        .readRecordsToList()
        .map((r) => [r.key, r.value, r.timestamp]),
  };
};

const windowedOut = <V>(table: KTable<Windowed<string>, V>, topic: string, session = false): void =>
  table
    .toStream()
    .map((wk, v) => ({
      key: session ? `${wk.key}@${wk.window.start}-${wk.window.end}` : `${wk.key}@${wk.window.start}`,
      value: v === null ? null : String(v),
    }))
    .to(topic);

describe('aggregations of a grouped stream', () => {
  it('count, reduce and aggregate emit every update with the latest timestamp, skipping null keys and values', async () => {
    const builder = new StreamsBuilder();
    const grouped = builder.stream<string, string>('in').groupByKey();
    grouped.count(Materialized.as('counts')).toStream().mapValues(String).to('count');
    grouped
      .reduce((a, b) => `${a}|${b}`)
      .toStream()
      .to('reduce');
    grouped
      .aggregate(
        () => 100,
        (_k, v, agg) => agg + v.length,
        Materialized.as('lengths'),
      )
      .toStream()
      .mapValues(String)
      .to('aggregate');
    const { rows, driver } = await drive(builder, [
      ['in', 'a', 'x', 5],
      ['in', null, 'ignored', 6],
      ['in', 'a', 'yy', 3],
      ['in', 'b', null, 7],
      ['in', 'b', 'zzz', 8],
    ]);
    expect(rows('count')).toEqual([
      ['a', '1', 5],
      ['a', '2', 5],
      ['b', '1', 8],
    ]);
    expect(rows('reduce')).toEqual([
      ['a', 'x', 5],
      ['a', 'x|yy', 5],
      ['b', 'zzz', 8],
    ]);
    expect(rows('aggregate')).toEqual([
      ['a', '101', 5],
      ['a', '103', 5],
      ['b', '103', 8],
    ]);
    expect(driver.getKeyValueStore<string, number>('counts').all()).toEqual([
      { key: 'a', value: 2 },
      { key: 'b', value: 1 },
    ]);
    expect(driver.getKeyValueStore<string, number>('lengths').get('missing')).toBeNull();
    expect(() => driver.getKeyValueStore('nope')).toThrow(/no key-value store named nope/);
  });

  it('groupBy repartitions through <application.id>-<Grouped name>-repartition with the grouped serdes', async () => {
    const builder = new StreamsBuilder();
    builder
      .stream<string, string>('in')
      .groupBy(
        (_k, v) => v.length,
        Grouped.as<number, string>('by-length').withKeySerde(Serdes.JSON<number>()),
      )
      .count()
      .toStream()
      .map((k, v) => ({ key: String(k), value: String(v) }))
      .to('out');
    const { rows, driver } = await drive(builder, [
      ['in', 'k', 'ab', 1],
      ['in', 'k', 'cd', 2],
      ['in', 'k', 'e', 3],
    ]);
    expect(rows('out')).toEqual([
      ['2', '1', 1],
      ['2', '2', 2],
      ['1', '1', 3],
    ]);
    expect(driver.producedTopicNames()).toEqual(['app-by-length-repartition', 'out']);
    expect(
      driver.createOutputTopic('app-by-length-repartition', Serdes.JSON<number>(), S).readKeyValuesToList(),
    ).toEqual([
      { key: 2, value: 'ab' },
      { key: 2, value: 'cd' },
      { key: 1, value: 'e' },
    ]);
  });
});

describe('time windows', () => {
  it('tumbling windows: [start, end), a record at the end goes to the next window, late records past grace are dropped', async () => {
    const builder = new StreamsBuilder();
    windowedOut(
      builder
        .stream<string, string>('in')
        .groupByKey()
        .windowedBy(TimeWindows.ofSizeAndGrace(10, 5))
        .count(Materialized.as('w')),
      'out',
    );
    const { rows, driver } = await drive(builder, [
      ['in', 'a', '.', 1],
      ['in', 'a', '.', 10],
      ['in', 'a', '.', 4], // stream time 10, window [0,10) closes at 15: still open
      ['in', 'a', '.', 16],
      ['in', 'a', '.', 3], // stream time 16 ≥ 10 + 5: [0,10) closed, dropped
      ['in', 'a', '.', 9], // dropped too
      ['in', 'b', '.', 15],
    ]);
    expect(rows('out')).toEqual([
      ['a@0', '1', 1],
      ['a@10', '1', 10],
      ['a@0', '2', 4],
      ['a@10', '2', 16],
      ['b@10', '1', 15],
    ]);
    expect(driver.getWindowStore<string, number>('w').fetch('a', 0, 100)).toEqual([
      { windowStart: 0, value: 2 },
      { windowStart: 10, value: 2 },
    ]);
  });

  it('hopping windows: a record counts in every window that covers it', async () => {
    const builder = new StreamsBuilder();
    windowedOut(
      builder
        .stream<string, string>('in')
        .groupByKey()
        .windowedBy(TimeWindows.ofSizeWithNoGrace(10).advanceBy(5))
        .count(),
      'out',
    );
    const { rows } = await drive(builder, [
      ['in', 'a', '.', 3],
      ['in', 'a', '.', 12],
      ['in', 'a', '.', 14],
    ]);
    expect(rows('out')).toEqual([
      ['a@0', '1', 3],
      ['a@5', '1', 12],
      ['a@10', '1', 12],
      ['a@5', '2', 14],
      ['a@10', '2', 14],
    ]);
  });

  it('window specifications refuse sizes, advances and graces Kafka refuses', () => {
    expect(() => TimeWindows.ofSizeWithNoGrace(0)).toThrow(/positive/);
    expect(() => TimeWindows.ofSizeAndGrace(10, -1)).toThrow(/≥ 0/);
    expect(() => TimeWindows.ofSizeWithNoGrace(10).advanceBy(11)).toThrow(/must not exceed/);
    expect(TimeWindows.ofSizeWithNoGrace(10).advanceBy(4).windowsFor(9)).toEqual([
      { start: 0, end: 10 },
      { start: 4, end: 14 },
      { start: 8, end: 18 },
    ]);
  });

  it('suppress(untilWindowCloses) emits each window once, when stream time passes end + grace, in window-end then key order', async () => {
    const builder = new StreamsBuilder();
    windowedOut(
      builder
        .stream<string, string>('in')
        .groupByKey()
        .windowedBy(TimeWindows.ofSizeAndGrace(10, 2))
        .count()
        .suppress(Suppressed.untilWindowCloses(BufferConfig.unbounded())),
      'out',
    );
    const { driver } = await drive(builder, []);
    const input = driver.createInputTopic('in', S, S);
    const output = driver.createOutputTopic('out', S, S);
    const read = (): Row[] => output.readRecordsToList().map((r) => [r.key, r.value, r.timestamp]);
    await input.pipeInput('b', '.', 5);
    await input.pipeInput('a', '.', 1);
    await input.pipeInput('a', '.', 2);
    await input.pipeInput('a', '.', 11); // stream time 11 < 10 + 2: nothing yet
    expect(read()).toEqual([]);
    await input.pipeInput('a', '.', 8); // still within grace: counted, not emitted
    await input.pipeInput('c', '.', 12); // 12 ≥ 12: [0,10) closes
    expect(read()).toEqual([
      ['a@0', '3', 8],
      ['b@0', '1', 5],
    ]);
    await input.pipeInput('a', '.', 3); // late: dropped, emits nothing again
    await input.pipeInput('a', '.', 40);
    expect(read()).toEqual([
      ['a@10', '1', 11],
      ['c@10', '1', 12],
    ]);
  });

  it('suppress refuses a table that is not windowed', () => {
    const builder = new StreamsBuilder();
    const table = builder.stream<string, string>('in').groupByKey().count();
    expect(() => table.suppress(Suppressed.untilWindowCloses(BufferConfig.unbounded()))).toThrow(
      /windowed aggregation/,
    );
  });
});

describe('session windows', () => {
  it('merge sessions within the gap, retract merged sessions with tombstones, drop records of closed sessions', async () => {
    const builder = new StreamsBuilder();
    windowedOut(
      builder
        .stream<string, string>('in')
        .groupByKey()
        .windowedBy(SessionWindows.ofInactivityGapAndGrace(5, 10))
        .count(),
      'out',
      true,
    );
    const { rows } = await drive(builder, [
      ['in', 'a', '.', 0],
      ['in', 'a', '.', 3],
      ['in', 'a', '.', 20],
      ['in', 'a', '.', 10], // stream time 20, close 10: session [10,10] is not before it
      ['in', 'a', '.', 14],
      ['in', 'a', '.', 17], // bridges [10,14] and [20,20]
      ['in', 'a', '.', 2], // [0,3] ends before close time 10: dropped
    ]);
    expect(rows('out')).toEqual([
      ['a@0-0', '1', 0],
      ['a@0-0', null, 0],
      ['a@0-3', '2', 3],
      ['a@20-20', '1', 20],
      ['a@10-10', '1', 10],
      ['a@10-10', null, 10],
      ['a@10-14', '2', 14],
      ['a@10-14', null, 14],
      ['a@20-20', null, 20],
      ['a@10-20', '4', 20],
    ]);
  });

  it('session reduce merges with the reducer', async () => {
    const builder = new StreamsBuilder();
    windowedOut(
      builder
        .stream<string, string>('in')
        .groupByKey()
        .windowedBy(SessionWindows.ofInactivityGapWithNoGrace(5))
        .reduce((a, b) => a + b),
      'out',
      true,
    );
    const { rows } = await drive(builder, [
      ['in', 'a', 'x', 0],
      ['in', 'a', 'y', 10],
      ['in', 'a', 'z', 5],
    ]);
    expect(rows('out').filter((r) => r[1] !== null)).toEqual([
      ['a@0-0', 'x', 0],
      ['a@10-10', 'y', 10],
      ['a@0-10', 'xyz', 10],
    ]);
  });
});
