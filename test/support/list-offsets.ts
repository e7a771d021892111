/**
 * ListOffsets by timestamp against the log it indexes (DESIGN: ListOffsets exact). Kafka answers with
 * the first record, in the first batch whose max timestamp reaches the timestamp, that reaches it; a
 * batch whose max is below it has no record that does, so that is the earliest record at or after the
 * log start with a timestamp at or above it. Checked for every timestamp in the log, one below and
 * one above each, and one past them all.
 */
import type { Fetcher } from '../../lib/core/log/fetch.js';

export const listOffsetsViolations = async (
  fetcher: Fetcher,
  topic: string,
  partitions: number,
): Promise<string[]> => {
  const violations: string[] = [];
  for (let p = 0; p < partitions; p++) {
    const records: { offset: number; timestamp: number }[] = [];
    let offset = (await fetcher.listOffsets(topic, p, 'earliest')).offset!;
    const end = (await fetcher.listOffsets(topic, p, 'latest')).offset!;
    while (offset < end) {
      const page = await fetcher.fetchRecords(topic, p, { offset, maxBytes: 1_048_576, maxWaitMs: 0 });
      records.push(...page.records.map((r) => ({ offset: r.offset, timestamp: r.timestamp })));
      if (page.nextOffset <= offset) break;
      offset = page.nextOffset;
    }
    const stamps = new Set<number>();
    for (const { timestamp } of records) for (const d of [-1, 0, 1]) stamps.add(timestamp + d);
    stamps.add(Math.max(0, ...records.map((r) => r.timestamp)) + 1);
    for (const at of [...stamps].filter((t) => t >= 0).sort((a, b) => a - b)) {
      const expected = records.find((r) => r.timestamp >= at)?.offset ?? null;
      const actual = (await fetcher.listOffsets(topic, p, at)).offset;
      if (actual !== expected)
        violations.push(
          `p${p}: ListOffsets at ${at} gave ${String(actual)}, the log says ${String(expected)}`,
        );
    }
  }
  return violations;
};
