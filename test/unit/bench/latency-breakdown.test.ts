import { describe, expect, it } from 'vitest';
import { batchPhases, breakdown } from '../../../bench/latency-breakdown.js';
import type { RequestTrace, Span } from '../../../bench/trace.js';

const span = (kind: Span['kind'], startMs: number, endMs: number): Span => ({
  kind,
  label: kind,
  startMs,
  endMs,
});

/**
 * Messages handed at 0 and 4, sealed at 5, HTTP from 6 to 40, handler 8 to 38: first call at 9,
 * three parallel PUTs 9–15, 9–17 and 10–16, the commit 18–23 (a second attempt 25–28 after a gap),
 * a materializing write 29–35.
 */
const trace = (id: number, offset = 0): RequestTrace => ({
  id,
  handedAt: [0 + offset, 4 + offset],
  sealedAt: 5 + offset,
  http: [{ startMs: 6 + offset, endMs: 40 + offset, status: 200 }],
  handler: [{ startMs: 8 + offset, endMs: 38 + offset }],
  spans: [
    span('put', 9, 15),
    span('put', 9, 17),
    span('put', 10, 16),
    span('commit', 18, 23),
    span('commit', 25, 28),
    span('write', 29, 35),
  ].map((s) => ({ ...s, startMs: s.startMs + offset, endMs: s.endMs + offset })),
  ackedAt: 41 + offset,
});

describe('the latency breakdown', () => {
  it('cuts a batch into consecutive phases that add up to its latency', () => {
    const phases = batchPhases(trace(1))!;
    expect(phases).toEqual({
      sdkQueue: 1,
      gatewayIn: 2,
      validate: 1,
      reads: 0,
      puts: 8, // the union of the three parallel PUTs, 9–17
      commit: 8, // 5 + 3, the gap between them is handler time
      afterCommit: 6,
      handlerCpu: 7, // 38 − 9 − (8 + 8 + 6) = 7: 17–18, 23–25, 28–29, 35–38
      gatewayOut: 2,
      retries: 0,
      settle: 1,
      commitAttempts: 2,
      httpAttempts: 1,
    });
    const { commitAttempts: _c, httpAttempts: _h, ...durations } = phases;
    // The first message also lingered 5 ms: 5 + 36 = its 41 ms.
    expect(5 + Object.values(durations).reduce((a, b) => a + b, 0)).toBe(41);
  });

  it('puts a retried request’s earlier attempt under retries, and skips unacknowledged batches', () => {
    const t = trace(2);
    t.http.unshift({ startMs: 6, endMs: 6.5, status: 503 });
    t.http[1]!.startMs = 7;
    expect(batchPhases(t)).toMatchObject({ sdkQueue: 1, retries: 1, gatewayIn: 1, httpAttempts: 2 });
    expect(batchPhases({ ...trace(3), ackedAt: undefined })).toBeUndefined();
    expect(batchPhases({ ...trace(4), handler: [] })).toBeUndefined();
  });

  it('reports the slowest 1 % of messages and what their batches did', () => {
    // 98 quick batches of two messages (37 and 41 ms), then two whose answer took 100 ms longer.
    const traces = Array.from({ length: 100 }, (_, i) => trace(i, i * 1000));
    for (const slow of traces.slice(98)) {
      slow.http[0]!.endMs += 100;
      slow.ackedAt! += 100;
    }
    const b = breakdown(traces);
    expect([b.messages, b.batches, b.batchesWithCommitRetries, b.batchesWithHttpRetries]).toEqual([
      200, 100, 100, 0,
    ]);
    expect([b.publishP50Ms, b.publishP99Ms]).toEqual([41, 137]);
    expect(b.slowest).toEqual({
      messages: 4,
      batches: 2,
      withAfterCommitWrites: 2,
      withCommitRetries: 2,
      withHttpRetries: 0,
    });
    expect(b.slowestMeanMs.gatewayOut).toBe(102);
    expect(b.slowestMeanMs.accumulate).toBe(3);
    expect(b.meanMs.gatewayOut).toBe(4);
  });
});
