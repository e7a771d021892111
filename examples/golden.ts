/**
 * Golden runs of the examples: each example's input records (examples/golden/<name>.input.json) and
 * the records it must write (…output.json), as UTF-8 text, so every runner can be held to the same bytes.
 */
import { readFile } from 'node:fs/promises';
import { Serdes, TopologyTestDriver } from '../streams/index.js';
import type { Topology } from '../streams/index.js';

export interface GoldenRecord {
  topic: string;
  key: string | null;
  value: string | null;
  timestamp: number;
}

export const EXAMPLES = ['word-count', 'page-views', 'orders-enriched'] as const;
export type ExampleName = (typeof EXAMPLES)[number];

export const goldenPath = (name: ExampleName, kind: 'input' | 'output'): URL =>
  new URL(`./golden/${name}.${kind}.json`, import.meta.url);

export const readGolden = async (name: ExampleName, kind: 'input' | 'output'): Promise<GoldenRecord[]> =>
  JSON.parse(await readFile(goldenPath(name, kind), 'utf8')) as GoldenRecord[];

const MODULES: Record<ExampleName, () => Promise<{ topology: () => Topology }>> = {
  'word-count': () => import('./word-count.js'),
  'page-views': () => import('./page-views.js'),
  'orders-enriched': () => import('./orders-enriched.js'),
};

export const loadExample = async (name: ExampleName): Promise<Topology> => (await MODULES[name]()).topology();

/** The topics an example writes that are not internal: its outputs. */
export const outputTopicsOf = (topology: Topology): string[] => [
  ...new Set(topology.subTopologies.flatMap((s) => s.sinks.filter((t) => !t.internal).map((t) => t.name))),
];

/** One key's records in order: outputs of different partitions have no order between them. */
export const byKey = (records: GoldenRecord[]): Record<string, { value: string | null }[]> => {
  const out: Record<string, { value: string | null }[]> = {};
  for (const r of records) (out[`${r.topic}/${r.key}`] ??= []).push({ value: r.value });
  return out;
};

/** Runs an example's golden input through the test driver and returns what it wrote, topic by topic. */
export const runWithTestDriver = async (name: ExampleName): Promise<GoldenRecord[]> => {
  const topology = await loadExample(name);
  const driver = new TopologyTestDriver(topology, { 'application.id': name });
  const S = Serdes.String();
  for (const r of await readGolden(name, 'input'))
    await driver.createInputTopic(r.topic, S, S).pipeInput(r.key, r.value, r.timestamp);
  return outputTopicsOf(topology).flatMap((topic) =>
    driver
      .createOutputTopic(topic, S, S)
      .readRecordsToList()
      .map((r) => ({ topic, key: r.key, value: r.value, timestamp: r.timestamp })),
  );
};
