/**
 * Fetch: stored RecordBatches straight from Sluice's binary fetch, whole batches with their true base
 * offsets (the client skips records before its fetch offset, as it does with a broker). The wait is
 * Kafka's: answer at once when min_bytes are there, else long-poll every partition of the request
 * together until the first brings data or max_wait_ms ends. max_bytes bounds the answer, except that
 * the first batch is returned even when it is larger (KIP-74). Every fetch is a full fetch: the
 * answer's session id 0 tells clients no incremental session was created, so the gateway keeps no state.
 * isolation_level=1 (read_committed) reads up to the last stable offset and answers it with the aborted
 * transactions among the returned batches, from Sluice's read_committed fetch.
 */
import type { Message } from '../../protocol/kafka/codec.js';
import { ERROR } from '../../protocol/kafka/error-codes.js';
import { Fetch } from '../../protocol/kafka/messages/fetch.js';
import type { ApiHandler, RequestContext } from '../api.js';
import { errorCodeOf } from '../api.js';
import type { IsolationLevel } from '../../lib/wire/types.js';
import type { FetchedPartition } from '../sluice.js';

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

interface Slot {
  topic: string;
  partition: number;
  fetchOffset: number;
  maxBytes: number;
  isolationLevel: IsolationLevel;
  result?: FetchedPartition;
  errorCode?: number;
  logStartOffset?: number;
  highWatermark?: number;
}

async function fetchSlot(
  slot: Slot,
  ctx: RequestContext,
  waitMs: number,
  signal: AbortSignal,
): Promise<void> {
  try {
    slot.result = await ctx.gateway.sluice.fetch(
      slot.topic,
      slot.partition,
      slot.fetchOffset,
      slot.maxBytes,
      waitMs,
      signal,
      slot.isolationLevel,
    );
    slot.errorCode = ERROR.NONE;
  } catch (error) {
    if (signal.aborted) return; // the wait ended elsewhere; keep what the first round found
    slot.result = undefined;
    slot.errorCode = errorCodeOf(error);
    const details = (error as { details?: Record<string, unknown> }).details ?? {};
    if (typeof details['logStartOffset'] === 'number') slot.logStartOffset = details['logStartOffset'];
    if (typeof details['highWatermark'] === 'number') slot.highWatermark = details['highWatermark'];
  }
}

const bytesOf = (slots: Slot[]): number => slots.reduce((n, s) => n + (s.result?.records.length ?? 0), 0);

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
    const slots: Slot[] = body.topics.flatMap((t) =>
      t.partitions.map((p) => ({
        topic: t.topic,
        partition: p.partition,
        fetchOffset: p.fetchOffset,
        isolationLevel,
        maxBytes: Math.max(
          1,
          Math.min(p.partitionMaxBytes, body.maxBytes > 0 ? body.maxBytes : p.partitionMaxBytes),
        ),
      })),
    );
    const closed = ctx.connection.closed;
    await Promise.all(slots.map((s) => fetchSlot(s, ctx, 0, closed)));
    const waitMs = Math.min(Math.max(0, body.maxWaitMs), ctx.gateway.maxFetchWaitMs);
    const waiting = slots.filter(
      (s) => s.errorCode === ERROR.NONE && s.result && s.result.records.length === 0,
    );
    if (waitMs > 0 && bytesOf(slots) < Math.max(1, body.minBytes) && waiting.length > 0 && !closed.aborted) {
      // One wait over all the request's partitions: the first that brings data ends it for all.
      const stop = new AbortController();
      const signal = AbortSignal.any([stop.signal, closed]);
      const timer = setTimeout(() => stop.abort(), waitMs + 50);
      await Promise.all(
        waiting.map(async (s) => {
          const before = s.result;
          await fetchSlot(s, ctx, waitMs, signal);
          if (s.result && s.result.records.length > 0) stop.abort();
          if (!s.result && s.errorCode === ERROR.NONE) s.result = before;
        }),
      );
      clearTimeout(timer);
    }
    // max_bytes over the whole answer; the first non-empty partition always goes (KIP-74).
    let budget = body.maxBytes > 0 ? body.maxBytes : Number.MAX_SAFE_INTEGER;
    let first = true;
    const partitionAnswer = (s: Slot): Message => {
      if (s.errorCode !== ERROR.NONE || !s.result)
        return {
          partitionIndex: s.partition,
          errorCode: s.errorCode ?? ERROR.UNKNOWN_SERVER_ERROR,
          highWatermark: s.highWatermark ?? -1,
          lastStableOffset: s.highWatermark ?? -1,
          logStartOffset: s.logStartOffset ?? -1,
          abortedTransactions: null,
          records: null,
        };
      let records = s.result.records;
      if (records.length > 0) {
        if (!first && records.length > budget) records = new Uint8Array(0);
        else {
          budget -= records.length;
          first = false;
        }
      }
      return {
        partitionIndex: s.partition,
        errorCode: ERROR.NONE,
        highWatermark: s.result.highWatermark,
        // Sluice reports the LSO to read_committed fetches, which stop there; a read_uncommitted
        // fetch reads to the high watermark, and its clients use no LSO.
        lastStableOffset: s.result.lastStableOffset ?? s.result.highWatermark,
        logStartOffset: s.result.logStartOffset,
        // The client drops the records of these (producer id, first offset) pairs up to their ABORT
        // marker, as it does with a broker's answer.
        abortedTransactions:
          isolationLevel === 'read_committed'
            ? records.length > 0
              ? (s.result.abortedTransactions ?? [])
              : []
            : null,
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
