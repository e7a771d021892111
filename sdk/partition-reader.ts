/**
 * Reads one partition from an offset over the consumer's fetch, outside any group: until the high
 * watermark, or (following) by long polls until stopped. For tools that walk a log themselves (the
 * command line's `consume`, one partition after another, and its group member's per-partition readers).
 */
import type { Consumer, FetchedBatch } from './consumer.js';
import { SluiceError } from './errors.js';

/** How long one long poll waits for new records when following (the API allows up to 20000). */
export const FOLLOW_WAIT_MS = 10_000;

export interface PartitionReadOptions {
  topic: string;
  partition: number;
  offset: number;
  /** Keep polling at the end of the log instead of returning there. */
  follow: boolean;
  signal: AbortSignal;
  /**
   * Where to continue when the offset is outside [logStartOffset, highWatermark] (retention moved the
   * log start past a committed offset); undefined fails with OFFSET_OUT_OF_RANGE.
   */
  onOutOfRange?: (bounds: { offset: number; logStartOffset: number; highWatermark: number }) => number;
  /** Takes a fetch's records (never an empty batch); false stops reading (e.g. a record limit reached). */
  deliver(batch: FetchedBatch): Promise<boolean>;
}

/** Resolves `caught-up` at the end of the log (without `follow`), `stopped` when aborted or told to stop. */
export const readPartition = async (
  consumer: Pick<Consumer, 'fetch'>,
  options: PartitionReadOptions,
): Promise<'caught-up' | 'stopped'> => {
  const { topic, partition, follow, signal } = options;
  let offset = options.offset;
  while (!signal.aborted) {
    let batch;
    try {
      batch = await consumer.fetch(topic, partition, offset, {
        maxWaitMs: follow ? FOLLOW_WAIT_MS : 0,
        signal,
      });
    } catch (error) {
      if (error instanceof SluiceError && error.code === 'ABORTED') return 'stopped';
      const bounds = outOfRange(error);
      if (bounds && options.onOutOfRange) {
        offset = options.onOutOfRange({ offset, ...bounds });
        continue;
      }
      throw error;
    }
    if (batch.records.length > 0 && !(await options.deliver(batch))) return 'stopped';
    offset = batch.nextOffset;
    if (!follow && (batch.records.length === 0 || offset >= batch.highWatermark)) return 'caught-up';
  }
  return 'stopped';
};

const outOfRange = (error: unknown): { logStartOffset: number; highWatermark: number } | undefined => {
  if (!(error instanceof SluiceError) || error.code !== 'OFFSET_OUT_OF_RANGE') return undefined;
  const { logStartOffset, highWatermark } = error.details;
  return typeof logStartOffset === 'number' && typeof highWatermark === 'number'
    ? { logStartOffset, highWatermark }
    : undefined;
};
