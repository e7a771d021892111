/**
 * The application of the Streams SIGKILL test: counts records per key (state store `counts`) and
 * writes each running count as a decimal string. `groupBy` sends every record through the repartition
 * topic, as word count does, so there are two sub-topologies and every instance after the first finds
 * that topic made. Topics come from the environment so that each guarantee's run has its own:
 * SK_INPUT, SK_OUTPUT.
 */
import { Materialized, StreamsBuilder } from '../../../streams/index.js';
import type { Topology } from '../../../streams/index.js';

export const topology = (): Topology => {
  const builder = new StreamsBuilder();
  builder
    .stream<string, string>(process.env['SK_INPUT'] ?? 'sk-input')
    .groupBy((key) => key)
    .count(Materialized.as('counts'))
    .toStream()
    .mapValues((count) => String(count))
    .to(process.env['SK_OUTPUT'] ?? 'sk-output');
  return builder.build();
};
