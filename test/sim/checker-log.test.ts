/**
 * The history checker on hand-written histories: each violation it claims to find, found, and the
 * legitimate look-alikes (retried non-idempotent writes, concurrent reads) not reported.
 */
import { describe, expect, it } from 'vitest';
import type { Violation } from '../support/checker.js';
import { VIOLATIONS, check } from '../support/checker.js';
import type { Outcome, PollOp, SendOp } from '../support/history.js';
import { HistoryRecorder } from '../support/history.js';

const recorder = () => new HistoryRecorder(() => 0);

const send = (
  rec: HistoryRecorder,
  s: {
    process?: string;
    write: string;
    values: string[];
    outcome: Outcome;
    offsets?: number[];
    idempotent?: boolean;
    partition?: number;
  },
) =>
  rec.invoke<SendOp>('send', s.process ?? 'p', {
    write: s.write,
    idempotent: s.idempotent ?? true,
    partition: s.partition ?? 0,
    values: s.values,
  })(s.outcome, s.offsets ? { offsets: s.offsets } : {});

const poll = (
  rec: HistoryRecorder,
  p: {
    process?: string;
    offset: number;
    records: [number, string][];
    hw: number;
    next?: number;
    partition?: number;
  },
) => {
  const last = p.records.at(-1);
  return rec.invoke<PollOp>('poll', p.process ?? 'c', {
    partition: p.partition ?? 0,
    offset: p.offset,
    records: [],
  })('ok', {
    records: p.records.map(([offset, value]) => ({ offset, value })),
    highWatermark: p.hw,
    nextOffset: p.next ?? (last ? last[0] + 1 : p.offset),
    logStartOffset: 0,
  });
};

const final = (rec: HistoryRecorder, records: [number, string][], hw = records.length, partition = 0) =>
  rec.final({
    partition,
    highWatermark: hw,
    logStartOffset: 0,
    records: records.map(([offset, value]) => ({ offset, value })),
  });

/** Exactly the given violations, nothing else. */
const expectOnly = (rec: HistoryRecorder, expected: Partial<Record<Violation, number>>) => {
  const report = check(rec.history());
  const found = Object.fromEntries(
    VIOLATIONS.filter((k) => report.counts[k] > 0).map((k) => [k, report.counts[k]]),
  );
  expect(found).toEqual(expected);
  expect(report.valid).toBe(Object.keys(expected).length === 0);
  return report;
};

describe('a clean history', () => {
  it('has no violations and counts what was acknowledged', () => {
    const rec = recorder();
    send(rec, { write: 'w1', values: ['a', 'b'], outcome: 'ok', offsets: [0, 1] });
    send(rec, { write: 'w2', values: ['c'], outcome: 'info' });
    send(rec, { write: 'w2', values: ['c'], outcome: 'ok', offsets: [2] });
    send(rec, { write: 'w3', values: ['d'], outcome: 'fail' });
    poll(rec, { offset: 0, records: [[0, 'a']], hw: 3 });
    poll(rec, {
      offset: 1,
      records: [
        [1, 'b'],
        [2, 'c'],
      ],
      hw: 3,
    });
    final(rec, [
      [0, 'a'],
      [1, 'b'],
      [2, 'c'],
    ]);
    const report = expectOnly(rec, {});
    expect(report.counts).toMatchObject({ acked: 3, sends: 4, polls: 2, ambiguous: 1, finalRecords: 3 });
    expect(report.examples).toEqual({});
  });
});

describe('lost writes', () => {
  it('finds an acknowledged value missing, replaced, or past the final high watermark', () => {
    const rec = recorder();
    send(rec, { write: 'w1', values: ['a', 'b', 'c'], outcome: 'ok', offsets: [0, 1, 2] });
    send(rec, { write: 'w2', values: ['d'], outcome: 'ok', offsets: [5] });
    final(
      rec,
      [
        [0, 'a'],
        [2, 'X'],
      ],
      3,
    );
    const report = expectOnly(rec, { lost: 3, phantoms: 1 });
    expect(report.examples.lost?.map((e) => (e as { why: string }).why)).toEqual([
      'offset missing from the final read',
      'a different record is at that offset',
      'offset is at or past the final high watermark 3',
    ]);
  });
});

describe('duplicates', () => {
  it('reports an idempotent write at two offsets even after an ambiguous attempt', () => {
    const rec = recorder();
    send(rec, { write: 'w1', values: ['a'], outcome: 'info' });
    send(rec, { write: 'w1', values: ['a'], outcome: 'ok', offsets: [1] });
    final(rec, [
      [0, 'a'],
      [1, 'a'],
    ]);
    expectOnly(rec, { duplicates: 1 });
  });

  it('allows a retried non-idempotent write one copy per attempt that was not a definite failure', () => {
    const rec = recorder();
    send(rec, { write: 'w1', values: ['a'], outcome: 'info', idempotent: false });
    send(rec, { write: 'w1', values: ['a'], outcome: 'ok', offsets: [1], idempotent: false });
    final(rec, [
      [0, 'a'],
      [1, 'a'],
    ]);
    const report = expectOnly(rec, {});
    expect(report.counts.allowedDuplicates).toBe(1);
  });

  it('but not more copies than attempts', () => {
    const rec = recorder();
    send(rec, { write: 'w1', values: ['a'], outcome: 'fail', idempotent: false });
    send(rec, { write: 'w1', values: ['a'], outcome: 'ok', offsets: [0], idempotent: false });
    final(rec, [
      [0, 'a'],
      [1, 'a'],
    ]);
    expectOnly(rec, { duplicates: 1 });
  });
});

describe('reads', () => {
  it('finds two values at one offset across reads', () => {
    const rec = recorder();
    send(rec, { write: 'w1', values: ['a'], outcome: 'info' });
    send(rec, { write: 'w2', values: ['b'], outcome: 'info' });
    poll(rec, { offset: 0, records: [[0, 'a']], hw: 1 });
    final(rec, [[0, 'b']]);
    expectOnly(rec, { inconsistentOffsets: 1 });
  });

  it('finds phantoms: a definitely failed write, or a value nobody sent', () => {
    const rec = recorder();
    send(rec, { write: 'w1', values: ['a'], outcome: 'fail' });
    send(rec, { write: 'w1', values: ['a'], outcome: 'fail' });
    final(rec, [
      [0, 'a'],
      [1, 'zzz'],
    ]);
    expectOnly(rec, { phantoms: 2 });
  });

  it('finds polls going backwards within a poll and between a consumer’s polls', () => {
    const rec = recorder();
    send(rec, { write: 'w', values: ['a', 'b', 'c'], outcome: 'ok', offsets: [0, 1, 2] });
    poll(rec, {
      process: 'c1',
      offset: 0,
      records: [
        [1, 'b'],
        [0, 'a'],
      ],
      hw: 3,
      next: 2,
    });
    poll(rec, {
      process: 'c2',
      offset: 0,
      records: [
        [0, 'a'],
        [1, 'b'],
      ],
      hw: 3,
    });
    poll(rec, {
      process: 'c2',
      offset: 2,
      records: [
        [1, 'b'],
        [2, 'c'],
      ],
      hw: 3,
    });
    final(rec, [
      [0, 'a'],
      [1, 'b'],
      [2, 'c'],
    ]);
    const report = check(rec.history());
    expect(report.counts.nonMonotonicPolls).toBe(2);
  });

  it('finds skips: a late start, a gap, an empty poll below the high watermark, a nextOffset past the records', () => {
    const rec = recorder();
    send(rec, { write: 'w', values: ['a', 'b', 'c', 'd'], outcome: 'ok', offsets: [0, 1, 2, 3] });
    poll(rec, { offset: 0, records: [[1, 'b']], hw: 4 });
    poll(rec, {
      offset: 0,
      records: [
        [0, 'a'],
        [2, 'c'],
      ],
      hw: 4,
    });
    poll(rec, { offset: 1, records: [], hw: 4 });
    poll(rec, { offset: 0, records: [[0, 'a']], hw: 4, next: 3 });
    poll(rec, { offset: 4, records: [], hw: 4 });
    final(rec, [
      [0, 'a'],
      [1, 'b'],
      [2, 'c'],
      [3, 'd'],
    ]);
    expectOnly(rec, { pollSkips: 4 });
  });

  it('finds a record at or above the high watermark the poll reported', () => {
    const rec = recorder();
    send(rec, { write: 'w1', values: ['a'], outcome: 'ok', offsets: [0] });
    send(rec, { write: 'w2', values: ['b'], outcome: 'info' });
    poll(rec, {
      offset: 0,
      records: [
        [0, 'a'],
        [1, 'b'],
      ],
      hw: 1,
    });
    final(rec, [
      [0, 'a'],
      [1, 'b'],
    ]);
    expectOnly(rec, { beyondHighWatermark: 1 });
  });
});

describe('high watermark', () => {
  it('finds a read that saw less than one completed before it began, and a final read below what was seen', () => {
    const rec = recorder();
    send(rec, { write: 'w', values: ['a', 'b', 'c'], outcome: 'ok', offsets: [0, 1, 2] });
    poll(rec, {
      process: 'c1',
      offset: 0,
      records: [
        [0, 'a'],
        [1, 'b'],
        [2, 'c'],
      ],
      hw: 3,
    });
    poll(rec, {
      process: 'c2',
      offset: 0,
      records: [
        [0, 'a'],
        [1, 'b'],
      ],
      hw: 2,
    });
    final(rec, [
      [0, 'a'],
      [1, 'b'],
      [2, 'c'],
    ]);
    const report = check(rec.history());
    expect(report.counts.highWatermarkBackwards).toBe(1);
  });

  it('does not order reads that overlap in time', () => {
    const rec = recorder();
    send(rec, { write: 'w', values: ['a', 'b'], outcome: 'ok', offsets: [0, 1] });
    const early = rec.invoke<PollOp>('poll', 'c1', { partition: 0, offset: 0, records: [] });
    poll(rec, {
      process: 'c2',
      offset: 0,
      records: [
        [0, 'a'],
        [1, 'b'],
      ],
      hw: 2,
    });
    early('ok', {
      records: [
        { offset: 0, value: 'a' },
        { offset: 1, value: 'b' },
      ],
      highWatermark: 2,
      nextOffset: 2,
    });
    final(rec, [
      [0, 'a'],
      [1, 'b'],
    ]);
    expectOnly(rec, {});
  });

  it('finds a read that began after an acknowledgement yet does not cover it (stale read)', () => {
    const rec = recorder();
    send(rec, { write: 'w', values: ['a', 'b'], outcome: 'ok', offsets: [0, 1] });
    poll(rec, { offset: 0, records: [[0, 'a']], hw: 1 });
    final(rec, [
      [0, 'a'],
      [1, 'b'],
    ]);
    expectOnly(rec, { staleReads: 1 });
  });
});

describe('producer order', () => {
  it('finds a producer whose later write landed before its earlier one', () => {
    const rec = recorder();
    send(rec, { write: 'w1', values: ['a'], outcome: 'ok', offsets: [1] });
    send(rec, { write: 'w2', values: ['b'], outcome: 'ok', offsets: [0] });
    final(rec, [
      [0, 'b'],
      [1, 'a'],
    ]);
    expectOnly(rec, { nonMonotonicSends: 1 });
  });

  it('keeps per-partition order only', () => {
    const rec = recorder();
    send(rec, { write: 'w1', values: ['a'], outcome: 'ok', offsets: [3], partition: 1 });
    send(rec, { write: 'w2', values: ['b'], outcome: 'ok', offsets: [0], partition: 0 });
    final(rec, [[0, 'b']], 1, 0);
    final(
      rec,
      [
        [0, 'x'],
        [1, 'y'],
        [2, 'z'],
        [3, 'a'],
      ],
      4,
      1,
    );
    expectOnly(rec, { phantoms: 3 });
  });
});

describe('retention', () => {
  it('counts acknowledged records below the final log start as expired only when retention is allowed', () => {
    const rec = recorder();
    send(rec, { write: 'w', values: ['a', 'b', 'c'], outcome: 'ok', offsets: [0, 1, 2] });
    rec.final({ partition: 0, highWatermark: 3, logStartOffset: 2, records: [{ offset: 2, value: 'c' }] });
    expect(check(rec.history()).counts.lost).toBe(2);
    const report = check(rec.history(), { allowRetention: true });
    expect(report.valid).toBe(true);
    expect(report.counts.expired).toBe(2);
  });

  it('finds a log start that went backwards', () => {
    const rec = recorder();
    send(rec, { write: 'w', values: ['a', 'b'], outcome: 'ok', offsets: [0, 1] });
    const at = (logStartOffset: number) =>
      rec.invoke<PollOp>('poll', 'c', { partition: 0, offset: 1, records: [] })('ok', {
        records: [{ offset: 1, value: 'b' }],
        highWatermark: 2,
        nextOffset: 2,
        logStartOffset,
      });
    at(1);
    at(0);
    rec.final({ partition: 0, highWatermark: 2, logStartOffset: 1, records: [{ offset: 1, value: 'b' }] });
    expect(check(rec.history(), { allowRetention: true }).counts.logStartBackwards).toBe(1);
  });
});

describe('compaction', () => {
  const keyOf = (value: string) => value.split(':')[0] ?? null;

  it('excuses a record whose key has a later record in the final read, not the latest of a key', () => {
    const rec = recorder();
    send(rec, { write: 'w', values: ['a:1', 'b:1', 'a:2', 'b:2'], outcome: 'ok', offsets: [0, 1, 2, 3] });
    rec.final({ partition: 0, highWatermark: 4, logStartOffset: 0, records: [{ offset: 2, value: 'a:2' }] });
    const report = check(rec.history(), { compaction: { keyOf } });
    expect(report.counts.compacted).toBe(1);
    expect(report.counts.lost).toBe(2);
    expect(report.examples.lost?.map((e) => (e as { value: string }).value)).toEqual(['b:1', 'b:2']);
  });

  it('lets polls skip compacted offsets', () => {
    const rec = recorder();
    send(rec, { write: 'w', values: ['a:1', 'a:2'], outcome: 'ok', offsets: [0, 1] });
    poll(rec, { offset: 0, records: [[1, 'a:2']], hw: 2 });
    final(rec, [[1, 'a:2']], 2);
    expect(check(rec.history(), { compaction: { keyOf } }).valid).toBe(true);
  });
});
