/**
 * `npm run fuzz -- --seconds N [--seed S]`: the fuzz suite for as long as asked, in rounds of 6 × 200
 * cases (batch, JSON, path, connector config, Streams query, path variant) from consecutive seeds, each round on a fresh in-memory Sluice. Prints every round's seed and
 * the totals; exits 1 with fast-check's report (seed and path to replay) on the first finding.
 */
import { parseArgs } from 'node:util';
import type { FuzzStats } from './run.js';
import { fuzz } from './run.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    seed: { type: 'string' },
    runs: { type: 'string', default: '200' },
  },
});
const seconds = Number(values.seconds);
const runs = Number(values.runs);
const first = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
if (
  !Number.isFinite(seconds) ||
  seconds <= 0 ||
  !Number.isInteger(runs) ||
  runs <= 0 ||
  !Number.isInteger(first)
) {
  console.error('usage: npm run fuzz -- --seconds N [--seed S] [--runs R]');
  process.exit(2);
}

// fast-check's report, then the oracle's finding it wraps (with what was got and wanted).
const describe = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `\n${describe(error.cause)}` : '';
  const detail = (error as { detail?: unknown }).detail;
  return `${error.message}${detail === undefined ? '' : `\n${JSON.stringify(detail)}`}${cause}`;
};

const total: FuzzStats = { seed: first, cases: 0, accepted: 0, refused: {} };
const deadline = Date.now() + seconds * 1000;
let round = 0;
try {
  while (Date.now() < deadline) {
    const seed = first + 3 * round++;
    await fuzz(seed, runs, total);
    console.log(`round ${round} seed ${seed}: ${total.cases} cases so far`);
  }
} catch (error) {
  console.error(describe(error));
  console.log(`finding after ${total.cases} cases (first seed ${first}, round ${round})`);
  process.exit(1);
}
console.log(
  `fuzz: ${total.cases} cases in ${round} rounds from seed ${first}, no findings; ${total.accepted} accepted, refused ${JSON.stringify(total.refused)}`,
);
