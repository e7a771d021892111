/** How the command line writes numbers, rates, durations and partition sets for people. */

export const formatCount = (n: number): string => n.toLocaleString('en-US');

export const formatDuration = (ms: number): string => {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1_000)} s`;
};

/** `count` per second over `ms`: "12,345 records/s", with a decimal below 10: "0.2 records/s". */
export const formatRate = (count: number, ms: number, unit = 'records'): string => {
  const rate = ms > 0 ? (count * 1_000) / ms : count;
  return `${rate < 10 ? rate.toFixed(1) : formatCount(Math.round(rate))} ${unit}/s`;
};

export const formatTimestamp = (ms: number): string => {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString();
};

/** A set of partitions as sorted ranges: [0, 1, 2, 5, 7, 8] → "0-2,5,7-8". */
export const formatPartitions = (partitions: readonly number[]): string => {
  const sorted = [...new Set(partitions)].sort((a, b) => a - b);
  const ranges: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === (sorted[j] ?? 0) + 1) j++;
    ranges.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return ranges.join(',');
};

/** "no partitions", "partition 2", "partitions 0-2,5". */
export const describePartitions = (partitions: readonly number[]): string =>
  partitions.length === 0
    ? 'no partitions'
    : `${new Set(partitions).size === 1 ? 'partition' : 'partitions'} ${formatPartitions(partitions)}`;

/** "1 record" / "3 records". */
export const plural = (n: number, noun: string, nouns = `${noun}s`): string =>
  `${formatCount(n)} ${n === 1 ? noun : nouns}`;
