/**
 * `sluice top`'s screen as lines of text: a header, the topics with produce rates, size and ISR
 * counts, the groups with lag and consume rates, the partitions that are not in sync (every partition
 * with --partitions) and, with --partitions, each group's lag per partition. The caller writes them in
 * place on a terminal or one snapshot after another elsewhere.
 */
import { formatCount, formatTimestamp } from '../format.js';
import type { Cell } from '../table.js';
import { displayWidth, renderTable } from '../table.js';
import type { GroupPartitionView, GroupView, PartitionView, Rate, TopView, TopicView } from './rates.js';

export interface RenderOptions {
  url: string;
  /** The refresh interval asked for, in seconds. */
  intervalSeconds: number;
  /** Every partition and every group partition, not only those out of sync. */
  partitions: boolean;
  /** Shown under the header: why the last refresh failed. */
  error?: string;
  /** Keys that work (terminal only). */
  keysHint?: boolean;
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** 1536 → "1.5 KiB"; whole bytes below 1 KiB. */
export const formatBytes = (bytes: number): string => {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${Math.round(value)} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
};

/** Records per second: one decimal below 10. Null (no earlier sample) is a dash. */
export const formatPerSecond = (rate: Rate): Cell =>
  rate === null ? null : rate < 10 ? rate.toFixed(1) : formatCount(Math.round(rate));

const bytesPerSecond = (rate: Rate): Cell => (rate === null ? null : `${formatBytes(rate)}/s`);

const list = (values: readonly string[]): string => (values.length === 0 ? '-' : values.join(','));

const topicTable = (topics: readonly TopicView[]): string =>
  topics.length === 0
    ? 'No topics.'
    : renderTable<TopicView>(
        [
          { header: 'TOPIC', value: (t) => t.name },
          { header: 'PARTITIONS', value: (t) => t.partitions },
          { header: 'IN RECORDS/S', value: (t) => formatPerSecond(t.recordsInPerSec), align: 'right' },
          { header: 'IN BYTES/S', value: (t) => bytesPerSecond(t.bytesInPerSec), align: 'right' },
          { header: 'SIZE', value: (t) => formatBytes(t.sizeBytes), align: 'right' },
          { header: 'UNDER-REPLICATED', value: (t) => t.underReplicated },
          { header: 'UNDER-MIN-ISR', value: (t) => t.underMinIsr },
          { header: 'OFFLINE', value: (t) => t.offline },
        ],
        topics,
      );

const groupTable = (groups: readonly GroupView[]): string =>
  groups.length === 0
    ? 'No consumer groups.'
    : renderTable<GroupView>(
        [
          { header: 'GROUP', value: (g) => g.groupId },
          { header: 'STATE', value: (g) => g.state },
          { header: 'MEMBERS', value: (g) => g.members },
          { header: 'LAG', value: (g) => g.lag },
          { header: 'MAX LAG', value: (g) => g.maxLag },
          { header: 'OUT RECORDS/S', value: (g) => formatPerSecond(g.recordsOutPerSec), align: 'right' },
          { header: 'OUT BYTES/S (EST.)', value: (g) => bytesPerSecond(g.bytesOutPerSec), align: 'right' },
        ],
        groups,
      );

const partitionTable = (partitions: readonly PartitionView[]): string =>
  renderTable<PartitionView>(
    [
      { header: 'TOPIC', value: (p) => p.topic },
      { header: 'PARTITION', value: (p) => p.partition },
      { header: 'STATE', value: (p) => p.state },
      { header: 'LEADER', value: (p) => p.leader },
      { header: 'REPLICAS', value: (p) => list(p.replicas) },
      { header: 'ISR', value: (p) => list(p.isr) },
      { header: 'OSR', value: (p) => list(p.osr) },
      { header: 'LOG START', value: (p) => p.logStartOffset },
      { header: 'HW', value: (p) => p.highWatermark },
      { header: 'LEO', value: (p) => p.logEndOffset },
      { header: 'IN RECORDS/S', value: (p) => formatPerSecond(p.recordsInPerSec), align: 'right' },
    ],
    partitions,
  );

const groupPartitionTable = (rows: readonly GroupPartitionView[]): string =>
  renderTable<GroupPartitionView>(
    [
      { header: 'GROUP', value: (r) => r.groupId },
      { header: 'TOPIC', value: (r) => r.topic },
      { header: 'PARTITION', value: (r) => r.partition },
      { header: 'COMMITTED', value: (r) => r.committedOffset },
      { header: 'HW', value: (r) => r.highWatermark },
      { header: 'LAG', value: (r) => r.lag },
      { header: 'OUT RECORDS/S', value: (r) => formatPerSecond(r.recordsOutPerSec), align: 'right' },
    ],
    rows,
  );

/** The screen, line by line (no trailing newline on any). */
export const renderTop = (view: TopView, options: RenderOptions): string[] => {
  const every = `every ${options.intervalSeconds} s`;
  const since =
    view.intervalSeconds === null
      ? 'rates from the next refresh'
      : `rates over ${view.intervalSeconds.toFixed(1)} s`;
  const out = [
    `sluice top  ${options.url}  ${formatTimestamp(view.time)}  ${every}, ${since}${options.keysHint ? '  (q to quit)' : ''}`,
  ];
  if (options.error) out.push(`error: ${options.error}`);
  out.push('', topicTable(view.topics), '', groupTable(view.groups), '');
  const shown = options.partitions ? view.partitions : view.partitions.filter((p) => p.state !== 'in-sync');
  if (shown.length === 0)
    out.push(
      view.partitions.length === 0
        ? 'ISR: no partitions.'
        : `ISR: all ${formatCount(view.partitions.length)} partitions in sync (--partitions lists them).`,
    );
  else out.push(options.partitions ? 'Partitions:' : 'Partitions not in sync:', partitionTable(shown));
  if (options.partitions) {
    const rows = view.groups.flatMap((g) => g.partitions);
    if (rows.length > 0) out.push('', 'Lag per partition:', groupPartitionTable(rows));
  }
  return out.flatMap((block) => block.split('\n'));
};

/** Cuts lines to the terminal's width and the screen to its height (the last line says what was cut). */
export const fitScreen = (lines: readonly string[], columns?: number, rows?: number): string[] => {
  const cut = (line: string): string => {
    if (columns === undefined || displayWidth(line) <= columns) return line;
    let out = '';
    for (const ch of line) {
      if (displayWidth(out + ch) > columns - 1) break;
      out += ch;
    }
    return `${out}…`;
  };
  const fitted = lines.map(cut);
  if (rows === undefined || fitted.length <= rows) return fitted;
  const kept = fitted.slice(0, Math.max(0, rows - 1));
  return [...kept, cut(`… ${fitted.length - kept.length} more lines (a bigger window, or --topic/--group)`)];
};
