/**
 * Sluice Streams: Kafka Streams' DSL and model over Sluice topics. Build a topology with
 * `StreamsBuilder`, test it with `TopologyTestDriver`, run it with `npm run streams -- app.ts`.
 */
export { StreamsBuilder } from './builder.js';
export type { StreamsBuilderOptions } from './builder.js';
export { KStream, BranchedKStream, KeyValuePair as KeyValue } from './kstream.js';
export { KTable } from './ktable.js';
export { KGroupedStream, TimeWindowedKStream, SessionWindowedKStream } from './grouped.js';
export {
  BufferConfig,
  Consumed,
  Grouped,
  Materialized,
  Named,
  Produced,
  Repartitioned,
  Suppressed,
} from './options.js';
export { Serdes } from './serdes.js';
export type { Serde } from './serdes.js';
export { JoinWindows, SessionWindows, TimeWindows } from './windows.js';
export type { Window, Windowed } from './windows.js';
export { Topology } from './topology.js';
export { TopologyTestDriver, TestInputTopic, TestOutputTopic } from './test-driver.js';
export type { TestRecord } from './test-driver.js';
export type { Header } from './processor.js';
