/**
 * Kafka Streams' option objects: Consumed (source serdes), Produced (sink serdes), Grouped
 * (repartition serdes and name), Materialized (store name and serdes), Repartitioned, Named,
 * Suppressed. Each is a plain value built by static factories with Kafka's names.
 */
import type { Serde } from './serdes.js';

interface SerdeOptions<K, V> {
  keySerde?: Serde<K>;
  valueSerde?: Serde<V>;
}

class WithSerdes<K, V> {
  constructor(readonly options: SerdeOptions<K, V> & { name?: string } = {}) {}
  get keySerde(): Serde<K> | undefined {
    return this.options.keySerde;
  }
  get valueSerde(): Serde<V> | undefined {
    return this.options.valueSerde;
  }
  get name(): string | undefined {
    return this.options.name;
  }
}

export class Consumed<K, V> extends WithSerdes<K, V> {
  static with<K, V>(keySerde: Serde<K>, valueSerde: Serde<V>): Consumed<K, V> {
    return new Consumed({ keySerde, valueSerde });
  }
}

export class Produced<K, V> extends WithSerdes<K, V> {
  static with<K, V>(keySerde: Serde<K>, valueSerde: Serde<V>): Produced<K, V> {
    return new Produced({ keySerde, valueSerde });
  }
}

export class Grouped<K, V> extends WithSerdes<K, V> {
  static with<K, V>(keySerde: Serde<K>, valueSerde: Serde<V>): Grouped<K, V> {
    return new Grouped({ keySerde, valueSerde });
  }
  /** Names the repartition topic `<application.id>-<name>-repartition`. */
  static as<K, V>(name: string): Grouped<K, V> {
    return new Grouped({ name });
  }
  withKeySerde(keySerde: Serde<K>): Grouped<K, V> {
    return new Grouped({ ...this.options, keySerde });
  }
  withValueSerde(valueSerde: Serde<V>): Grouped<K, V> {
    return new Grouped({ ...this.options, valueSerde });
  }
}

export class Repartitioned<K, V> extends Grouped<K, V> {
  static override as<K, V>(name: string): Repartitioned<K, V> {
    return new Repartitioned({ name });
  }
}

export class Materialized<K, V> extends WithSerdes<K, V> {
  /** A store with this name: queryable through the test driver and interactive queries. */
  static as<K, V>(name: string): Materialized<K, V> {
    return new Materialized({ name });
  }
  static with<K, V>(keySerde: Serde<K>, valueSerde: Serde<V>): Materialized<K, V> {
    return new Materialized({ keySerde, valueSerde });
  }
  withKeySerde(keySerde: Serde<K>): Materialized<K, V> {
    return new Materialized({ ...this.options, keySerde });
  }
  withValueSerde(valueSerde: Serde<V>): Materialized<K, V> {
    return new Materialized({ ...this.options, valueSerde });
  }
}

export class Named {
  private constructor(readonly name: string) {}
  static as(name: string): Named {
    return new Named(name);
  }
}

/** Kafka's Suppressed: only `untilWindowCloses` with an unbounded buffer is offered. */
export class Suppressed {
  private constructor(readonly kind: 'untilWindowCloses') {}
  static untilWindowCloses(_buffer: BufferConfig): Suppressed {
    return new Suppressed('untilWindowCloses');
  }
}

export class BufferConfig {
  private constructor() {}
  /** The buffer holds every open window (it lives in the state store, not in memory). */
  static unbounded(): BufferConfig {
    return new BufferConfig();
  }
}
