/**
 * What a processor node sees at run time: records flow depth-first from a source through its
 * children; a KTable's edges carry changes (new and old value) instead of plain values.
 */
import type { Serde } from './serdes.js';
import type { TaskStores } from './state/task-stores.js';

export type StoreKind = 'key-value' | 'window' | 'session' | 'join-window';

export interface StoreSpec {
  name: string;
  kind: StoreKind;
  keySerde: Serde<unknown>;
  valueSerde: Serde<unknown>;
  /** A processor's own buffer (suppression): not a store interactive queries can read, as in Kafka. */
  internal?: boolean;
}

export interface Header {
  key: string;
  value: Uint8Array | null;
}

export interface StreamRecord<K = unknown, V = unknown> {
  key: K | null;
  value: V | null;
  /** Event time, ms since the epoch: the input record's timestamp, or what a processor assigns. */
  timestamp: number;
  headers: Header[];
}

/** What flows along a KTable's edges: the value after and before one update. */
export interface Change<V = unknown> {
  newValue: V | null;
  oldValue: V | null;
}

/** Record bytes as they go to a topic. */
export interface SerializedRecord {
  key: Uint8Array | null;
  value: Uint8Array | null;
  timestamp: number;
  headers: Header[];
}

/** Where sinks write: the test driver keeps records in memory, the runtime produces them. */
export interface RecordCollector {
  send(topic: string, record: SerializedRecord): void;
}

export interface ProcessorContext {
  readonly taskId: string;
  /** Forwards to every child, or to the named child only (for branches). */
  forward(record: StreamRecord, child?: string): Promise<void>;
  stores: TaskStores;
  collector: RecordCollector;
  /** The full name of a topic, internal ones prefixed with the application id. */
  topicName(topic: string, internal: boolean): string;
}

export interface Processor {
  process(record: StreamRecord, context: ProcessorContext): Promise<void>;
}

/** A serde for keys and one for values, as `Consumed`, `Produced`, `Grouped` and `Materialized` carry. */
export interface SerdePair<K = unknown, V = unknown> {
  keySerde: Serde<K>;
  valueSerde: Serde<V>;
}
