/**
 * A producer with several requests in flight on one partition (Kafka's
 * max.in.flight.requests.per.connection, up to 5 with idempotence) can have a later batch reach its
 * commit before an earlier one. Kafka's broker then answers OUT_OF_ORDER_SEQUENCE_NUMBER and the client
 * sends the batch again; here the data object is already in every in-sync store, so the commit waits a
 * little for the earlier batches and tries again, instead of the client writing the data once more.
 * The commit's condition still refuses any sequence but the next one, so order and idempotence rest on
 * it alone; the wait only decides how soon a real gap is answered.
 */
import type { Clock } from '../../ports/clock.js';
import { SequenceGapError } from './commit.js';

/** First pause after a gap; each next one doubles, up to MAX_PAUSE_MS. */
const FIRST_PAUSE_MS = 2;
const MAX_PAUSE_MS = 16;

/** Runs `commit` again while it fails with a sequence gap, pausing at most `budgetMs` in all. */
export const commitInSequence = async <T>(
  clock: Pick<Clock, 'sleep'>,
  budgetMs: number,
  commit: () => Promise<T>,
): Promise<T> => {
  let paused = 0;
  let pause = FIRST_PAUSE_MS;
  for (;;) {
    try {
      return await commit();
    } catch (error) {
      if (!(error instanceof SequenceGapError) || paused + pause > budgetMs) throw error;
      await clock.sleep(pause);
      paused += pause;
      pause = Math.min(pause * 2, MAX_PAUSE_MS);
    }
  }
};
