/** Reads one partition from an offset: until the high watermark, or (following) by long polls until stopped. */
import type { Encoding, FetchedRecord, SluiceApi } from './api.js';
import { isAborted } from './api.js';
import { SluiceError } from '../sdk/errors.js';

/** How long one long poll waits for new records when following (API.md allows up to 20000). */
export const FOLLOW_WAIT_MS = 10_000;

export interface PartitionReaderOptions {
  api: SluiceApi;
  topic: string;
  partition: number;
  offset: number;
  /** Keep polling at the end of the log instead of returning there. */
  follow: boolean;
  encoding: Encoding;
  signal: AbortSignal;
  /**
   * Where to continue when the offset is outside [logStartOffset, highWatermark] (retention moved the
   * log start past a committed offset); undefined fails with OFFSET_OUT_OF_RANGE.
   */
  onOutOfRange?: (bounds: { offset: number; logStartOffset: number; highWatermark: number }) => number;
  /** Takes fetched records; false stops reading (e.g. --max reached). */
  deliver(records: FetchedRecord[], nextOffset: number): Promise<boolean>;
}

/** Resolves `caught-up` at the end of the log (without `follow`), `stopped` when aborted or told to stop. */
export const readPartition = async (options: PartitionReaderOptions): Promise<'caught-up' | 'stopped'> => {
  const { api, topic, partition, follow, encoding, signal } = options;
  let offset = options.offset;
  while (!signal.aborted) {
    let result;
    try {
      result = await api.fetch(topic, partition, {
        offset,
        maxWaitMs: follow ? FOLLOW_WAIT_MS : 0,
        encoding,
        signal,
      });
    } catch (error) {
      if (isAborted(error)) return 'stopped';
      const bounds = outOfRange(error);
      if (bounds && options.onOutOfRange) {
        offset = options.onOutOfRange({ offset, ...bounds });
        continue;
      }
      throw error;
    }
    if (result.records.length > 0 && !(await options.deliver(result.records, result.nextOffset))) {
      return 'stopped';
    }
    offset = result.nextOffset;
    if (!follow && (result.records.length === 0 || offset >= result.highWatermark)) return 'caught-up';
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
