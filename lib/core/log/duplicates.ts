/**
 * Idempotency-Key retries of a JSON produce: a partition that already committed this request answers
 * from the original commit (its offsets and timestamps), found in the partition's tail or its K# item;
 * a different request under the same key is IDEMPOTENCY_KEY_REUSED.
 */
import { keys } from '../keys.js';
import type { Topic } from '../topics/model.js';
import type { LogContext } from './context.js';
import { readPartitionState } from './context.js';
import { checkSameRequest, decodeMark, markHash } from './idempotency.js';
import type { PartitionWrite } from './partition-writes.js';

/** With an Idempotency-Key: partitions that already hold this request answer from the original commit. */
export const findDuplicates = async (
  ctx: LogContext,
  topic: Topic,
  writes: readonly PartitionWrite[],
  ikHash: string,
): Promise<void> => {
  await Promise.all(
    writes.map(async (w) => {
      const state = await readPartitionState(ctx.store, topic, w.partition);
      ctx.leadership.remember(topic, w.partition, state);
      w.ikGeneration = state.idempotencyKeysGeneration;
      const inTail = state.tail.findIndex(
        (e) => e.idempotencyMark !== undefined && markHash(e.idempotencyMark) === ikHash,
      );
      if (inTail >= 0) {
        let base = state.tailBase;
        for (let i = 0; i < inTail; i++) base += state.tail[i]!.offsetCount;
        const original = state.tail[inTail]!;
        answerFromOriginal(topic, w, base, {
          idempotencyMark: original.idempotencyMark!,
          maxTimestamp: original.maxTimestamp,
        });
        return;
      }
      const old = await ctx.store.get(keys.idempotencyKey(topic.topicId, w.partition, ikHash), {
        consistent: true,
      });
      if (old) {
        answerFromOriginal(topic, w, old['o'] as number, {
          idempotencyMark: old['m'] as string,
          maxTimestamp: old['t'] as number,
        });
      }
    }),
  );
};

/**
 * Marks `w` as answered by its original commit, unless that commit was of a different request. Only
 * called with an Idempotency-Key, so `w` carries the request's fingerprint. `original`: its tail
 * entry's mark and largest timestamp, or the K# item's.
 */
export const answerFromOriginal = (
  topic: Topic,
  w: PartitionWrite,
  baseOffset: number,
  original: { idempotencyMark: string; maxTimestamp: number },
): void => {
  const mark = decodeMark(original.idempotencyMark);
  checkSameRequest(mark, w.fingerprint!, `${topic.name}-${w.partition}`);
  w.duplicate = { baseOffset, requestTime: mark.requestTime, maxTimestamp: original.maxTimestamp };
};

/**
 * A JSON record's timestamp in the answer to a retry of its request: the original's. On a LogAppendTime
 * topic its append time, which was its request time; else the record's own, or the request time for a
 * record that carried none.
 */
export const duplicateTimestamp = (
  original: { requestTime: number },
  logAppend: boolean,
  recordTimestamp: number | undefined,
): number => (logAppend ? original.requestTime : (recordTimestamp ?? original.requestTime));
