/**
 * Checks a recorded history (test/support/history.ts) against Sluice's invariants, in the spirit of
 * Jepsen's Kafka checker: sends and polls of one topic's partitions, a final full read with faults
 * off, and consumer-group heartbeats and commits. Pure: no clocks, no I/O. Returns counts of each
 * violation with a few examples, so a failing test says what went wrong and where.
 */
import type {
  CommitOp,
  FinalRead,
  HeartbeatOp,
  History,
  Op,
  OffsetFetchOp,
  PollOp,
  ReadRecord,
  SendOp,
  TopicPartitionId,
} from './history.js';

export const VIOLATIONS = [
  /** An acknowledged value is missing from (or different at) its offset in the final read. */
  'lost',
  /** A value at more offsets than its write's attempts could have put it at (idempotent writes: one). */
  'duplicates',
  /** Two different values read at one offset. */
  'inconsistentOffsets',
  /** A value whose every attempt failed definitely (or that was never sent) was read. */
  'phantoms',
  /** Offsets going backwards within a poll, or between a consumer's successive polls. */
  'nonMonotonicPolls',
  /** A poll that skipped offsets below the high watermark (in the log, all offsets are dense). */
  'pollSkips',
  /** A poll returned a record at or above the high watermark it reported. */
  'beyondHighWatermark',
  /** A read reported a lower high watermark than one that completed before it started. */
  'highWatermarkBackwards',
  /** A read reported a lower log start offset than one that completed before it started. */
  'logStartBackwards',
  /** A read started after a send was acknowledged at offset o, yet reported a high watermark ≤ o. */
  'staleReads',
  /** A producer's successive acknowledged writes to a partition got decreasing offsets. */
  'nonMonotonicSends',
  /** Two members of a group held one partition at the same time. */
  'twoOwners',
  /** A commit was accepted with a member epoch older than one the member had already been given. */
  'staleCommits',
  /** A fetched committed offset is not the latest accepted commit (lost, or an older one came back). */
  'lostCommits',
] as const;
export type Violation = (typeof VIOLATIONS)[number];

export interface CheckOptions {
  /** Offsets are dense (no compaction): polls must not skip. Default true. */
  denseOffsets?: boolean;
  /** Group session timeout (wall ms): a member that has not heartbeated for this long owns nothing. */
  sessionTimeoutMs?: number;
  /** Examples kept per violation kind. Default 5. */
  examples?: number;
  /**
   * Retention may remove the oldest records: an acknowledged record below the final read's
   * logStartOffset is expired, not lost. Default false (any missing record is lost).
   */
  allowRetention?: boolean;
  /**
   * The topic is compacted: a record may give way to a later record of its key, and offsets may have
   * gaps. `keyOf` reads the key out of a rendered record.
   */
  compaction?: { keyOf: (value: string) => string | null };
}

export interface CheckReport {
  valid: boolean;
  counts: Record<Violation, number> & {
    /** Distinct values acknowledged. */
    acked: number;
    sends: number;
    polls: number;
    /** Sends that ended ambiguous (info). */
    ambiguous: number;
    /** Values at several offsets that the checker allowed (retried non-idempotent writes). */
    allowedDuplicates: number;
    /** Records in the final read. */
    finalRecords: number;
    /** Acknowledged records below the final log start (only with allowRetention). */
    expired: number;
    /** Acknowledged records gone because a later record of their key is in the final read (compaction). */
    compacted: number;
    heartbeats: number;
    commits: number;
  };
  examples: Partial<Record<Violation, unknown[]>>;
}

export const check = (history: History, options: CheckOptions = {}): CheckReport => {
  const report = emptyReport();
  const limit = options.examples ?? 5;
  const flag = (kind: Violation, example: unknown) => {
    report.counts[kind]++;
    const list = (report.examples[kind] ??= []);
    if (list.length < limit) list.push(example);
  };
  const ops = [...history.ops].sort((a, b) => a.invoke - b.invoke);
  const sends = ops.filter((o): o is SendOp => o.f === 'send');
  const polls = ops.filter((o): o is PollOp => o.f === 'poll');
  report.counts.sends = sends.length;
  report.counts.polls = polls.length;
  report.counts.ambiguous = sends.filter((s) => s.outcome === 'info').length;
  report.counts.finalRecords = history.finals.reduce((n, f) => n + f.records.length, 0);

  checkLog(sends, polls, history.finals, options, report, flag);
  checkPolls(polls, options, flag);
  checkHighWatermarks(sends, polls, history.finals, flag);
  checkSendOrder(sends, flag);
  checkGroups(ops, options, report, flag);

  report.valid = VIOLATIONS.every((k) => report.counts[k] === 0);
  return report;
};

type Flag = (kind: Violation, example: unknown) => void;

interface WriteInfo {
  write: string;
  idempotent: boolean;
  partition: number;
  attempts: SendOp[];
}

const checkLog = (
  sends: SendOp[],
  polls: PollOp[],
  finals: FinalRead[],
  options: CheckOptions,
  report: CheckReport,
  flag: Flag,
): void => {
  // Which write each value belongs to.
  const writeOf = new Map<string, WriteInfo>();
  const writes = new Map<string, WriteInfo>();
  for (const s of sends) {
    let w = writes.get(s.write);
    if (!w)
      writes.set(
        s.write,
        (w = { write: s.write, idempotent: s.idempotent, partition: s.partition, attempts: [] }),
      );
    w.attempts.push(s);
    for (const v of s.values) writeOf.set(`${s.partition}\u0000${v}`, w);
  }

  // Everything ever read: (partition, offset) → values, and (partition, value) → offsets.
  const atOffset = new Map<string, Set<string>>();
  const offsetsOf = new Map<string, Set<number>>();
  const observe = (partition: number, r: ReadRecord) => {
    const ko = `${partition}#${r.offset}`;
    let values = atOffset.get(ko);
    if (!values) atOffset.set(ko, (values = new Set()));
    values.add(r.value);
    const kv = `${partition}\u0000${r.value}`;
    let offs = offsetsOf.get(kv);
    if (!offs) offsetsOf.set(kv, (offs = new Set()));
    offs.add(r.offset);
  };
  for (const p of polls) if (p.outcome === 'ok') for (const r of p.records) observe(p.partition, r);
  for (const f of finals) for (const r of f.records) observe(f.partition, r);

  for (const [ko, values] of atOffset) {
    if (values.size > 1) {
      const [partition, offset] = ko.split('#').map(Number);
      flag('inconsistentOffsets', { partition, offset, values: [...values] });
    }
  }

  for (const [kv, offs] of offsetsOf) {
    const [partition, value] = splitKey(kv);
    const w = writeOf.get(kv);
    const possible = w ? w.attempts.filter((a) => a.outcome !== 'fail').length : 0;
    if (possible === 0) {
      flag('phantoms', { partition, value, offsets: [...offs], write: w?.write ?? null });
      continue;
    }
    if (offs.size <= 1) continue;
    const allowed = w!.idempotent ? 1 : possible;
    if (offs.size > allowed) {
      flag('duplicates', {
        partition,
        value,
        offsets: [...offs].sort((a, b) => a - b),
        write: w!.write,
        idempotent: w!.idempotent,
        attempts: w!.attempts.map((a) => a.outcome),
      });
    } else report.counts.allowedDuplicates++;
  }

  // Acknowledged values must be in the final read, at their offsets, byte-identical.
  const finalByPartition = new Map<number, { read: FinalRead; byOffset: Map<number, string> }>();
  for (const f of finals)
    finalByPartition.set(f.partition, {
      read: f,
      byOffset: new Map(f.records.map((r) => [r.offset, r.value])),
    });
  const acked = new Set<string>();
  for (const s of sends) {
    if (s.outcome !== 'ok' || !s.offsets) continue;
    const final = finalByPartition.get(s.partition);
    s.values.forEach((value, i) => {
      const offset = s.offsets![i]!;
      const id = `${s.partition}\u0000${value}\u0000${offset}`;
      if (acked.has(id)) return;
      acked.add(id);
      if (!final) return;
      const found = final.byOffset.get(offset);
      if (found === value) return;
      if (options.allowRetention && offset < final.read.logStartOffset) {
        report.counts.expired++;
        return;
      }
      if (
        found === undefined &&
        options.compaction &&
        laterOfKey(final.read, options.compaction.keyOf, value, offset)
      ) {
        report.counts.compacted++;
        return;
      }
      const why =
        offset >= final.read.highWatermark
          ? `offset is at or past the final high watermark ${final.read.highWatermark}`
          : offset < final.read.logStartOffset
            ? `offset is below the final logStartOffset ${final.read.logStartOffset} (removed by retention?)`
            : found === undefined
              ? (final.read.error ?? 'offset missing from the final read')
              : 'a different record is at that offset';
      flag('lost', { partition: s.partition, offset, value, found: found ?? null, why, send: s.id });
    });
  }
  report.counts.acked = acked.size;
};

/** Whether the final read holds a record of the same key at a higher offset (compaction may drop the older). */
const laterOfKey = (
  read: FinalRead,
  keyOf: (value: string) => string | null,
  value: string,
  offset: number,
): boolean => {
  const key = keyOf(value);
  return key !== null && read.records.some((r) => r.offset > offset && keyOf(r.value) === key);
};

const splitKey = (kv: string): [number, string] => {
  const i = kv.indexOf('\u0000');
  return [Number(kv.slice(0, i)), kv.slice(i + 1)];
};

const checkPolls = (polls: PollOp[], options: CheckOptions, flag: Flag): void => {
  const dense = options.denseOffsets ?? options.compaction === undefined;
  const last = new Map<string, PollOp>();
  for (const p of polls) {
    if (p.outcome !== 'ok') continue;
    const offsets = p.records.map((r) => r.offset);
    const where = {
      process: p.process,
      partition: p.partition,
      poll: p.id,
      offset: p.offset,
      offsets: offsets.slice(0, 10),
    };
    offsets.forEach((o, i) => {
      if (i > 0 && o <= offsets[i - 1]!) flag('nonMonotonicPolls', { ...where, at: o });
      if (p.highWatermark !== undefined && o >= p.highWatermark)
        flag('beyondHighWatermark', { ...where, at: o, highWatermark: p.highWatermark });
    });
    if (dense && p.highWatermark !== undefined) {
      const first = offsets[0];
      const start = Math.max(p.offset, p.logStartOffset ?? 0);
      if (start < p.highWatermark && (first === undefined || first !== start)) {
        flag('pollSkips', {
          ...where,
          why: first === undefined ? 'empty below the high watermark' : `started at ${first}`,
          highWatermark: p.highWatermark,
        });
      }
      for (let i = 1; i < offsets.length; i++) {
        if (offsets[i]! > offsets[i - 1]! + 1)
          flag('pollSkips', { ...where, why: `gap after ${offsets[i - 1]}` });
      }
      const end = offsets.at(-1);
      if (end !== undefined && p.nextOffset !== undefined && p.nextOffset !== end + 1) {
        flag('pollSkips', { ...where, why: `nextOffset ${p.nextOffset} after last record ${end}` });
      }
    }
    // Between a consumer's polls of a partition: it continues where the last one ended.
    const key = `${p.process}#${p.partition}`;
    const prev = last.get(key);
    if (prev && p.offset === prev.nextOffset) {
      const prevEnd = prev.records.at(-1)?.offset;
      const first = offsets[0];
      if (prevEnd !== undefined && first !== undefined && first <= prevEnd) {
        flag('nonMonotonicPolls', {
          ...where,
          why: `first offset ${first} after previous poll ended at ${prevEnd}`,
        });
      }
    }
    last.set(key, p);
  }
};

/** Real-time order: a read that starts after another completed must not see a lower high watermark. */
const checkHighWatermarks = (sends: SendOp[], polls: PollOp[], finals: FinalRead[], flag: Flag): void => {
  const reads = polls.filter((p) => p.outcome === 'ok' && p.highWatermark !== undefined);
  const partitions = new Set([...reads.map((r) => r.partition), ...finals.map((f) => f.partition)]);
  for (const partition of partitions) {
    const mine = reads.filter((r) => r.partition === partition);
    const byComplete = [...mine].sort((a, b) => a.complete - b.complete);
    const acks = sends
      .filter((s) => s.partition === partition && s.outcome === 'ok' && s.offsets && s.offsets.length > 0)
      .map((s) => ({ complete: s.complete, offset: Math.max(...s.offsets!), id: s.id }))
      .sort((a, b) => a.complete - b.complete);
    let i = 0;
    let j = 0;
    let maxSeen: { hw: number; id: number } | undefined;
    let maxStart: { logStartOffset: number; id: number } | undefined;
    let maxAcked: { offset: number; id: number } | undefined;
    for (const r of mine) {
      while (i < byComplete.length && byComplete[i]!.complete < r.invoke) {
        const c = byComplete[i++]!;
        if (!maxSeen || c.highWatermark! > maxSeen.hw) maxSeen = { hw: c.highWatermark!, id: c.id };
        const start = c.logStartOffset ?? 0;
        if (!maxStart || start > maxStart.logStartOffset) maxStart = { logStartOffset: start, id: c.id };
      }
      while (j < acks.length && acks[j]!.complete < r.invoke) {
        const a = acks[j++]!;
        if (!maxAcked || a.offset > maxAcked.offset) maxAcked = { offset: a.offset, id: a.id };
      }
      if (maxStart && (r.logStartOffset ?? 0) < maxStart.logStartOffset) {
        flag('logStartBackwards', {
          partition,
          poll: r.id,
          logStartOffset: r.logStartOffset,
          earlier: maxStart,
        });
      }
      if (maxSeen && r.highWatermark! < maxSeen.hw) {
        flag('highWatermarkBackwards', {
          partition,
          poll: r.id,
          highWatermark: r.highWatermark,
          earlier: maxSeen,
        });
      }
      if (maxAcked && r.highWatermark! <= maxAcked.offset) {
        flag('staleReads', { partition, poll: r.id, highWatermark: r.highWatermark, acked: maxAcked });
      }
    }
    // The final read comes after everything.
    const final = finals.find((f) => f.partition === partition);
    if (final) {
      const top = mine.reduce((m, r) => Math.max(m, r.highWatermark!), -1);
      if (final.highWatermark < top)
        flag('highWatermarkBackwards', { partition, final: final.highWatermark, earlier: top });
      const topStart = mine.reduce((m, r) => Math.max(m, r.logStartOffset ?? 0), 0);
      if (final.logStartOffset < topStart) {
        flag('logStartBackwards', { partition, final: final.logStartOffset, earlier: topStart });
      }
    }
  }
};

/** One producer's writes (distinct write ids, sequential per process) land in send order. */
const checkSendOrder = (sends: SendOp[], flag: Flag): void => {
  const last = new Map<string, SendOp>();
  for (const s of sends) {
    if (s.outcome !== 'ok' || !s.offsets || s.offsets.length === 0) continue;
    const key = `${s.process}#${s.partition}`;
    const prev = last.get(key);
    if (prev && prev.write !== s.write && Math.min(...s.offsets) <= Math.max(...prev.offsets!)) {
      flag('nonMonotonicSends', {
        process: s.process,
        partition: s.partition,
        previous: { write: prev.write, offsets: prev.offsets },
        next: { write: s.write, offsets: s.offsets },
      });
    }
    last.set(key, s);
  }
};

interface Ownership {
  member: string;
  process: string;
  tp: TopicPartitionId;
  start: number;
  end: number;
}

const FENCING_ERRORS = new Set(['FENCED_MEMBER_EPOCH', 'UNKNOWN_MEMBER_ID']);

/**
 * Consumer groups. A member (one process) holds a partition from the answer that assigned it until it
 * declares otherwise: the invoke of a heartbeat whose ownedPartitions leave it out (a leave declares
 * nothing), a fencing error, a crash, or — when a session timeout is given — that long after the invoke
 * of its last successful heartbeat (the server may have expired it since). Two such intervals of one
 * partition in one group must not overlap.
 */
const checkGroups = (ops: Op[], options: CheckOptions, report: CheckReport, flag: Flag): void => {
  const heartbeats = ops.filter((o): o is HeartbeatOp => o.f === 'heartbeat');
  const commits = ops.filter((o): o is CommitOp => o.f === 'commit');
  const fetches = ops.filter((o): o is OffsetFetchOp => o.f === 'offsetFetch');
  report.counts.heartbeats = heartbeats.length;
  report.counts.commits = commits.length;
  const groups = new Set([...heartbeats.map((h) => h.group), ...commits.map((c) => c.group)]);
  for (const group of groups) {
    const intervals = ownershipIntervals(
      ops.filter((o) => (o.f === 'heartbeat' && o.group === group) || o.f === 'crash'),
      options.sessionTimeoutMs,
    );
    const byTp = new Map<TopicPartitionId, Ownership[]>();
    for (const iv of intervals) byTp.set(iv.tp, [...(byTp.get(iv.tp) ?? []), iv]);
    for (const [tp, list] of byTp) {
      list.sort((a, b) => a.start - b.start);
      let open: Ownership | undefined;
      for (const iv of list) {
        if (open && iv.start < open.end && iv.member !== open.member) {
          flag('twoOwners', { group, tp, first: open, second: iv });
        }
        if (!open || iv.end > open.end) open = iv;
      }
    }
    checkCommits(
      heartbeats.filter((h) => h.group === group),
      commits.filter((c) => c.group === group),
      fetches.filter((f) => f.group === group),
      flag,
    );
  }
};

const ownershipIntervals = (ops: Op[], sessionTimeoutMs: number | undefined): Ownership[] => {
  const out: Ownership[] = [];
  const byProcess = new Map<string, Op[]>();
  for (const o of ops) byProcess.set(o.process, [...(byProcess.get(o.process) ?? []), o]);
  // Logical time at which wall time first reaches t (for session bounds).
  const wallEvents = ops
    .flatMap((o) => [
      { time: o.invoke, wall: o.invokeWall },
      { time: o.complete, wall: o.completeWall },
    ])
    .sort((a, b) => a.time - b.time);
  const firstTimeAtWall = (wall: number): number =>
    wallEvents.find((e) => e.wall >= wall)?.time ?? Number.POSITIVE_INFINITY;

  for (const [process, list] of byProcess) {
    const held = new Map<TopicPartitionId, { start: number; member: string }>();
    let lastOkWall: number | undefined;
    const release = (tp: TopicPartitionId, at: number) => {
      const h = held.get(tp);
      if (!h) return;
      const bound =
        sessionTimeoutMs !== undefined && lastOkWall !== undefined
          ? firstTimeAtWall(lastOkWall + sessionTimeoutMs)
          : Number.POSITIVE_INFINITY;
      out.push({ member: h.member, process, tp, start: h.start, end: Math.min(at, bound) });
      held.delete(tp);
    };
    for (const o of list) {
      if (o.f === 'crash') {
        for (const tp of [...held.keys()]) release(tp, o.invoke);
        continue;
      }
      if (o.f !== 'heartbeat') continue;
      const declared = new Set(o.owned);
      for (const tp of [...held.keys()]) if (!declared.has(tp)) release(tp, o.invoke);
      if (o.outcome === 'ok') {
        lastOkWall = o.invokeWall;
        for (const tp of o.assignment ?? [])
          if (!held.has(tp)) held.set(tp, { start: o.complete, member: o.member });
      } else if (o.error !== undefined && FENCING_ERRORS.has(o.error)) {
        for (const tp of [...held.keys()]) release(tp, o.invoke);
      }
    }
    for (const tp of [...held.keys()]) release(tp, Number.POSITIVE_INFINITY);
  }
  return out;
};

/**
 * Commits are fenced by member epoch: one accepted with an epoch lower than an epoch the member had
 * already received (or after it left) is stale. Fetched offsets must come from an accepted (or
 * ambiguous) commit that no later accepted commit had definitely replaced before the fetch began.
 */
const checkCommits = (
  heartbeats: HeartbeatOp[],
  commits: CommitOp[],
  fetches: OffsetFetchOp[],
  flag: Flag,
): void => {
  for (const c of commits) {
    if (c.outcome !== 'ok' || c.member === null || c.memberEpoch === null) continue;
    const before = heartbeats.filter(
      (h) => h.member === c.member && h.outcome === 'ok' && h.complete < c.invoke,
    );
    const known = before.reduce((m, h) => Math.max(m, h.memberEpoch ?? -1), -1);
    const left = before.some((h) => h.memberEpochSent === -1);
    if (c.memberEpoch < known || left) {
      flag('staleCommits', { member: c.member, commit: c.id, memberEpoch: c.memberEpoch, known, left });
    }
  }
  for (const f of fetches) {
    if (f.outcome !== 'ok') continue;
    for (const { tp, offset } of f.offsets) {
      const candidates = commits.filter(
        (c) => c.outcome !== 'fail' && c.invoke < f.complete && c.offsets.some((o) => o.tp === tp),
      );
      const definite = candidates.filter((c) => c.outcome === 'ok' && c.complete < f.invoke);
      const explains = candidates.some(
        (c) =>
          c.offsets.some((o) => o.tp === tp && o.offset === offset) &&
          !definite.some((d) => d.invoke > c.complete),
      );
      if (!explains && (candidates.length > 0 || offset !== undefined)) {
        flag('lostCommits', {
          group: f.group,
          tp,
          fetched: offset,
          fetch: f.id,
          latestAccepted: definite.at(-1)?.offsets.find((o) => o.tp === tp)?.offset ?? null,
        });
      }
    }
  }
};

const emptyReport = (): CheckReport => ({
  valid: true,
  counts: {
    ...(Object.fromEntries(VIOLATIONS.map((k) => [k, 0])) as Record<Violation, number>),
    acked: 0,
    sends: 0,
    polls: 0,
    ambiguous: 0,
    allowedDuplicates: 0,
    finalRecords: 0,
    expired: 0,
    compacted: 0,
    heartbeats: 0,
    commits: 0,
  },
  examples: {},
});

/** One line per violation kind with its first example, for test failure messages. */
export const describeReport = (report: CheckReport): string =>
  VIOLATIONS.filter((k) => report.counts[k] > 0)
    .map((k) => `${k}: ${report.counts[k]} e.g. ${JSON.stringify(report.examples[k]?.[0])}`)
    .join('\n') || 'no violations';
