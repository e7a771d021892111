import { describe, expect, it } from 'vitest';
import { KeyValue, Named, Serdes, StreamsBuilder, TopologyTestDriver } from '../../../streams/index.js';
import type { KStream, Topology } from '../../../streams/index.js';

const S = Serdes.String();

const run = async (
  build: (input: KStream<string, string>, builder: StreamsBuilder) => void,
  records: [string | null, string | null, number][],
  outputs: string[] = ['out'],
): Promise<Record<string, [string | null, string | null, number][]>> => {
  const builder = new StreamsBuilder();
  build(builder.stream<string, string>('in'), builder);
  const driver = new TopologyTestDriver(builder.build());
  const input = driver.createInputTopic('in', S, S);
  for (const [k, v, t] of records) await input.pipeInput(k, v, t);
  return Object.fromEntries(
    outputs.map((o) => [
      o,
      driver
        .createOutputTopic(o, S, S)
        .readRecordsToList()
        .map((r) => [r.key, r.value, r.timestamp]),
    ]),
  );
};

describe('KStream stateless operations', () => {
  it('filter and filterNot keep complementary records in input order', async () => {
    const out = await run(
      (s) => {
        s.filter((_k, v) => v.startsWith('a')).to('out');
        s.filterNot((_k, v) => v.startsWith('a')).to('rest');
      },
      [
        ['k1', 'apple', 1],
        ['k2', 'pear', 2],
        ['k3', 'avocado', 3],
      ],
      ['out', 'rest'],
    );
    expect(out).toEqual({
      out: [
        ['k1', 'apple', 1],
        ['k3', 'avocado', 3],
      ],
      rest: [['k2', 'pear', 2]],
    });
  });

  it('map, mapValues (value first, key second), selectKey and flatMap keep the record timestamp', async () => {
    const out = await run(
      (s) => {
        s.map((k, v) => KeyValue.pair(v, k)).to('out');
        s.mapValues((v, k) => `${k}:${v.length}`).to('lengths');
        s.selectKey((_k, v) => v.slice(0, 1)).to('initials');
        s.flatMap((k, v) => [...v].map((c, i) => KeyValue.pair(`${k}${i}`, c))).to('chars');
      },
      [['a', 'xy', 10]],
      ['out', 'lengths', 'initials', 'chars'],
    );
    expect(out).toEqual({
      out: [['xy', 'a', 10]],
      lengths: [['a', 'a:2', 10]],
      initials: [['x', 'xy', 10]],
      chars: [
        ['a0', 'x', 10],
        ['a1', 'y', 10],
      ],
    });
  });

  it('split routes each record to the first matching branch, the rest to the default branch', async () => {
    const out = await run(
      (s) => {
        const branches = s
          .split(Named.as('size-'))
          .branch((_k, v) => v.length > 5, { name: 'long' })
          .branch((_k, v) => v.length > 2, { name: 'mid' })
          .defaultBranch({ name: 'short' });
        expect(Object.keys(branches)).toEqual(['size-long', 'size-mid', 'size-short']);
        branches['size-long']?.to('long');
        branches['size-mid']?.to('mid');
        branches['size-short']?.to('short');
      },
      [
        ['1', 'abcdefg', 1],
        ['2', 'abc', 2],
        ['3', 'a', 3],
        ['4', 'abcdef', 4],
      ],
      ['long', 'mid', 'short'],
    );
    expect(out).toEqual({
      long: [
        ['1', 'abcdefg', 1],
        ['4', 'abcdef', 4],
      ],
      mid: [['2', 'abc', 2]],
      short: [['3', 'a', 3]],
    });
  });

  it('split without a default branch drops unmatched records; branch names default to indexes', async () => {
    const out = await run(
      (s) => {
        const b = s
          .split()
          .branch((k) => k === 'x')
          .noDefaultBranch();
        expect(Object.keys(b)).toEqual(['1']);
        b['1']?.to('out');
      },
      [
        ['x', '1', 1],
        ['y', '2', 2],
        ['x', '3', 3],
      ],
    );
    expect(out.out).toEqual([
      ['x', '1', 1],
      ['x', '3', 3],
    ]);
  });

  it('merge interleaves two streams in processing order; peek and foreach see every record once', async () => {
    const seen: string[] = [];
    const builder = new StreamsBuilder();
    const a = builder.stream<string, string>('a');
    const b = builder.stream<string, string>('b').peek((k) => seen.push(`peek ${k}`));
    a.merge(b).to('out');
    b.foreach((k, v) => seen.push(`foreach ${k}=${v}`));
    const driver = new TopologyTestDriver(builder.build());
    const [ia, ib] = [driver.createInputTopic('a', S, S), driver.createInputTopic('b', S, S)];
    await ia.pipeInput('a1', '1', 1);
    await ib.pipeInput('b1', '2', 2);
    await ia.pipeInput('a2', '3', 3);
    expect(driver.createOutputTopic('out', S, S).readKeyValuesToList()).toEqual([
      { key: 'a1', value: '1' },
      { key: 'b1', value: '2' },
      { key: 'a2', value: '3' },
    ]);
    expect(seen).toEqual(['peek b1', 'foreach b1=2']);
  });

  it('flatMapValues may emit nothing; tombstones reach the mappers as null values', async () => {
    const out = await run(
      (s) => {
        s.flatMapValues((v) => (v === null || v === '' ? [] : v.split(','))).to('out');
        s.filter((_k, v) => v === null).to('tombstones');
      },
      [
        ['k', 'a,b', 1],
        ['k', '', 2],
        ['k', null, 3],
        ['k', 'c', 4],
      ],
      ['out', 'tombstones'],
    );
    expect(out).toEqual({
      out: [
        ['k', 'a', 1],
        ['k', 'b', 1],
        ['k', 'c', 4],
      ],
      tombstones: [['k', null, 3]],
    });
  });
});

describe('the topology', () => {
  it('splits into sub-topologies at repartition topics and names nodes as Kafka Streams does', () => {
    const builder = new StreamsBuilder();
    builder
      .stream<string, string>('in')
      .selectKey((_k, v) => v)
      .groupByKey()
      .count()
      .toStream()
      .mapValues(String)
      .to('out');
    const topology: Topology = builder.build();
    expect(topology.subTopologies.map((s) => s.sources.map((t) => t.name))).toEqual([
      ['in'],
      ['KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition'],
    ]);
    expect(topology.internalTopics()).toEqual(['KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition']);
    expect(topology.describe().split('\n').slice(0, 4)).toEqual([
      'Topologies:',
      '   Sub-topology: 0',
      '    Source: KSTREAM-SOURCE-0000000000 (topics: [in])',
      '      --> KSTREAM-KEY-SELECT-0000000001',
    ]);
  });

  it('refuses invalid topic names and duplicate store names before running anything', () => {
    const builder = new StreamsBuilder();
    expect(() => builder.stream('bad topic')).toThrow(/not a valid topic name/);
    const s = builder.stream<string, string>('in');
    s.groupByKey().count(Materialized('dup'));
    expect(() => s.groupByKey().count(Materialized('dup'))).toThrow(/already named dup/);
  });

  it('fails on a record its source serde cannot read, and on a topic it does not read', async () => {
    const builder = new StreamsBuilder();
    builder
      .stream('in', Consumed(Serdes.String(), Serdes.JSON()))
      .to('out', Produced(Serdes.String(), Serdes.JSON()));
    const driver = new TopologyTestDriver(builder.build());
    const input = driver.createInputTopic('in', S, S);
    await expect(input.pipeInput('k', '{not json', 1)).rejects.toMatchObject({ code: 'INVALID_RECORD' });
    await expect(driver.createInputTopic('other', S, S).pipeInput('k', 'v', 1)).rejects.toMatchObject({
      code: 'UNKNOWN_TOPIC_OR_PARTITION',
    });
    await input.pipeInput('k', '{"a":[1,2]}', 2);
    expect(driver.createOutputTopic('out', S, Serdes.JSON()).readKeyValue()).toEqual({
      key: 'k',
      value: { a: [1, 2] },
    });
  });

  it('stamps records piped without a timestamp with the simulated wall clock, or the topic start plus auto-advance', async () => {
    const builder = new StreamsBuilder();
    builder.stream('in').to('out');
    builder.stream('in2').to('out');
    const driver = new TopologyTestDriver(builder.build(), {}, 1_000);
    const input = driver.createInputTopic('in', S, S);
    await input.pipeInput('a', '1');
    driver.advanceWallClockTime(500);
    await input.pipeInput('b', '2');
    const ticking = driver.createInputTopic('in2', S, S, { startTimestampMs: 10, autoAdvanceMs: 5 });
    await ticking.pipeValueList(['x', 'y']);
    expect(
      driver
        .createOutputTopic('out', S, S)
        .readRecordsToList()
        .map((r) => r.timestamp),
    ).toEqual([1_000, 1_500, 10, 15]);
    expect(() => driver.advanceWallClockTime(-1)).toThrow(/cannot advance/);
  });
});

import {
  Consumed as ConsumedClass,
  Materialized as MaterializedClass,
  Produced as ProducedClass,
} from '../../../streams/index.js';
const Materialized = (name: string) => MaterializedClass.as<string, number>(name);
const Consumed = <K, V>(
  k: Parameters<typeof ConsumedClass.with<K, V>>[0],
  v: Parameters<typeof ConsumedClass.with<K, V>>[1],
) => ConsumedClass.with(k, v);
const Produced = <K, V>(
  k: Parameters<typeof ProducedClass.with<K, V>>[0],
  v: Parameters<typeof ProducedClass.with<K, V>>[1],
) => ProducedClass.with(k, v);
