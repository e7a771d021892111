/** KStream: a record stream, with Kafka Streams' operations. */
import { SluiceError } from '../protocol/errors.js';
import type { Graph } from './graph.js';
import { KGroupedStream } from './grouped.js';
import type { KTable } from './ktable.js';
import type { Named, Produced, Repartitioned } from './options.js';
import { Grouped } from './options.js';
import type { Processor } from './processor.js';
import type { Joiner } from './processors/joins.js';
import { streamStreamJoinProcessor, streamTableJoinProcessor } from './processors/joins.js';
import type { KeyValue } from './processors/stateless.js';
import * as ops from './processors/stateless.js';
import type { Serde } from './serdes.js';
import type { JoinWindows } from './windows.js';

export interface StreamState {
  graph: Graph;
  node: string;
  keySerde: Serde<unknown> | undefined;
  valueSerde: Serde<unknown> | undefined;
  /** A key-changing operation came before: stateful operations must repartition first. */
  repartitionRequired: boolean;
}

/** Builds `{ key, value }` as Kafka's `KeyValue.pair` does. */
export const KeyValuePair = { pair: <K, V>(key: K, value: V): KeyValue<K, V> => ({ key, value }) };

export class KStream<K, V> {
  /** @internal */
  constructor(readonly state: StreamState) {}

  filter(predicate: (key: K, value: V) => boolean, named?: Named): KStream<K, V> {
    return this.then('KSTREAM-FILTER', named, () => ops.filterProcessor(predicate as never, true), {});
  }

  filterNot(predicate: (key: K, value: V) => boolean, named?: Named): KStream<K, V> {
    return this.then('KSTREAM-FILTER', named, () => ops.filterProcessor(predicate as never, false), {});
  }

  map<K2, V2>(mapper: (key: K, value: V) => KeyValue<K2, V2>, named?: Named): KStream<K2, V2> {
    return this.then('KSTREAM-MAP', named, () => ops.mapProcessor(mapper as never), {
      key: true,
      value: true,
    });
  }

  mapValues<V2>(mapper: (value: V, key: K) => V2, named?: Named): KStream<K, V2> {
    return this.then('KSTREAM-MAPVALUES', named, () => ops.mapValuesProcessor(mapper as never), {
      value: true,
    });
  }

  flatMap<K2, V2>(mapper: (key: K, value: V) => Iterable<KeyValue<K2, V2>>, named?: Named): KStream<K2, V2> {
    return this.then('KSTREAM-FLATMAP', named, () => ops.flatMapProcessor(mapper as never), {
      key: true,
      value: true,
    });
  }

  flatMapValues<V2>(mapper: (value: V, key: K) => Iterable<V2>, named?: Named): KStream<K, V2> {
    return this.then('KSTREAM-FLATMAPVALUES', named, () => ops.flatMapValuesProcessor(mapper as never), {
      value: true,
    });
  }

  selectKey<K2>(selector: (key: K, value: V) => K2, named?: Named): KStream<K2, V> {
    return this.then('KSTREAM-KEY-SELECT', named, () => ops.selectKeyProcessor(selector as never), {
      key: true,
    });
  }

  peek(action: (key: K, value: V) => void, named?: Named): KStream<K, V> {
    return this.then('KSTREAM-PEEK', named, () => ops.peekProcessor(action as never, true), {});
  }

  foreach(action: (key: K, value: V) => void, named?: Named): void {
    this.then('KSTREAM-FOREACH', named, () => ops.peekProcessor(action as never, false), {});
  }

  merge(other: KStream<K, V>, named?: Named): KStream<K, V> {
    const { graph } = this.state;
    const node = graph.add(
      named?.name ?? graph.name('KSTREAM-MERGE'),
      [this.state.node, other.state.node],
      ops.passThrough,
    );
    return new KStream({
      graph,
      node,
      keySerde: this.state.keySerde,
      valueSerde: this.state.valueSerde,
      repartitionRequired: this.state.repartitionRequired || other.state.repartitionRequired,
    });
  }

  /** Kafka's `split()`: route each record to the first branch whose predicate matches. */
  split(named?: Named): BranchedKStream<K, V> {
    return new BranchedKStream(this, named?.name ?? '');
  }

  to(topic: string, produced?: Produced<K, V>): void {
    const { graph } = this.state;
    graph.checkTopic(topic);
    const keySerde = (produced?.keySerde ?? this.state.keySerde ?? graph.defaults.keySerde) as Serde<unknown>;
    const valueSerde = (produced?.valueSerde ??
      this.state.valueSerde ??
      graph.defaults.valueSerde) as Serde<unknown>;
    const sink = { name: topic, internal: false };
    graph.add(
      produced?.name ?? graph.name('KSTREAM-SINK'),
      [this.state.node],
      () => ops.sinkProcessor(sink, keySerde, valueSerde),
      { sink },
    );
  }

  /** Writes the stream through a repartition topic `<application.id>-<name>-repartition` and reads it back. */
  repartition(repartitioned?: Repartitioned<K, V>): KStream<K, V> {
    const base = repartitioned?.name ?? this.state.graph.name('KSTREAM-REPARTITION');
    return this.repartitionAs(base, repartitioned?.keySerde, repartitioned?.valueSerde);
  }

  groupByKey(grouped?: Grouped<K, V>): KGroupedStream<K, V> {
    return new KGroupedStream(this, grouped ?? new Grouped());
  }

  groupBy<K2>(selector: (key: K, value: V) => K2, grouped?: Grouped<K2, V>): KGroupedStream<K2, V> {
    const rekeyed = this.selectKey(selector);
    return new KGroupedStream(rekeyed, grouped ?? new Grouped());
  }

  /** Stream–table inner join (`table`), or windowed stream–stream inner join (`stream` + windows). */
  join<VT, VR>(table: KTable<K, VT>, joiner: (value: V, tableValue: VT) => VR): KStream<K, VR>;
  join<VO, VR>(
    other: KStream<K, VO>,
    joiner: (value: V, otherValue: VO) => VR,
    windows: JoinWindows,
  ): KStream<K, VR>;
  // The implementation signature is wider than both overloads, as TypeScript requires.
  /* eslint-disable @typescript-eslint/no-explicit-any */
  join(
    other: KTable<K, any> | KStream<K, any>,
    joiner: (value: V, other: any) => any,
    windows?: JoinWindows,
  ): KStream<K, any> {
    /* eslint-enable @typescript-eslint/no-explicit-any */
    if (other instanceof KStream) {
      if (!windows) throw new SluiceError('INVALID_CONFIG', 'a stream–stream join needs JoinWindows');
      return this.windowedJoin(other, joiner as Joiner, windows);
    }
    return this.tableJoin(other, joiner as Joiner, false);
  }

  /** Stream–table left join: a record without a table value joins with null. */
  leftJoin<VT, VR>(table: KTable<K, VT>, joiner: (value: V, tableValue: VT | null) => VR): KStream<K, VR> {
    return this.tableJoin(table, joiner as Joiner, true) as KStream<K, VR>;
  }

  /** @internal Sink to an internal topic and a source reading it back, keys kept. */
  repartitionAs(base: string, keySerde?: Serde<unknown>, valueSerde?: Serde<unknown>): KStream<K, V> {
    const { graph } = this.state;
    const serdes = {
      keySerde: keySerde ?? this.state.keySerde ?? graph.defaults.keySerde,
      valueSerde: valueSerde ?? this.state.valueSerde ?? graph.defaults.valueSerde,
    };
    const topic = { name: `${base}-repartition`, internal: true };
    // Records without a key have no partition to go to, and no aggregation or join takes them.
    const filter = graph.add(graph.name('KSTREAM-FILTER'), [this.state.node], () =>
      ops.filterProcessor((k) => k !== null, true),
    );
    graph.add(
      graph.name('KSTREAM-SINK'),
      [filter],
      () => ops.sinkProcessor(topic, serdes.keySerde, serdes.valueSerde),
      { sink: topic },
    );
    const node = graph.add(graph.name('KSTREAM-SOURCE'), [], ops.passThrough, {
      source: { topics: [topic], serdes },
    });
    return new KStream({ graph, node, ...serdes, repartitionRequired: false });
  }

  private tableJoin(table: KTable<K, unknown>, joiner: Joiner, left: boolean): KStream<K, unknown> {
    const getter = table.getter();
    const stream = this.state.repartitionRequired
      ? this.repartitionAs(this.state.graph.name('KSTREAM-JOIN'))
      : this;
    const { graph } = stream.state;
    const node = graph.add(
      graph.name(left ? 'KSTREAM-LEFTJOIN' : 'KSTREAM-JOIN'),
      [stream.state.node],
      () => streamTableJoinProcessor(getter, joiner, left),
      { stores: getter.stores },
    );
    return new KStream({ ...stream.state, node, valueSerde: undefined });
  }

  private windowedJoin(
    other: KStream<K, unknown>,
    joiner: Joiner,
    windows: JoinWindows,
  ): KStream<K, unknown> {
    const graph = this.state.graph;
    const left = this.state.repartitionRequired ? this.repartitionAs(graph.name('KSTREAM-JOINTHIS')) : this;
    const right = other.state.repartitionRequired
      ? other.repartitionAs(graph.name('KSTREAM-JOINOTHER'))
      : other;
    const keySerde = left.state.keySerde ?? graph.defaults.keySerde;
    const thisStore = graph.store(
      'join-window',
      undefined,
      'KSTREAM-JOINTHIS',
      keySerde,
      left.state.valueSerde,
    );
    const otherStore = graph.store(
      'join-window',
      undefined,
      'KSTREAM-JOINOTHER',
      keySerde,
      right.state.valueSerde,
    );
    const storeNames = [thisStore.name, otherStore.name];
    const time = thisStore.name;
    const thisNode = graph.add(
      graph.name('KSTREAM-JOINTHIS'),
      [left.state.node],
      () => streamStreamJoinProcessor({ mine: thisStore, other: otherStore, time }, windows, joiner, true),
      { stores: storeNames },
    );
    const otherNode = graph.add(
      graph.name('KSTREAM-JOINOTHER'),
      [right.state.node],
      () => streamStreamJoinProcessor({ mine: otherStore, other: thisStore, time }, windows, joiner, false),
      { stores: storeNames },
    );
    const node = graph.add(graph.name('KSTREAM-MERGE'), [thisNode, otherNode], ops.passThrough);
    return new KStream({
      graph,
      node,
      keySerde: left.state.keySerde,
      valueSerde: undefined,
      repartitionRequired: false,
    });
  }

  private then<K2, V2>(
    prefix: string,
    named: Named | undefined,
    create: () => Processor,
    changes: { key?: boolean; value?: boolean },
  ): KStream<K2, V2> {
    const { graph } = this.state;
    const node = graph.add(named?.name ?? graph.name(prefix), [this.state.node], create);
    return new KStream({
      graph,
      node,
      keySerde: changes.key ? undefined : this.state.keySerde,
      valueSerde: changes.value ? undefined : this.state.valueSerde,
      repartitionRequired: this.state.repartitionRequired || changes.key === true,
    });
  }
}

/** The branches of `split()`, after Kafka's BranchedKStream; branch names are the prefix plus a name or index. */
export class BranchedKStream<K, V> {
  private readonly branches: { name: string; predicate: (key: unknown, value: unknown) => boolean }[] = [];
  private done = false;

  constructor(
    private readonly stream: KStream<K, V>,
    private readonly prefix: string,
  ) {}

  branch(predicate: (key: K, value: V) => boolean, branched?: { name?: string }): BranchedKStream<K, V> {
    this.check();
    this.branches.push({
      name: this.prefix + (branched?.name ?? String(this.branches.length + 1)),
      predicate: predicate as never,
    });
    return this;
  }

  defaultBranch(branched?: { name?: string }): Record<string, KStream<K, V>> {
    return this.finish(this.prefix + (branched?.name ?? '0'));
  }

  noDefaultBranch(): Record<string, KStream<K, V>> {
    return this.finish(undefined);
  }

  private finish(defaultName: string | undefined): Record<string, KStream<K, V>> {
    this.check();
    this.done = true;
    const { graph } = this.stream.state;
    const branchNode = graph.name('KSTREAM-BRANCH');
    const children = this.branches.map((b) => ({ ...b, child: `${branchNode}-${b.name}` }));
    const defaultChild = defaultName === undefined ? undefined : `${branchNode}-${defaultName}`;
    graph.add(branchNode, [this.stream.state.node], () => ops.branchProcessor(children, defaultChild));
    const out: Record<string, KStream<K, V>> = {};
    for (const [name, child] of [
      ...children.map((c) => [c.name, c.child] as const),
      ...(defaultName === undefined || defaultChild === undefined
        ? []
        : [[defaultName, defaultChild] as const]),
    ]) {
      graph.add(child, [branchNode], ops.passThrough);
      out[name] = new KStream({ ...this.stream.state, node: child });
    }
    return out;
  }

  private check(): void {
    if (this.done) throw new SluiceError('INVALID_CONFIG', 'this split() already has its default branch');
  }
}
