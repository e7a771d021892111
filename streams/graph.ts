/**
 * The graph a StreamsBuilder grows: nodes and stores named with one running index, as Kafka Streams
 * names them (KSTREAM-MAP-0000000001, KSTREAM-AGGREGATE-STATE-STORE-0000000002).
 */
import { SluiceError } from '../protocol/errors.js';
import type { Processor, SerdePair } from './processor.js';
import type { Serde } from './serdes.js';
import { Serdes } from './serdes.js';
import type { NodeSpec, StoreKind, StoreSpec, TopicRef } from './topology.js';

export class Graph {
  readonly nodes: NodeSpec[] = [];
  readonly stores = new Map<string, StoreSpec>();
  private index = 0;

  constructor(readonly defaults: SerdePair) {}

  name(prefix: string): string {
    return `${prefix}-${String(this.index++).padStart(10, '0')}`;
  }

  add(
    name: string,
    parents: string[],
    create: () => Processor,
    extra: { stores?: string[]; source?: NodeSpec['source']; sink?: TopicRef } = {},
  ): string {
    if (this.nodes.some((n) => n.name === name))
      throw new SluiceError('INVALID_CONFIG', `a processor is already named ${name}`);
    this.nodes.push({
      name,
      parents,
      create,
      stores: extra.stores ?? [],
      ...(extra.source ? { source: extra.source } : {}),
      ...(extra.sink ? { sink: extra.sink } : {}),
    });
    return name;
  }

  /** Registers a store: the given name (Materialized.as) or `<prefix>-STATE-STORE-<index>`. */
  store(
    kind: StoreKind,
    name: string | undefined,
    prefix: string,
    keySerde: Serde<unknown>,
    valueSerde: Serde<unknown> | undefined,
  ): StoreSpec {
    const storeName = name ?? this.name(`${prefix}-STATE-STORE`);
    if (this.stores.has(storeName))
      throw new SluiceError('INVALID_CONFIG', `a store is already named ${storeName}`);
    // Aggregates are numbers and objects more often than strings, so stores default to JSON values.
    const spec: StoreSpec = { name: storeName, kind, keySerde, valueSerde: valueSerde ?? Serdes.JSON() };
    this.stores.set(storeName, spec);
    return spec;
  }

  checkTopic(topic: string): void {
    if (!/^[a-zA-Z0-9._-]{1,249}$/.test(topic) || topic === '.' || topic === '..')
      throw new SluiceError('INVALID_TOPIC_EXCEPTION', `${JSON.stringify(topic)} is not a valid topic name`);
  }
}
