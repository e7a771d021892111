// The chunks a whole-core mutation run is split into: together they cover lib/core exactly once, so
// their counts add up to the whole-core score. Each chunk keeps its own incremental file and report
// (reports/mutation/<chunk>/), so results accumulate across runs and a chunk can be rerun alone:
// `SLUICE_MUTATE_CHUNK=<name> npm run mutate:unit`. The first chunk is the six files of issue 18.
// A run writes its incremental file only when it finishes, so a chunk is kept to a few hundred
// mutants: about half an hour at most on a loaded 2-core machine (1,570 groups mutants did not finish).
export const six = [
  'lib/core/log/commit.ts',
  'protocol/record-batch/decode.ts',
  'protocol/record-batch/header.ts',
  'protocol/partitioner.ts',
  'lib/core/groups/assignors.ts',
  'lib/core/log/retention.ts',
];

const not = (files) => files.map((file) => `!${file}`);
const logRead = ['lib/core/log/fetch.ts', 'lib/core/log/reader.ts', 'lib/core/log/compaction.ts'];
const groups = (...names) => names.map((name) => `lib/core/groups/${name}.ts`);
const groupsMembers = groups('heartbeat', 'group', 'member');
const groupsStore = groups('group-items', 'coordinator', 'offset-delete', 'offset-writer');
const codecs = ['lz4', 'zstd', 'snappy', 'compression', 'xxh64'].map(
  (name) => `protocol/record-batch/${name}.ts`,
);

/** @type {Record<string, string[]>} */
export const chunks = {
  six,
  'groups-requests': [
    'lib/core/groups/**/*.ts',
    // The commit bound the core enforces, in protocol/ since the SDK and the edge split commits by it.
    'protocol/commit-limit.ts',
    ...not([...six, ...groupsMembers, ...groupsStore]),
  ],
  'groups-members': groupsMembers,
  'groups-store': groupsStore,
  'log-produce': ['lib/core/log/produce.ts'],
  // The fetch bounds the core enforces, in protocol/ since the SDK, the edge and the gateway share them.
  'log-read': [...logRead, 'protocol/fetch-limits.ts'],
  log: ['lib/core/log/*.ts', '!lib/core/log/produce.ts', ...not(logRead), ...not(six)],
  segments: ['lib/core/log/segments/**/*.ts'],
  'record-batch': [
    'protocol/record-batch/**/*.ts',
    'protocol/errors.ts',
    '!**/*.d.ts',
    ...not([...six, ...codecs]),
  ],
  codecs,
  replication: ['lib/core/replication/**/*.ts'],
  // The topic config defaults and the transaction bounds the core enforces, in protocol/ since the
  // Kafka gateway reads them too.
  topics: ['lib/core/topics/**/*.ts', 'protocol/topic-config.ts'],
  transactions: ['lib/core/transactions/**/*.ts', 'protocol/transaction-limits.ts'],
  quotas: ['lib/core/quotas/**/*.ts'],
  root: ['lib/core/*.ts', ...not(six)],
};
