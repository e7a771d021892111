/**
 * Where the publish latency of the slowest messages went: each message's time from hand-over to
 * acknowledgement cut into consecutive phases of its batch's trace (bench/trace.ts). Phases inside the
 * handler are wall-clock unions of the storage calls of one kind, so parallel PUTs count once; what no
 * storage call covers is the handler's own CPU (validation, encoding answers) and scheduling delay.
 */
import type { RequestTrace, Span, SpanKind } from './trace.js';
import { quantile, round } from './stats.js';

export const PHASES = [
  /** Linger, and waiting while the partition has a request in flight (the producer's accumulator). */
  'accumulate',
  /** Sealed → the HTTP call starts: the SDK's per-partition queue and the batch's encoding. */
  'sdkQueue',
  /** The HTTP call starts → the handler starts: the request's bytes over the gateway. */
  'gatewayIn',
  /** Handler CPU before its first storage call: routing, validating batches, CRC-32C. */
  'validate',
  /** Metadata reads on the way (leadership, producer ids), outside other calls. */
  'reads',
  /** The data object's PUTs to the in-sync stores (in parallel: their union). */
  'puts',
  /** The commit UpdateItem(s), one per attempt. */
  'commit',
  /** Storage writes after the first commit started: materializing the tail, ISR changes. */
  'afterCommit',
  /** Handler time covered by no storage call, after the first one. */
  'handlerCpu',
  /** The handler ends → the answer is back: the response over the gateway. */
  'gatewayOut',
  /** Earlier HTTP attempts of the batch that failed and were retried, and their backoff. */
  'retries',
  /** The answer is back → the message's acknowledgement is recorded. */
  'settle',
] as const;
export type Phase = (typeof PHASES)[number];

export type BatchPhases = Record<Exclude<Phase, 'accumulate'>, number> & {
  commitAttempts: number;
  httpAttempts: number;
};

/** Total length of the union of intervals. */
const unionMs = (spans: readonly { startMs: number; endMs: number }[]): number => {
  const sorted = [...spans].sort((a, b) => a.startMs - b.startMs);
  let total = 0;
  let end = Number.NEGATIVE_INFINITY;
  for (const s of sorted) {
    if (s.endMs <= end) continue;
    total += s.endMs - Math.max(s.startMs, end);
    end = s.endMs;
  }
  return total;
};

const ofKind = (spans: readonly Span[], ...kinds: SpanKind[]) => spans.filter((s) => kinds.includes(s.kind));

/** A finished batch's phases; undefined if it never reached a handler or was not acknowledged. */
export const batchPhases = (trace: RequestTrace): BatchPhases | undefined => {
  const last = trace.http.at(-1);
  const first = trace.http[0];
  const handler = trace.handler.at(-1);
  if (!first || !last || !handler || trace.ackedAt === undefined || last.endMs === 0) return undefined;
  // Only the last attempt's storage calls count: earlier ones belong to 'retries'.
  const spans = trace.spans.filter((s) => s.startMs >= handler.startMs && s.endMs <= handler.endMs);
  const firstOp = Math.min(handler.endMs, ...spans.map((s) => s.startMs));
  const commits = ofKind(spans, 'commit');
  const commitStart = Math.min(handler.endMs, ...commits.map((s) => s.startMs));
  const after = spans.filter((s) => s.kind !== 'commit' && s.startMs >= commitStart);
  const before = spans.filter((s) => s.startMs < commitStart);
  const puts = unionMs(ofKind(before, 'put'));
  const reads = Math.max(0, unionMs(ofKind(before, 'read', 'write', 'put')) - puts);
  const commit = unionMs(commits);
  const afterCommit = Math.max(0, unionMs([...commits, ...after]) - commit);
  const covered = unionMs(spans);
  return {
    sdkQueue: first.startMs - trace.sealedAt,
    gatewayIn: handler.startMs - last.startMs,
    validate: firstOp - handler.startMs,
    reads,
    puts,
    commit,
    afterCommit,
    handlerCpu: Math.max(0, handler.endMs - firstOp - covered),
    gatewayOut: last.endMs - handler.endMs,
    retries: last.startMs - first.startMs,
    settle: trace.ackedAt - last.endMs,
    commitAttempts: commits.length,
    httpAttempts: trace.http.length,
  };
};

export interface Breakdown {
  messages: number;
  batches: number;
  /** Batches whose commit was tried more than once (a sequence gap waited on), or sent over HTTP more than once. */
  batchesWithCommitRetries: number;
  batchesWithHttpRetries: number;
  publishP50Ms: number;
  publishP99Ms: number;
  /** Mean ms per phase over all messages, and over the slowest 1 % (at or above the p99). */
  meanMs: Record<Phase, number>;
  slowestMeanMs: Record<Phase, number>;
  slowest: {
    messages: number;
    batches: number;
    /** Of those batches: how many materialized or changed the ISR after the commit, retried a commit, retried HTTP. */
    withAfterCommitWrites: number;
    withCommitRetries: number;
    withHttpRetries: number;
  };
}

/** The per-phase picture of every acknowledged message of `traces`. */
export const breakdown = (traces: readonly RequestTrace[]): Breakdown => {
  const rows: { latency: number; phases: Record<Phase, number>; batch: BatchPhases }[] = [];
  const all: BatchPhases[] = [];
  for (const t of traces) {
    const b = batchPhases(t);
    if (!b) continue;
    all.push(b);
    for (const handed of t.handedAt) {
      const { commitAttempts: _c, httpAttempts: _h, ...phases } = b;
      rows.push({
        latency: t.ackedAt! - handed,
        phases: { accumulate: t.sealedAt - handed, ...phases },
        batch: b,
      });
    }
  }
  const sorted = rows.map((r) => r.latency).sort((a, b) => a - b);
  const p99 = quantile(sorted, 0.99);
  const slow = rows.filter((r) => r.latency >= p99);
  const mean = (of: typeof rows): Record<Phase, number> =>
    Object.fromEntries(
      PHASES.map((p) => [p, round(of.reduce((s, r) => s + r.phases[p], 0) / Math.max(1, of.length), 2)]),
    ) as Record<Phase, number>;
  const batches = [...new Set(slow.map((r) => r.batch))];
  return {
    messages: rows.length,
    batches: all.length,
    batchesWithCommitRetries: all.filter((b) => b.commitAttempts > 1).length,
    batchesWithHttpRetries: all.filter((b) => b.httpAttempts > 1).length,
    publishP50Ms: round(quantile(sorted, 0.5), 2),
    publishP99Ms: round(p99, 2),
    meanMs: mean(rows),
    slowestMeanMs: mean(slow),
    slowest: {
      messages: slow.length,
      batches: batches.length,
      withAfterCommitWrites: batches.filter((b) => b.afterCommit > 0).length,
      withCommitRetries: batches.filter((b) => b.commitAttempts > 1).length,
      withHttpRetries: batches.filter((b) => b.httpAttempts > 1).length,
    },
  };
};
