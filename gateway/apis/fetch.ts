/**
 * Fetch: one Kafka Fetch is one POST /v1/fetch over all its partitions, as a broker serves a member's
 * partitions in one request: one long poll, so a caught-up consumer holds one Sluice fetch however many
 * partitions it reads. Stored RecordBatches come back whole with their true base offsets (the client
 * skips records before its fetch offset, as it does with a broker). The wait is Kafka's: answer at once
 * with min_bytes <= 0 or an error; else Sluice answers as soon as any partition has data, and while
 * fewer than min_bytes came and max_wait_ms has time left the gateway asks again from where that answer
 * ended. max_bytes bounds the answer and partition_max_bytes each partition, except that the first
 * batch is returned even when larger (KIP-74). Every fetch is a full fetch: the answer's session id 0
 * tells clients no incremental session was created, so the gateway keeps no state. isolation_level=1
 * (read_committed) reads up to the last stable offset and answers it with the aborted transactions
 * among the returned batches. A partition's error is its own: Sluice's per-partition errors, and a
 * topic the client may not read (the HTTP API refuses the whole request: the gateway then asks topic by
 * topic, at once, so only that topic's partitions carry TOPIC_AUTHORIZATION_FAILED).
 */
import type { Message } from '../../protocol/kafka/codec.js';
import { ERROR } from '../../protocol/kafka/error-codes.js';
import { Fetch } from '../../protocol/kafka/messages/fetch.js';
import { MAX_FETCH_BYTES } from '../../protocol/fetch-limits.js';
import { EDGE_LIMITS, isValidTopicName } from '../../lib/http/limits.js';
import type { IsolationLevel } from '../../lib/wire/types.js';
import type { ApiHandler, RequestContext } from '../api.js';
import { byTopic, errorCodeOf } from '../api.js';
import { SluiceError } from '../../sdk/errors.js';
import type { AbortedTransaction, PartitionFetchOutcome, PartitionFetchRequest } from '../sluice.js';

/** Fetch's isolation_level: 0 read_uncommitted, 1 read_committed. */
export const READ_COMMITTED = 1;

interface FetchRequest {
  maxWaitMs: number;
  minBytes: number;
  maxBytes: number;
  isolationLevel: number;
  topics: {
    topic: string;
    partitions: { partition: number; fetchOffset: number; partitionMaxBytes: number }[];
  }[];
}

/** A partition of the Kafka request and what the gateway has for it so far. */
interface Slot {
  topic: string;
  partition: number;
  /** Where the next round reads from: the fetch offset, then where the last answer ended. */
  offset: number;
  /** Kafka's partition_max_bytes, capped at the API's. */
  maxBytes: number;
  /** Batches gathered over the rounds, in offset order. */
  batches: Uint8Array[];
  bytes: number;
  errorCode: number;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  aborted: AbortedTransaction[];
  /** Whether Sluice has answered this partition without an error (its bounds are known). */
  answered: boolean;
  /** The slot of the same partition earlier in the request: that one is read, this one answers empty. */
  original?: Slot;
}

/** Kafka's answer to a partition Sluice was never asked about, before any request goes out. */
const localError = (topic: string, partition: number, fetchOffset: number): number | undefined => {
  if (!isValidTopicName(topic) || partition < 0) return ERROR.UNKNOWN_TOPIC_OR_PARTITION;
  if (fetchOffset < 0) return ERROR.OFFSET_OUT_OF_RANGE;
  return undefined;
};

const clampBytes = (n: number): number => Math.max(1, Math.min(n, MAX_FETCH_BYTES));

const chunks = <T>(list: readonly T[], size: number): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
};

/**
 * One round: the slots' partitions in as few POST /v1/fetch as the API allows (one up to 1000
 * partitions). A request the HTTP API refuses as a whole for a topic the caller may not read is asked
 * again topic by topic, without waiting (an error answers a Kafka fetch at once). Resolves each
 * partition's outcome in order, a failure of the whole request as every partition's error; never rejects.
 */
async function ask(
  slots: readonly PartitionFetchRequest[],
  request: { maxBytes: number; maxWaitMs: number; isolationLevel: IsolationLevel },
  ctx: RequestContext,
  signal: AbortSignal,
): Promise<PartitionFetchOutcome[]> {
  const parts = chunks(slots, EDGE_LIMITS.maxFetchPartitions);
  if (parts.length === 1) return askOnce(parts[0]!, request, ctx, signal);
  // Over the API's partition limit: one long poll per thousand partitions, the first answer with
  // something to say ends the others' waits, and those are asked again without one.
  const stop = new AbortController();
  const either = AbortSignal.any([stop.signal, signal]);
  const answers = await Promise.all(
    parts.map(async (part) => {
      const outcomes = await askOnce(part, request, ctx, either);
      if (stop.signal.aborted && !signal.aborted && outcomes.every(cutShort)) return undefined;
      if (outcomes.some(worthAnswering)) stop.abort();
      return outcomes;
    }),
  );
  const again = await Promise.all(
    answers.map((a, i) => a ?? askOnce(parts[i]!, { ...request, maxWaitMs: 0 }, ctx, signal)),
  );
  return again.flat();
}

/** The ABORTED code the SDK's transport gives a request whose signal ended it. */
const ABORTED = 'ABORTED';
const cutShort = (o: PartitionFetchOutcome): boolean => 'error' in o && o.error.code === ABORTED;
const worthAnswering = (o: PartitionFetchOutcome): boolean => 'error' in o || o.records.length > 0;

async function askOnce(
  slots: readonly PartitionFetchRequest[],
  request: { maxBytes: number; maxWaitMs: number; isolationLevel: IsolationLevel },
  ctx: RequestContext,
  signal: AbortSignal,
): Promise<PartitionFetchOutcome[]> {
  try {
    return await ctx.gateway.sluice.fetchMany({ ...request, partitions: slots }, signal);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const topics = byTopic([...slots]);
    if (code === 'TOPIC_AUTHORIZATION_FAILED' && topics.size > 1 && !signal.aborted) {
      const answers = await Promise.all(
        [...topics.values()].map((list) => askOnce(list, { ...request, maxWaitMs: 0 }, ctx, signal)),
      );
      const byId = new Map(answers.flat().map((o) => [`${o.topic}\u0000${o.partition}`, o]));
      return slots.map((s) => byId.get(`${s.topic}\u0000${s.partition}`)!);
    }
    // The whole request failed (Sluice unreachable, throttled, refused): each partition says so.
    const failure = signal.aborted
      ? new SluiceError(ABORTED, 'the connection closed', { retriable: false })
      : error instanceof SluiceError
        ? error
        : new SluiceError('UNKNOWN_SERVER_ERROR', 'the gateway could not reach Sluice', {
            retriable: true,
            cause: error,
          });
    return slots.map((s) => ({ topic: s.topic, partition: s.partition, error: failure }));
  }
}

/**
 * Adds a round's outcome to its slot. Batches over the answer's or the partition's budget are left for
 * the client's next fetch, but for the answer's first (KIP-74).
 */
function take(slot: Slot, outcome: PartitionFetchOutcome, budget: { left: number; first: boolean }): void {
  if ('error' in outcome) {
    // Data gathered in an earlier round stands; the error shows on the client's next fetch.
    if (slot.answered) return;
    slot.errorCode = errorCodeOf(outcome.error);
    const { highWatermark, logStartOffset } = outcome.error.details;
    if (typeof highWatermark === 'number') slot.highWatermark = slot.lastStableOffset = highWatermark;
    if (typeof logStartOffset === 'number') slot.logStartOffset = logStartOffset;
    return;
  }
  slot.answered = true;
  slot.errorCode = ERROR.NONE;
  slot.highWatermark = outcome.highWatermark;
  // Sluice reports the LSO to read_committed fetches, which stop there; a read_uncommitted fetch reads
  // to the high watermark, and its clients use no LSO.
  slot.lastStableOffset = outcome.lastStableOffset ?? outcome.highWatermark;
  slot.logStartOffset = outcome.logStartOffset;
  const size = outcome.records.length;
  if (size === 0) return;
  // max_bytes over the whole answer and partition_max_bytes per partition; the first batch of the
  // answer always goes (KIP-74), so a client always progresses.
  const fits = size <= budget.left && slot.bytes + size <= slot.maxBytes;
  if (!budget.first && !fits) return;
  budget.first = false;
  budget.left = Math.max(0, budget.left - size);
  slot.batches.push(outcome.records);
  slot.bytes += size;
  slot.offset = outcome.nextOffset;
  // The client drops the records of these (producer id, first offset) pairs up to their ABORT marker.
  for (const a of outcome.abortedTransactions ?? [])
    if (!slot.aborted.some((b) => b.producerId === a.producerId && b.firstOffset === a.firstOffset))
      slot.aborted.push(a);
}

export const fetch: ApiHandler = {
  schema: Fetch,
  minVersion: 4,
  maxVersion: 12,
  errorResponse(request, errorCode) {
    const { topics } = request as unknown as FetchRequest;
    return {
      errorCode: ERROR.NONE,
      responses: topics.map((t) => ({
        topic: t.topic,
        partitions: t.partitions.map((p) => ({
          partitionIndex: p.partition,
          errorCode,
          highWatermark: -1,
          records: null,
        })),
      })),
    };
  },
  async handle(request, ctx) {
    const body = request as unknown as FetchRequest;
    const isolationLevel: IsolationLevel =
      body.isolationLevel === READ_COMMITTED ? 'read_committed' : 'read_uncommitted';
    const read = new Map<string, Slot>();
    const slots: Slot[] = body.topics.flatMap((t) =>
      t.partitions.map((p): Slot => {
        const id = `${t.topic}\u0000${p.partition}`;
        const errorCode = localError(t.topic, p.partition, p.fetchOffset) ?? ERROR.NONE;
        const original = errorCode === ERROR.NONE ? read.get(id) : undefined;
        const slot: Slot = {
          topic: t.topic,
          partition: p.partition,
          offset: p.fetchOffset,
          maxBytes: clampBytes(p.partitionMaxBytes),
          batches: [],
          bytes: 0,
          errorCode,
          highWatermark: -1,
          lastStableOffset: -1,
          logStartOffset: -1,
          aborted: [],
          answered: false,
          ...(original ? { original } : {}),
        };
        if (errorCode === ERROR.NONE && !original) read.set(id, slot);
        return slot;
      }),
    );
    const closed = ctx.connection.closed;
    const maxBytes = body.maxBytes > 0 ? body.maxBytes : Number.MAX_SAFE_INTEGER;
    const budget = { left: maxBytes, first: true };
    const waitMs = Math.min(Math.max(0, body.maxWaitMs), ctx.gateway.maxFetchWaitMs);
    const deadline = Date.now() + waitMs;
    let asking = slots.filter((s) => s.errorCode === ERROR.NONE && !s.original);
    // An error of the request's own answers the fetch at once, as a broker's does.
    let wait = body.minBytes > 0 && slots.every((s) => s.errorCode === ERROR.NONE) ? waitMs : 0;
    while (asking.length > 0 && !closed.aborted) {
      const partitions = asking.map((s) => ({
        topic: s.topic,
        partition: s.partition,
        offset: s.offset,
        maxBytes: clampBytes(s.maxBytes - s.bytes),
      }));
      const outcomes = await ask(
        partitions,
        { maxBytes: clampBytes(budget.left), maxWaitMs: wait, isolationLevel },
        ctx,
        closed,
      );
      if (closed.aborted) break;
      outcomes.forEach((o, i) => take(asking[i]!, o, budget));
      const gathered = slots.reduce((n, s) => n + s.bytes, 0);
      const remaining = deadline - Date.now();
      const more =
        wait > 0 &&
        gathered > 0 &&
        gathered < body.minBytes &&
        remaining > 0 &&
        budget.left > 0 &&
        outcomes.every((o) => !('error' in o));
      if (!more) break;
      // Fewer than min_bytes came: ask again from where this answer ended, for what time is left.
      asking = asking.filter((s) => s.bytes < s.maxBytes);
      wait = remaining;
    }
    const partitionAnswer = (slot: Slot): Message => {
      // A repeated partition answers with the numbers of its first mention, and no records twice.
      const s = slot.original ?? slot;
      if (s.errorCode !== ERROR.NONE || !s.answered)
        return {
          partitionIndex: s.partition,
          errorCode: s.errorCode === ERROR.NONE ? ERROR.UNKNOWN_SERVER_ERROR : s.errorCode,
          highWatermark: s.highWatermark,
          lastStableOffset: s.lastStableOffset,
          logStartOffset: s.logStartOffset,
          abortedTransactions: null,
          records: null,
        };
      const records = slot.original ? new Uint8Array(0) : Buffer.concat(s.batches);
      return {
        partitionIndex: s.partition,
        errorCode: ERROR.NONE,
        highWatermark: s.highWatermark,
        lastStableOffset: s.lastStableOffset,
        logStartOffset: s.logStartOffset,
        abortedTransactions:
          isolationLevel === 'read_committed' ? (records.length > 0 ? s.aborted : []) : null,
        preferredReadReplica: -1,
        records,
      };
    };
    const responses: Message[] = [];
    let i = 0;
    for (const t of body.topics) {
      const partitions: Message[] = [];
      for (let k = 0; k < t.partitions.length; k++) partitions.push(partitionAnswer(slots[i++]!));
      responses.push({ topic: t.topic, partitions });
    }
    return { throttleTimeMs: 0, errorCode: ERROR.NONE, sessionId: 0, responses };
  },
};
