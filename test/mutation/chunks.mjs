// The chunks a whole-core mutation run is split into: together they cover lib/core exactly once, so
// their counts add up to the whole-core score. Each chunk keeps its own incremental file and report
// (reports/mutation/<chunk>/), so results accumulate across runs and a chunk can be rerun alone:
// `SLUICE_MUTATE_CHUNK=<name> npm run mutate:unit`. The first chunk is the six files of issue 18.
export const six = [
  'lib/core/log/commit.ts',
  'lib/core/record-batch/decode.ts',
  'lib/core/record-batch/header.ts',
  'lib/core/partitioner.ts',
  'lib/core/groups/assignors.ts',
  'lib/core/log/retention.ts',
];

const not = (files) => files.map((file) => `!${file}`);
const logRead = ['lib/core/log/fetch.ts', 'lib/core/log/reader.ts', 'lib/core/log/compaction.ts'];

/** @type {Record<string, string[]>} */
export const chunks = {
  six,
  groups: ['lib/core/groups/**/*.ts', ...not(six)],
  'log-produce': ['lib/core/log/produce.ts'],
  'log-read': logRead,
  log: ['lib/core/log/*.ts', '!lib/core/log/produce.ts', ...not(logRead), ...not(six)],
  segments: ['lib/core/log/segments/**/*.ts'],
  'record-batch': ['lib/core/record-batch/**/*.ts', '!lib/core/**/*.d.ts', ...not(six)],
  replication: ['lib/core/replication/**/*.ts'],
  topics: ['lib/core/topics/**/*.ts'],
  root: ['lib/core/*.ts', ...not(six)],
};
