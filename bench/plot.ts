/**
 * Redraws the plots of saved runs: `npx tsx bench/plot.ts --run bench/results/<stamp> [--produce
 * bench/results/<stamp>-produce.json] [--plots docs]`. `--run` is the common prefix of one
 * `npm run bench` run's files (its workload documents and its -summary.json).
 */
import { readFile, readdir, writeFile, mkdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { flags } from './flags.js';
import { costPlot, ombPlots, producePlot } from './plots.js';

const readJson = async (path: string): Promise<Record<string, unknown>> =>
  JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;

const f = flags();
const plots = f.get('plots') ?? 'bench/results';
await mkdir(plots, { recursive: true });
const run = f.get('run');
if (run) {
  const dir = dirname(run);
  const prefix = basename(run);
  for (const name of await readdir(dir)) {
    if (!name.startsWith(prefix) || !name.endsWith('.json')) continue;
    const doc = await readJson(join(dir, name));
    if (name.endsWith('-summary.json')) {
      const curve = doc['curve'] as Parameters<typeof costPlot>[0]['curve'];
      const comparisons = doc['comparisons'] as (Parameters<typeof costPlot>[0]['compared'] & {
        traffic: { partitions: number };
      })[];
      // The max-rate run (the most partitions, the highest rate) is the one the report compares at.
      const compared = [...comparisons].sort(
        (a, b) => b.traffic.ingressMiBPerSec - a.traffic.ingressMiBPerSec,
      )[0];
      if (curve.length > 0 && compared) {
        const readOn = (doc['prices'] as { readOn: string }).readOn;
        await writeFile(join(plots, 'cost-per-gib.svg'), costPlot({ readOn, curve, compared }));
      }
    } else if (Array.isArray(doc['publishRate'])) {
      const slug = name
        .slice(prefix.length)
        .replace(/^-/, '')
        .replace(/\.json$/, '');
      for (const { file, svg } of ombPlots(doc, slug)) await writeFile(join(plots, file), svg);
    }
  }
}
const produce = f.get('produce');
if (produce)
  await writeFile(join(plots, 'produce-scaling.svg'), producePlot((await readJson(produce)) as never));
