import { describe, expect, it } from 'vitest';
import {
  describePartitions,
  formatDuration,
  formatPartitions,
  formatRate,
  plural,
} from '../../../cli/format.js';
import { displayWidth, renderFields, renderTable } from '../../../cli/table.js';

describe('renderTable', () => {
  const rows = [
    { name: 'orders', partitions: 12, note: 'hot' },
    { name: 'a', partitions: 3, note: null },
  ];
  const columns = [
    { header: 'TOPIC', value: (r: (typeof rows)[number]) => r.name },
    { header: 'PARTITIONS', value: (r: (typeof rows)[number]) => r.partitions },
    { header: 'NOTE', value: (r: (typeof rows)[number]) => r.note },
  ];

  it('pads columns to their widest cell, two spaces apart, numbers right-aligned', () => {
    expect(renderTable(columns, rows)).toBe(
      ['TOPIC   PARTITIONS  NOTE', 'orders          12  hot', 'a                3  -'].join('\n'),
    );
  });

  it('prints only the header for no rows', () => {
    expect(renderTable(columns, [])).toBe('TOPIC  PARTITIONS  NOTE');
  });

  it('follows an explicit alignment and leaves mixed columns left-aligned', () => {
    const table = renderTable(
      [
        { header: 'K', value: (r: { k: string; v: string | number }) => r.k, align: 'right' as const },
        { header: 'VALUE', value: (r: { k: string; v: string | number }) => r.v },
      ],
      [
        { k: 'a', v: 1 },
        { k: 'bbb', v: 'x' },
      ],
    );
    expect(table).toBe(['  K  VALUE', '  a  1', 'bbb  x'].join('\n'));
  });

  it('keeps every row on one line and aligns wide characters by display width', () => {
    const table = renderTable(
      [
        { header: 'NAME', value: (r: { n: string }) => r.n },
        { header: 'END', value: () => '|' },
      ],
      [{ n: 'a\nb' }, { n: '日本' }, { n: 'é' }],
    );
    expect(table.split('\n')).toEqual(['NAME  END', 'a\\nb  |', '日本  |', 'é     |']);
  });

  it('measures display width', () => {
    expect(displayWidth('abc')).toBe(3);
    expect(displayWidth('日本')).toBe(4);
    expect(displayWidth('e\u0301')).toBe(1);
  });
});

describe('formatting', () => {
  it('renders fields on one line', () => {
    expect(
      renderFields([
        ['Topic', 'orders'],
        ['PartitionCount', 3],
        ['Leader', null],
      ]),
    ).toBe('Topic: orders  PartitionCount: 3  Leader: -');
  });

  it('compresses partition sets into ranges', () => {
    expect(formatPartitions([8, 0, 1, 2, 5, 7, 2])).toBe('0-2,5,7-8');
    expect(formatPartitions([])).toBe('');
    expect(describePartitions([3])).toBe('partition 3');
    expect(describePartitions([0, 1])).toBe('partitions 0-1');
    expect(describePartitions([])).toBe('no partitions');
  });

  it('writes counts, rates and durations for people', () => {
    expect(plural(1, 'record')).toBe('1 record');
    expect(plural(12345, 'record')).toBe('12,345 records');
    expect(formatRate(5000, 2000)).toBe('2,500 records/s');
    expect(formatRate(1, 4800)).toBe('0.2 records/s');
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(1250)).toBe('1.3 s');
    expect(formatDuration(125_000)).toBe('2 min 5 s');
  });
});
