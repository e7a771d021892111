/** Grouped streams and their aggregations: count, reduce, aggregate, plain or windowed. */
import type { KStream } from './kstream.js';
import { KTable } from './ktable.js';
import type { Grouped, Materialized } from './options.js';
import type { Aggregation } from './processors/aggregate.js';
import type { SessionAggregation } from './processors/windowed.js';
import { counting, reduction, storeGetter, streamAggregateProcessor } from './processors/aggregate.js';
import { sessionAggregateProcessor, timeWindowAggregateProcessor } from './processors/windowed.js';
import type { Serde } from './serdes.js';
import type { StoreKind, StoreSpec } from './topology.js';
import type { Windowed, SessionWindows } from './windows.js';
import { TimeWindows } from './windows.js';

type Window = TimeWindows | SessionWindows;

export class KGroupedStream<K, V> {
  /** @internal */
  constructor(
    readonly stream: KStream<K, V>,
    readonly grouped: Grouped<K, V>,
  ) {}

  count(materialized?: Materialized<K, number>): KTable<K, number> {
    return this.aggregateWith(counting, materialized, 'KSTREAM-AGGREGATE');
  }

  reduce(reducer: (aggregate: V, value: V) => V, materialized?: Materialized<K, V>): KTable<K, V> {
    return this.aggregateWith(reduction(reducer as never), materialized, 'KSTREAM-REDUCE', this.valueSerde());
  }

  aggregate<VA>(
    initializer: () => VA,
    aggregator: (key: K, value: V, aggregate: VA) => VA,
    materialized?: Materialized<K, VA>,
  ): KTable<K, VA> {
    return this.aggregateWith(
      { initializer, aggregator: aggregator as never },
      materialized,
      'KSTREAM-AGGREGATE',
    );
  }

  windowedBy(windows: TimeWindows): TimeWindowedKStream<K, V>;
  windowedBy(windows: SessionWindows): SessionWindowedKStream<K, V>;
  windowedBy(windows: Window): TimeWindowedKStream<K, V> | SessionWindowedKStream<K, V> {
    return windows instanceof TimeWindows
      ? new TimeWindowedKStream(this, windows)
      : new SessionWindowedKStream(this, windows);
  }

  /** @internal The key serde of the grouping: Grouped's, the stream's, or the default. */
  keySerde(): Serde<unknown> {
    const { graph } = this.stream.state;
    return (this.grouped.keySerde ?? this.stream.state.keySerde ?? graph.defaults.keySerde) as Serde<unknown>;
  }

  /** @internal */
  valueSerde(): Serde<unknown> | undefined {
    return (this.grouped.valueSerde ?? this.stream.state.valueSerde) as Serde<unknown> | undefined;
  }

  /**
   * @internal Registers the aggregation's store and adds its processor behind a repartition topic
   * when the key changed upstream (named after Grouped.as, else after the store, as Kafka does).
   */
  attach(
    kind: StoreKind,
    materialized: Materialized<unknown, unknown> | undefined,
    prefix: string,
    valueSerde: Serde<unknown> | undefined,
    create: (spec: StoreSpec) => ReturnType<typeof streamAggregateProcessor>,
  ): { node: string; spec: StoreSpec } {
    const { graph } = this.stream.state;
    const spec = graph.store(
      kind,
      materialized?.name,
      prefix,
      (materialized?.keySerde ?? this.keySerde()) as Serde<unknown>,
      (materialized?.valueSerde ?? valueSerde) as Serde<unknown> | undefined,
    );
    const input = this.stream.state.repartitionRequired
      ? this.stream.repartitionAs(this.grouped.name ?? spec.name, this.keySerde(), this.valueSerde())
      : this.stream;
    const node = graph.add(graph.name(prefix), [input.state.node], () => create(spec), {
      stores: [spec.name],
    });
    return { node, spec };
  }

  private aggregateWith<VA>(
    aggregation: Aggregation,
    materialized: Materialized<K, VA> | undefined,
    prefix: string,
    valueSerde?: Serde<unknown>,
  ): KTable<K, VA> {
    const { node, spec } = this.attach('key-value', materialized as never, prefix, valueSerde, (s) =>
      streamAggregateProcessor(s, aggregation),
    );
    return new KTable({
      graph: this.stream.state.graph,
      node,
      keySerde: spec.keySerde,
      valueSerde: spec.valueSerde,
      getter: storeGetter(spec),
    });
  }
}

export class TimeWindowedKStream<K, V> {
  constructor(
    private readonly grouped: KGroupedStream<K, V>,
    private readonly windows: TimeWindows,
  ) {}

  count(materialized?: Materialized<K, number>): KTable<Windowed<K>, number> {
    return this.aggregateWith(counting, materialized, 'KSTREAM-AGGREGATE');
  }

  reduce(reducer: (aggregate: V, value: V) => V, materialized?: Materialized<K, V>): KTable<Windowed<K>, V> {
    return this.aggregateWith(
      reduction(reducer as never),
      materialized,
      'KSTREAM-REDUCE',
      this.grouped.valueSerde(),
    );
  }

  aggregate<VA>(
    initializer: () => VA,
    aggregator: (key: K, value: V, aggregate: VA) => VA,
    materialized?: Materialized<K, VA>,
  ): KTable<Windowed<K>, VA> {
    return this.aggregateWith(
      { initializer, aggregator: aggregator as never },
      materialized,
      'KSTREAM-AGGREGATE',
    );
  }

  private aggregateWith<VA>(
    aggregation: Aggregation,
    materialized: Materialized<K, VA> | undefined,
    prefix: string,
    valueSerde?: Serde<unknown>,
  ): KTable<Windowed<K>, VA> {
    const { node, spec } = this.grouped.attach('window', materialized as never, prefix, valueSerde, (s) =>
      timeWindowAggregateProcessor(s, this.windows, aggregation),
    );
    return new KTable({
      graph: this.grouped.stream.state.graph,
      node,
      keySerde: undefined,
      valueSerde: undefined,
      windowed: { spec, graceMs: this.windows.graceMs },
    });
  }
}

export class SessionWindowedKStream<K, V> {
  constructor(
    private readonly grouped: KGroupedStream<K, V>,
    private readonly windows: SessionWindows,
  ) {}

  count(materialized?: Materialized<K, number>): KTable<Windowed<K>, number> {
    return this.aggregateWith(
      { ...counting, merger: (_k, a, b) => (a as number) + (b as number) },
      materialized,
    );
  }

  reduce(reducer: (aggregate: V, value: V) => V, materialized?: Materialized<K, V>): KTable<Windowed<K>, V> {
    const r = reduction(reducer as never);
    // Merging two reduced sessions is one more reduction.
    return this.aggregateWith(
      { ...r, merger: (k, a, b) => r.aggregator(k, b, a) },
      materialized,
      this.grouped.valueSerde(),
    );
  }

  aggregate<VA>(
    initializer: () => VA,
    aggregator: (key: K, value: V, aggregate: VA) => VA,
    merger: (key: K, left: VA, right: VA) => VA,
    materialized?: Materialized<K, VA>,
  ): KTable<Windowed<K>, VA> {
    return this.aggregateWith(
      { initializer, aggregator: aggregator as never, merger: merger as never },
      materialized,
    );
  }

  private aggregateWith<VA>(
    aggregation: SessionAggregation,
    materialized: Materialized<K, VA> | undefined,
    valueSerde?: Serde<unknown>,
  ): KTable<Windowed<K>, VA> {
    const { node, spec } = this.grouped.attach(
      'session',
      materialized as never,
      'KSTREAM-AGGREGATE',
      valueSerde,
      (s) => sessionAggregateProcessor(s, this.windows, aggregation),
    );
    return new KTable({
      graph: this.grouped.stream.state.graph,
      node,
      keySerde: undefined,
      valueSerde: undefined,
      windowed: { spec, graceMs: this.windows.graceMs },
    });
  }
}
