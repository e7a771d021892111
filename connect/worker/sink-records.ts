/**
 * From consumed Kafka records to the SinkRecords a task's put sees: key and value converters, then the
 * SMT chain, each failure reported at its stage to the error handler (skipped under tolerance all).
 */
import type { ConsumedRecord } from '../../sdk/index.js';
import type { Converter } from '../converters.js';
import type { SinkRecord } from '../plugin.js';
import type { Chain } from '../transforms/chain.js';
import type { ErrorHandler, OriginalRecord, Stage } from './error-handler.js';

export interface SinkPipeline {
  keyConverter: Converter;
  valueConverter: Converter;
  keyConverterClass: string;
  valueConverterClass: string;
  chain: Chain;
  errors: ErrorHandler;
}

const UTF8 = new TextDecoder();

export const originalOf = (r: ConsumedRecord): OriginalRecord => ({
  topic: r.topic,
  partition: r.partition,
  offset: r.offset,
  key: r.key,
  value: r.value,
  headers: r.headers,
});

/** Converted and transformed records, with each one's original for error reports. */
export const toSinkRecords = async (
  pipeline: SinkPipeline,
  consumed: readonly ConsumedRecord[],
  originals: WeakMap<SinkRecord, OriginalRecord>,
): Promise<SinkRecord[]> => {
  const out: SinkRecord[] = [];
  for (const r of consumed) {
    const original = originalOf(r);
    const attempt = async <T>(
      stage: Stage,
      className: string,
      op: () => T,
    ): Promise<{ ok: true; value: T } | { ok: false }> => {
      try {
        return { ok: true, value: op() };
      } catch (error) {
        await pipeline.errors.report(stage, className, original, error);
        return { ok: false };
      }
    };
    const key = await attempt('KEY_CONVERTER', pipeline.keyConverterClass, () =>
      pipeline.keyConverter.toConnect(r.key),
    );
    if (!key.ok) continue;
    const value = await attempt('VALUE_CONVERTER', pipeline.valueConverterClass, () =>
      pipeline.valueConverter.toConnect(r.value),
    );
    if (!value.ok) continue;
    const record: SinkRecord = {
      topic: r.topic,
      kafkaPartition: r.partition,
      kafkaOffset: r.offset,
      originalTopic: r.topic,
      timestamp: r.timestamp,
      key: key.value,
      value: value.value,
      headers: r.headers.map((h) =>
        h.value === null
          ? { key: h.key, value: null }
          : { key: h.key, value: UTF8.decode(h.value), bytes: h.value },
      ),
    };
    const transformed = await attempt('TRANSFORMATION', 'transforms', () => pipeline.chain(record));
    if (!transformed.ok || transformed.value === null) continue;
    const sink = {
      ...transformed.value,
      kafkaPartition: r.partition,
      kafkaOffset: r.offset,
      originalTopic: r.topic,
    } as SinkRecord;
    originals.set(sink, original);
    out.push(sink);
  }
  return out;
};
