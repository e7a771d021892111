/**
 * Kafka's WordCountDemo: reads `text-input` (string values), splits each line on non-letters,
 * lower-cases the words, counts them, and writes `word-counts` with the word as key and its running
 * count as a decimal string.
 */
import { Materialized, StreamsBuilder } from '../streams/index.js';
import type { Topology } from '../streams/index.js';

export const topology = (): Topology => {
  const builder = new StreamsBuilder();
  builder
    .stream<string | null, string>('text-input')
    .flatMapValues((line) =>
      line
        .toLowerCase()
        .split(/[^\p{L}]+/u)
        .filter((word) => word.length > 0),
    )
    .groupBy((_key, word) => word)
    .count(Materialized.as('counts-store'))
    .toStream()
    .mapValues((count) => String(count))
    .to('word-counts');
  return builder.build();
};
