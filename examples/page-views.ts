/**
 * Page views per user per minute: reads `page-views` (key the user, value the page), counts each
 * user's views in one-minute tumbling windows that accept records up to 10 s late, and writes each
 * window's final count once, when it closes, to `page-views-per-minute` (key the user, value JSON).
 */
import {
  BufferConfig,
  Materialized,
  Produced,
  Serdes,
  StreamsBuilder,
  Suppressed,
  TimeWindows,
} from '../streams/index.js';
import type { Topology } from '../streams/index.js';

export const topology = (): Topology => {
  const builder = new StreamsBuilder();
  builder
    .stream<string, string>('page-views')
    .groupByKey()
    .windowedBy(TimeWindows.ofSizeAndGrace(60_000, 10_000))
    .count(Materialized.as('views-per-minute'))
    .suppress(Suppressed.untilWindowCloses(BufferConfig.unbounded()))
    .toStream()
    .map((windowed, views) => ({
      key: windowed.key,
      value: {
        user: windowed.key,
        windowStart: new Date(windowed.window.start).toISOString(),
        windowEnd: new Date(windowed.window.end).toISOString(),
        views,
      },
    }))
    .to('page-views-per-minute', Produced.with(Serdes.String(), Serdes.JSON()));
  return builder.build();
};
