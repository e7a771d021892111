/**
 * Sets of topic partitions (assignments, owned and revoked partitions) as plain immutable values:
 * topic → ascending distinct partitions, with no empty topics, so equal sets are equal values.
 */

/** A topic and some of its partitions, as the API lists them. */
export interface TopicPartitions {
  topic: string;
  partitions: number[];
}

export type PartitionMap = Readonly<Record<string, readonly number[]>>;

export const EMPTY_PARTITIONS: PartitionMap = Object.freeze({});

/** Builds a normalized map from any topic → partitions collection. */
export const partitionMap = (entries: Iterable<readonly [string, Iterable<number>]>): PartitionMap => {
  const byTopic = new Map<string, Set<number>>();
  for (const [topic, partitions] of entries) {
    let set = byTopic.get(topic);
    if (!set) byTopic.set(topic, (set = new Set()));
    for (const p of partitions) set.add(p);
  }
  const out: Record<string, number[]> = {};
  for (const topic of [...byTopic.keys()].sort()) {
    const partitions = [...(byTopic.get(topic) ?? [])].sort((a, b) => a - b);
    if (partitions.length > 0) out[topic] = partitions;
  }
  return out;
};

export const fromTopicPartitions = (list: readonly TopicPartitions[]): PartitionMap =>
  partitionMap(list.map(({ topic, partitions }) => [topic, partitions] as const));

export const toTopicPartitions = (map: PartitionMap): TopicPartitions[] =>
  Object.keys(map)
    .sort()
    .map((topic) => ({ topic, partitions: [...(map[topic] ?? [])] }));

const entries = (map: PartitionMap): [string, readonly number[]][] => Object.entries(map);

export const union = (a: PartitionMap, b: PartitionMap): PartitionMap =>
  partitionMap([...entries(a), ...entries(b)]);

export const minus = (a: PartitionMap, b: PartitionMap): PartitionMap =>
  partitionMap(entries(a).map(([topic, ps]) => [topic, ps.filter((p) => !has(b, topic, p))] as const));

export const intersect = (a: PartitionMap, b: PartitionMap): PartitionMap =>
  partitionMap(entries(a).map(([topic, ps]) => [topic, ps.filter((p) => has(b, topic, p))] as const));

export const filterPartitions = (
  map: PartitionMap,
  keep: (topic: string, partition: number) => boolean,
): PartitionMap =>
  partitionMap(entries(map).map(([topic, ps]) => [topic, ps.filter((p) => keep(topic, p))] as const));

export const has = (map: PartitionMap, topic: string, partition: number): boolean =>
  map[topic]?.includes(partition) ?? false;

export const isEmpty = (map: PartitionMap): boolean => Object.keys(map).length === 0;

export const count = (map: PartitionMap): number => entries(map).reduce((n, [, ps]) => n + ps.length, 0);

export const intersects = (a: PartitionMap, b: PartitionMap): boolean =>
  entries(a).some(([topic, ps]) => ps.some((p) => has(b, topic, p)));

export const isSubset = (a: PartitionMap, b: PartitionMap): boolean =>
  entries(a).every(([topic, ps]) => ps.every((p) => has(b, topic, p)));

export const samePartitions = (a: PartitionMap, b: PartitionMap): boolean => {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((topic) => {
    const pa = a[topic] ?? [];
    const pb = b[topic];
    return pb !== undefined && pa.length === pb.length && pa.every((p, i) => p === pb[i]);
  });
};

/** Every (topic, partition) pair, topic-major. */
export const pairs = (map: PartitionMap): [string, number][] =>
  Object.keys(map)
    .sort()
    .flatMap((topic) => (map[topic] ?? []).map((p) => [topic, p] as [string, number]));

/** `[0,1,2,3,5]` → `"0-3,5"`: assignments are mostly runs, and the group item is billed per KB. */
export const encodeRanges = (partitions: readonly number[]): string => {
  const parts: string[] = [];
  let i = 0;
  while (i < partitions.length) {
    const start = partitions[i] as number;
    let end = start;
    while (partitions[i + 1] === end + 1) end = partitions[++i] as number;
    parts.push(start === end ? String(start) : `${start}-${end}`);
    i++;
  }
  return parts.join(',');
};

export const decodeRanges = (text: string): number[] => {
  const out: number[] = [];
  if (text === '') return out;
  for (const part of text.split(',')) {
    const dash = part.indexOf('-');
    const from = Number(dash < 0 ? part : part.slice(0, dash));
    const to = dash < 0 ? from : Number(part.slice(dash + 1));
    for (let p = from; p <= to; p++) out.push(p);
  }
  return out;
};

export const encodePartitionMap = (map: PartitionMap): Record<string, string> =>
  Object.fromEntries(entries(map).map(([topic, ps]) => [topic, encodeRanges(ps)]));

/** Decodes what encodePartitionMap wrote (already sorted and distinct). */
export const decodePartitionMap = (value: unknown): PartitionMap => {
  if (value === null || typeof value !== 'object') return EMPTY_PARTITIONS;
  const out: Record<string, number[]> = {};
  for (const topic of Object.keys(value).sort()) {
    const ranges = (value as Record<string, unknown>)[topic];
    const partitions = typeof ranges === 'string' ? decodeRanges(ranges) : [];
    if (partitions.length > 0) out[topic] = partitions;
  }
  return out;
};
