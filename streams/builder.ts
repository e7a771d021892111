/** StreamsBuilder: where a topology starts, from streams and tables of input topics. */
import { Graph } from './graph.js';
import { KStream } from './kstream.js';
import { KTable } from './ktable.js';
import type { Consumed, Materialized } from './options.js';
import { storeGetter, tableSourceProcessor } from './processors/aggregate.js';
import { passThrough } from './processors/stateless.js';
import type { Serde } from './serdes.js';
import { Serdes } from './serdes.js';
import { Topology } from './topology.js';

export interface StreamsBuilderOptions {
  /** Kafka's `default.key.serde` (default String). */
  defaultKeySerde?: Serde<unknown>;
  /** Kafka's `default.value.serde` (default String). */
  defaultValueSerde?: Serde<unknown>;
}

export class StreamsBuilder {
  private readonly graph: Graph;

  constructor({
    defaultKeySerde = Serdes.String() as Serde<unknown>,
    defaultValueSerde = Serdes.String() as Serde<unknown>,
  }: StreamsBuilderOptions = {}) {
    this.graph = new Graph({ keySerde: defaultKeySerde, valueSerde: defaultValueSerde });
  }

  /** A record stream of one or more topics. */
  stream<K = string, V = string>(topics: string | string[], consumed?: Consumed<K, V>): KStream<K, V> {
    const serdes = this.serdes(consumed);
    const list = (Array.isArray(topics) ? topics : [topics]).map((name) => {
      this.graph.checkTopic(name);
      return { name, internal: false };
    });
    const node = this.graph.add(consumed?.name ?? this.graph.name('KSTREAM-SOURCE'), [], passThrough, {
      source: { topics: list, serdes },
    });
    return new KStream({ graph: this.graph, node, ...serdes, repartitionRequired: false });
  }

  /** A table of a topic: the latest value per key, kept in a store (tombstones delete). */
  table<K = string, V = string>(
    topic: string,
    consumed?: Consumed<K, V>,
    materialized?: Materialized<K, V>,
  ): KTable<K, V> {
    this.graph.checkTopic(topic);
    const serdes = this.serdes(consumed);
    const source = this.graph.add(this.graph.name('KSTREAM-SOURCE'), [], passThrough, {
      source: { topics: [{ name: topic, internal: false }], serdes },
    });
    const name = this.graph.name('KTABLE-SOURCE');
    const spec = this.graph.store(
      'key-value',
      materialized?.name,
      name,
      (materialized?.keySerde ?? serdes.keySerde) as Serde<unknown>,
      (materialized?.valueSerde ?? serdes.valueSerde) as Serde<unknown>,
    );
    const node = this.graph.add(name, [source], () => tableSourceProcessor(spec), { stores: [spec.name] });
    return new KTable({ graph: this.graph, node, ...serdes, getter: storeGetter(spec) });
  }

  build(): Topology {
    return new Topology([...this.graph.nodes], new Map(this.graph.stores));
  }

  private serdes(consumed?: Consumed<unknown, unknown>): {
    keySerde: Serde<unknown>;
    valueSerde: Serde<unknown>;
  } {
    return {
      keySerde: consumed?.keySerde ?? this.graph.defaults.keySerde,
      valueSerde: consumed?.valueSerde ?? this.graph.defaults.valueSerde,
    };
  }
}
