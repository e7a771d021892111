/**
 * The transactions checker: judges a simulation run (txn-sim.ts) by the final log, the read_committed
 * reader's observations, and what producers were told. Each violation names what broke.
 *
 * 1. All or none: a transaction's records, across partitions, are all in the final read_committed view
 *    or none are; its group offset is applied exactly when its records are.
 * 2. A committed (acknowledged) transaction is visible; an acknowledged abort is not.
 * 3. No read_committed reader received a record of a transaction that did not commit, nor one at or
 *    past the LSO it was given.
 * 4. The LSO never moved back, and never passed an open transaction: every transaction whose first
 *    offset is below an observed LSO had its marker below the HW of that same observation.
 * 5. A fenced producer wrote nothing after its fencing: no data batch follows a marker of a newer epoch
 *    of its producer id, every transactional batch is closed by a later marker, and no zombie call
 *    succeeded after a newer instance existed.
 */
import type { LoggedBatch, SimResult } from './txn-sim.js';
import { PARTITIONS } from './txn-sim.js';

const tagOf = (value: string): string => value.split('|').slice(0, 2).join('|');

interface Span {
  partition: number;
  producerId: number;
  producerEpoch: number;
  firstOffset: number;
  /** The closing marker's offset, if any. */
  markerOffset?: number;
  marker?: 'COMMIT' | 'ABORT' | 'UNKNOWN';
}

/** Each transaction's span in each partition: first data batch to the closing marker. */
export const transactionSpans = (log: readonly LoggedBatch[]): Span[] => {
  const spans: Span[] = [];
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const open = new Map<number, Span>();
    for (const b of log
      .filter((x) => x.partition === partition)
      .sort((a, b) => a.baseOffset - b.baseOffset)) {
      if (!b.isTransactional) continue;
      const current = open.get(b.producerId);
      if (b.control !== undefined) {
        if (current) {
          current.markerOffset = b.baseOffset;
          current.marker = b.control;
          open.delete(b.producerId);
        }
        continue;
      }
      if (!current) {
        const span: Span = {
          partition,
          producerId: b.producerId,
          producerEpoch: b.producerEpoch,
          firstOffset: b.baseOffset,
        };
        spans.push(span);
        open.set(b.producerId, span);
      }
    }
  }
  return spans;
};

export const checkTransactions = (r: SimResult): string[] => {
  const violations: string[] = [];
  const committedTags = new Set(r.committedView.map((x) => tagOf(x.value)));
  const committedValues = new Set(r.committedView.map((x) => `${x.partition}|${x.value}`));

  // 1 + 2: all or none, records and offsets.
  const written = new Map<string, string[]>();
  for (const b of r.log)
    for (const v of b.values) {
      const tag = tagOf(v);
      written.set(tag, [...(written.get(tag) ?? []), `${b.partition}|${v}`]);
    }
  for (const [tag, values] of written) {
    if (tag.startsWith('zombie')) continue;
    const seen = values.filter((v) => committedValues.has(v)).length;
    if (seen !== 0 && seen !== values.length)
      violations.push(
        `transaction ${tag}: ${seen} of its ${values.length} records are visible to read_committed`,
      );
  }
  for (const o of r.outcomes) {
    if (o.acked === 'commit' && !committedTags.has(o.tag))
      violations.push(`transaction ${o.tag} was acknowledged as committed but is not visible`);
    if (o.acked === 'abort' && committedTags.has(o.tag))
      violations.push(`transaction ${o.tag} was acknowledged as aborted but is visible`);
  }
  for (const [transactionalId, offset] of Object.entries(r.groupOffsets)) {
    const visible = [...committedTags]
      .filter((t) => t.startsWith(`${transactionalId}|`))
      .map((t) => Number(t.split('|')[1]));
    const expected = visible.length === 0 ? undefined : Math.max(...visible);
    if (offset !== expected)
      violations.push(
        `group of ${transactionalId} has offset ${offset}; its last visible transaction is ${expected}`,
      );
  }

  // 3 + 4: what the reader was given.
  const spans = transactionSpans(r.log);
  const lastLso = new Map<number, number>();
  for (const obs of r.observations) {
    const before = lastLso.get(obs.partition) ?? 0;
    if (obs.lastStableOffset < before)
      violations.push(
        `LSO of partition ${obs.partition} moved back from ${before} to ${obs.lastStableOffset}`,
      );
    lastLso.set(obs.partition, Math.max(before, obs.lastStableOffset));
    for (const rec of obs.records) {
      if (rec.offset >= obs.lastStableOffset)
        violations.push(
          `read_committed got offset ${rec.offset} of partition ${obs.partition} at LSO ${obs.lastStableOffset}`,
        );
      if (!rec.value.startsWith('zombie') && !committedTags.has(tagOf(rec.value)))
        violations.push(`read_committed got ${rec.value}, of a transaction that did not commit`);
      if (rec.value.startsWith('zombie')) violations.push(`read_committed got the zombie's ${rec.value}`);
    }
    for (const s of spans) {
      if (s.partition !== obs.partition || s.firstOffset >= obs.lastStableOffset) continue;
      if (s.markerOffset === undefined || s.markerOffset >= obs.highWatermark)
        violations.push(
          `LSO ${obs.lastStableOffset} of partition ${obs.partition} passed the open transaction of producer ${s.producerId} at ${s.firstOffset} (HW ${obs.highWatermark})`,
        );
    }
  }

  // 5: fencing.
  for (const s of spans)
    if (s.markerOffset === undefined)
      violations.push(
        `transaction of producer ${s.producerId} epoch ${s.producerEpoch} at ${s.partition}:${s.firstOffset} has no marker`,
      );
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const maxMarkerEpoch = new Map<number, number>();
    for (const b of r.log
      .filter((x) => x.partition === partition)
      .sort((a, b) => a.baseOffset - b.baseOffset)) {
      if (b.control !== undefined) {
        maxMarkerEpoch.set(b.producerId, Math.max(maxMarkerEpoch.get(b.producerId) ?? -1, b.producerEpoch));
      } else if (b.isTransactional && b.producerEpoch < (maxMarkerEpoch.get(b.producerId) ?? -1)) {
        violations.push(
          `fenced producer ${b.producerId} epoch ${b.producerEpoch} wrote at ${partition}:${b.baseOffset}`,
        );
      }
    }
  }
  for (const z of r.zombieSuccesses) violations.push(`a fenced producer's call succeeded: ${z}`);
  return violations;
};
