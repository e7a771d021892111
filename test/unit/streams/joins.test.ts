import { describe, expect, it } from 'vitest';
import { JoinWindows, Serdes, StreamsBuilder, TopologyTestDriver } from '../../../streams/index.js';

const S = Serdes.String();
type Input = [topic: string, key: string | null, value: string | null, ts: number];

const run = async (
  builder: StreamsBuilder,
  inputs: Input[],
  topic = 'out',
): Promise<[string | null, string | null, number][]> => {
  const driver = new TopologyTestDriver(builder.build());
  for (const [t, k, v, ts] of inputs) await driver.createInputTopic(t, S, S).pipeInput(k, v, ts);
  return driver
    .createOutputTopic(topic, S, S)
    .readRecordsToList()
    .map((r) => [r.key, r.value, r.timestamp]);
};

const tableInputs: Input[] = [
  ['customers', 'c1', 'Alice', 1],
  ['orders', 'c1', 'book', 2],
  ['orders', 'c2', 'pen', 3],
  ['customers', 'c1', 'Alicia', 4], // a table update joins nothing by itself
  ['orders', 'c1', 'lamp', 5],
  ['customers', 'c1', null, 6], // tombstone: the customer is gone
  ['orders', 'c1', 'mug', 7],
  ['orders', null, 'keyless', 8],
];

describe('stream–table joins', () => {
  it('inner join: each order looks up the current customer; no customer, no output', async () => {
    const builder = new StreamsBuilder();
    const customers = builder.table<string, string>('customers');
    builder
      .stream<string, string>('orders')
      .join(customers, (order, name) => `${order} for ${name}`)
      .to('out');
    expect(await run(builder, tableInputs)).toEqual([
      ['c1', 'book for Alice', 2],
      ['c1', 'lamp for Alicia', 5],
    ]);
  });

  it('left join: an order without a customer joins with null', async () => {
    const builder = new StreamsBuilder();
    const customers = builder.table<string, string>('customers');
    builder
      .stream<string, string>('orders')
      .leftJoin(customers, (order, name) => `${order} for ${name ?? 'nobody'}`)
      .to('out');
    expect(await run(builder, tableInputs)).toEqual([
      ['c1', 'book for Alice', 2],
      ['c2', 'pen for nobody', 3],
      ['c1', 'lamp for Alicia', 5],
      ['c1', 'mug for nobody', 7],
    ]);
  });

  it('joins a re-keyed stream through a repartition topic, in the table task', async () => {
    const builder = new StreamsBuilder();
    const customers = builder.table<string, string>('customers');
    builder
      .stream<string, string>('orders')
      .selectKey((_k, v) => v.split(':')[0] ?? '')
      .join(customers, (order, name) => `${order} for ${name}`)
      .to('out');
    const topology = builder.build();
    expect(topology.subTopologies.map((s) => s.sources.map((t) => t.name))).toEqual([
      ['customers', 'KSTREAM-JOIN-0000000005-repartition'],
      ['orders'],
    ]);
    expect(
      await run(builder, [
        ['customers', 'c9', 'Zed', 1],
        ['orders', 'x', 'c9:hat', 2],
      ]),
    ).toEqual([['c9', 'c9:hat for Zed', 2]]);
  });

  it('joins a filtered table through its value getter', async () => {
    const builder = new StreamsBuilder();
    const adults = builder.table<string, string>('ages').filter((_k, age) => Number(age) >= 18);
    builder
      .stream<string, string>('visits')
      .leftJoin(adults, (visit, age) => `${visit}:${age ?? 'minor'}`)
      .to('out');
    expect(
      await run(builder, [
        ['ages', 'p1', '30', 1],
        ['ages', 'p2', '12', 2],
        ['visits', 'p1', 'v1', 3],
        ['visits', 'p2', 'v2', 4],
      ]),
    ).toEqual([
      ['p1', 'v1:30', 3],
      ['p2', 'v2:minor', 4],
    ]);
  });
});

describe('table–table joins', () => {
  const tables = (kind: 'join' | 'leftJoin' | 'outerJoin'): StreamsBuilder => {
    const builder = new StreamsBuilder();
    const a = builder.table<string, string>('a');
    const b = builder.table<string, string>('b');
    a[kind](b, (x: string | null, y: string | null) => `${x}+${y}`)
      .toStream()
      .to('out');
    return builder;
  };

  it('inner join: updates on either side re-join; a delete that ends a result sends a tombstone', async () => {
    expect(
      await run(tables('join'), [
        ['a', 'k', 'a1', 1],
        ['b', 'k', 'b1', 2],
        ['a', 'k', 'a2', 3],
        ['b', 'k', null, 4],
        ['a', 'k', null, 5],
      ]),
    ).toEqual([
      ['k', 'a1+b1', 2],
      ['k', 'a2+b1', 3],
      ['k', null, 4],
    ]);
  });

  it('left join: a missing right side joins with null; deleting the left side sends a tombstone', async () => {
    expect(
      await run(tables('leftJoin'), [
        ['b', 'k', 'b0', 1],
        ['a', 'k', 'a1', 2],
        ['b', 'k', null, 3],
        ['a', 'k', null, 4],
      ]),
    ).toEqual([
      ['k', 'a1+b0', 2],
      ['k', 'a1+null', 3],
      ['k', null, 4],
    ]);
  });

  it('outer join: either side alone produces a result; the result time is the later side', async () => {
    expect(
      await run(tables('outerJoin'), [
        ['b', 'k', 'b1', 5],
        ['a', 'k', 'a1', 2],
        ['b', 'k', null, 6],
        ['a', 'k', null, 7],
      ]),
    ).toEqual([
      ['k', 'null+b1', 5],
      ['k', 'a1+b1', 5],
      ['k', 'a1+null', 6],
      ['k', null, 7],
    ]);
  });

  it('KTable.filter forwards a tombstone for a key that stops qualifying; mapValues maps both changes', async () => {
    const builder = new StreamsBuilder();
    builder
      .table<string, string>('t')
      .filter((_k, v) => v.length > 1)
      .mapValues((v) => v.toUpperCase())
      .toStream()
      .to('out');
    expect(
      await run(builder, [
        ['t', 'k', 'ab', 1],
        ['t', 'k', 'c', 2],
        ['t', 'j', 'x', 3],
        ['t', 'k', 'de', 4],
      ]),
    ).toEqual([
      ['k', 'AB', 1],
      ['k', null, 2],
      ['j', null, 3],
      ['k', 'DE', 4],
    ]);
  });
});

describe('windowed stream–stream join', () => {
  it('joins records of one key within the time difference, both directions, and drops records whose window closed', async () => {
    const builder = new StreamsBuilder();
    const right = builder.stream<string, string>('right');
    builder
      .stream<string, string>('left')
      .join(right, (l, r) => `${l}+${r}`, JoinWindows.ofTimeDifferenceAndGrace(5, 0))
      .to('out');
    expect(
      await run(builder, [
        ['left', 'k', 'l1', 10],
        ['right', 'k', 'r1', 12], // |12 - 10| ≤ 5
        ['right', 'k', 'r2', 20], // 10 s away from l1: no
        ['left', 'k', 'l2', 18], // r2 within [13, 23]
        ['left', 'k', 'l3', 11], // stream time 20 > 11 + 5: window closed, dropped
        ['left', 'k', 'l4', 16], // r1 and r2 within [11, 21], in time order
        ['left', 'other', 'l5', 16],
        ['right', 'k', null, 17],
      ]),
    ).toEqual([
      ['k', 'l1+r1', 12],
      ['k', 'l2+r2', 20],
      ['k', 'l4+r1', 16],
      ['k', 'l4+r2', 20],
    ]);
  });

  it('honours asymmetric before/after windows and refuses a stream join without windows', async () => {
    const builder = new StreamsBuilder();
    const right = builder.stream<string, string>('right');
    const left = builder.stream<string, string>('left');
    left.join(right, (l, r) => `${l}+${r}`, JoinWindows.ofTimeDifferenceWithNoGrace(0).after(10)).to('out');
    // right may come up to 10 ms after left, never before
    expect(
      await run(builder, [
        ['right', 'k', 'early', 5],
        ['left', 'k', 'l', 6],
        ['right', 'k', 'late', 16],
        ['right', 'k', 'too-late', 17],
      ]),
    ).toEqual([['k', 'l+late', 16]]);
    expect(() => left.join(right as never, (l: string) => l)).toThrow();
  });
});
