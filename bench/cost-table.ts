/**
 * `npm run bench:cost [-- --write] [--durations bench/results/<stamp>-summary.json]`: counts what
 * Sluice's code does per request (bench/cost-usage.ts, in-process, a few seconds), prices it with the
 * full model (bench/cost-model.ts) and prints docs/cost.md's generated tables: $/GiB written and read
 * once by request size, the monthly bill of three customer shapes for RF=1/RF=3 × S3 Standard/Express
 * beside Kinesis on-demand, MSK Serverless and Confluent Cloud, and where each Sluice month goes.
 * `--write` replaces the generated part of docs/cost.md. `--durations` takes the produce and fetch
 * Lambda durations an `npm run bench` run measured instead of the duration model.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { format, resolveConfig } from 'prettier';
import { DURATION_MODEL } from './cost.js';
import {
  confluentBasic,
  confluentStandard,
  eckusFor,
  kinesisOnDemand,
  mskServerless,
  perMonth,
} from './cost-competitors.js';
import type { Traffic } from './cost-competitors.js';
import type { Durations } from './cost-model.js';
import {
  ACTIVITIES,
  SHAPES,
  billTotal,
  deployment,
  orphanScanPeriodSec,
  sluiceMonthly,
  usdPerGiBWrittenAndReadOnce,
} from './cost-model.js';
import type { Deployment, Shape, StoreClass } from './cost-model.js';
import { PRICE_SOURCES, PRICES } from './cost-prices.js';
import type { MeasuredUsage } from './cost-usage.js';
import { measureUsage, usageRunFor } from './cost-usage.js';
import { indexWalk, NEVER } from './cost-usage-runs.js';
import { flags } from './flags.js';

const MiB = 2 ** 20;
const DOC = 'docs/cost.md';
const BEGIN = '<!-- bench:cost begin -->';
const END = '<!-- bench:cost end -->';
const REQUEST_SIZES = [64 * 1024, 256 * 1024, MiB, 4 * MiB];
const COLUMNS: { rf: number; cls: StoreClass; label: string }[] = [
  { rf: 1, cls: 'standard', label: 'Sluice RF=1 Standard' },
  { rf: 3, cls: 'standard', label: 'Sluice RF=3 Standard' },
  { rf: 1, cls: 'express', label: 'Sluice RF=1 Express' },
  { rf: 3, cls: 'express', label: 'Sluice RF=3 Express' },
];

const kib = (bytes: number) => (bytes >= MiB ? `${bytes / MiB} MiB` : `${bytes / 1024} KiB`);
const usd = (v: number) =>
  v >= 100 ? `$${Math.round(v).toLocaleString('en-US')}` : `$${v.toFixed(v >= 1 ? 2 : 4)}`;
const per = (v: number) => v.toFixed(4);
const r3 = (v: number) => Math.round(v * 1000) / 1000;
/** A Markdown table row; a `|` inside a cell (a page title) is escaped. */
const row = (cells: (string | number)[]) =>
  `| ${cells.map((c) => String(c).replace(/\|/g, '\\|')).join(' | ')} |`;
const table = (head: string[], rows: (string | number)[][]) =>
  [row(head), row(head.map(() => '---')), ...rows.map(row)].join('\n');

/** Produce and fetch durations a bench run measured at `requestBytes` (its summary's `costs`). */
const measuredDurations = async (file: string, requestBytes: number): Promise<Durations> => {
  const doc = JSON.parse(await readFile(file, 'utf8')) as {
    costs?: {
      batchBytes: number;
      measured: { produce: { durationMs: number }; fetch: { durationMs: number } };
    }[];
  };
  const at = doc.costs?.find((c) => c.batchBytes === requestBytes);
  if (!at) throw new Error(`${file} has no cost entry for ${requestBytes}-byte batches`);
  return {
    ...DURATION_MODEL,
    produce: { fixedMs: at.measured.produce.durationMs, msPerMiB: 0 },
    fetch: { fixedMs: at.measured.fetch.durationMs, msPerMiB: 0 },
  };
};

const trafficOf = (s: Shape): Traffic => ({
  ingressMiBPerSec: s.ingressMiBPerSec,
  readFanout: s.consumerGroups,
  partitions: s.partitions,
  recordBytes: s.recordBytes,
  topics: 1,
  retentionHours: s.retentionHours,
});

const main = async () => {
  const f = flags();
  const usage = new Map<string, MeasuredUsage>();
  const measured = async (bytes: number, rf: number) => {
    const key = `${bytes}/${rf}`;
    if (!usage.has(key)) usage.set(key, await measureUsage(usageRunFor(bytes, rf)));
    return usage.get(key)!;
  };
  const durationsFile = f.get('durations');
  const durations = durationsFile ? await measuredDurations(durationsFile, MiB) : DURATION_MODEL;

  const perGiBRows: (string | number)[][] = [];
  for (const bytes of REQUEST_SIZES) {
    const u = await measured(bytes, 1);
    const d = deployment(1, 'standard');
    const b = usdPerGiBWrittenAndReadOnce(d, u, bytes === MiB ? durations : DURATION_MODEL);
    perGiBRows.push([
      kib(bytes),
      per(b.s3Requests),
      per(b.dynamodb),
      per(b.lambdaRequests),
      per(b.lambdaCompute),
      per(b.apiGateway),
      `**${per(billTotal(b))}**`,
    ]);
  }
  const atMiB = await Promise.all(COLUMNS.map(async (c) => ({ ...c, usage: await measured(MiB, c.rf) })));
  const onceAt1MiB = atMiB.map((c) =>
    billTotal(usdPerGiBWrittenAndReadOnce(deployment(c.rf, c.cls), c.usage, durations)),
  );

  const monthRows: (string | number)[][] = [];
  const perGiBShapeRows: (string | number)[][] = [];
  const activityRows: (string | number)[][] = [];
  for (const shape of SHAPES) {
    const months = atMiB.map((c) => sluiceMonthly(shape, deployment(c.rf, c.cls), c.usage, durations));
    const t = trafficOf(shape);
    const others = [kinesisOnDemand(t), mskServerless(t), confluentBasic(t), confluentStandard(t)];
    monthRows.push([
      shape.name,
      ...months.map((m) => usd(m.total)),
      ...others.map((o) => usd(perMonth(o, t))),
    ]);
    perGiBShapeRows.push([
      shape.name,
      ...months.map((m) => per(m.usdPerGiB)),
      ...others.map((o) => per(perMonth(o, t) / months[0]!.gibPerMonth)),
    ]);
    for (const [i, m] of months.entries()) {
      if (i !== 0 && i !== 3) continue;
      activityRows.push([
        `${shape.name}, ${atMiB[i]!.label.replace('Sluice ', '')}`,
        ...ACTIVITIES.map((a) => usd(billTotal(m.byActivity[a]))),
        `**${usd(m.total)}**`,
      ]);
      activityRows.push([
        '  its floor',
        ...ACTIVITIES.map((a) => (m.floor[a] === 0 ? '$0' : usd(m.floor[a]))),
        usd(ACTIVITIES.reduce((sum, a) => sum + m.floor[a], 0)),
      ]);
    }
  }

  // The same months with retention.bytes set on the topic too: what each run reads over the index held
  // is measured again with it (retention by bytes reads the log's byte total in the partition item).
  const RETENTION_BYTES = { 'retention.bytes': String(2 ** 40) };
  const byBytes = await Promise.all(
    [0, 3].map(async (i) => {
      const c = atMiB[i]!;
      const walk = await indexWalk(c.rf, NEVER, RETENTION_BYTES);
      return { c, walk, usage: { ...c.usage, readUnitsPerIndexByte: walk } };
    }),
  );
  const byBytesRows = byBytes.map(({ c, walk, usage: u }) => [
    c.label.replace('Sluice ', ''),
    String(r3(walk * 4096)),
    ...SHAPES.map((s) =>
      usd(billTotal(sluiceMonthly(s, deployment(c.rf, c.cls), u, durations).byActivity.maintenance)),
    ),
  ]);

  const others = ['Kinesis on-demand', 'MSK Serverless', 'Confluent Basic', 'Confluent Standard'];
  const u1 = atMiB[0]!.usage;
  const base = deployment(1, 'standard');
  const lines = [
    `Generated by \`npm run bench:cost\` with prices read ${PRICES.readOn} (${PRICES.region}); Lambda durations: ${durationsFile ? `measured, ${durationsFile}` : 'the duration model'}.`,
    '',
    `Counted per 1 MiB produce request (${u1.requestBytes} bytes, ${u1.records} records of ${u1.options.recordBytes} B): RF=1 ${u1.produce.puts} PUT, ${r3(u1.produce.writeUnits)} WRU, ${r3(u1.produce.readUnits)} RRU; RF=3 ${atMiB[1]!.usage.produce.puts} PUTs, ${r3(atMiB[1]!.usage.produce.writeUnits)} WRU. Per fetch of one request: ${u1.fetch.gets} GET, ${r3(u1.fetch.readUnits)} RRU; a waiting poll's read of the partition item: ${u1.stateReadUnits} RRU. Per GiB rolled: ${Math.round(u1.rollPerGiB.replica.gets)} GETs, ${Math.round(u1.rollPerGiB.segment.puts)} segment PUTs, ${Math.round(u1.rollPerGiB.metadata.writeUnits)} WRU, ${Math.round(u1.rollPerGiB.metadata.readUnits)} RRU. A maintenance run with nothing to do that skips the orphan scan: ${r3(u1.idleRun.fixed.metadata.writeUnits)} WRU (the failed claim) and ${r3(u1.idleRun.fixed.metadata.readUnits)} RRU, plus per partition ${r3(u1.idleRun.perPartition.replica.lists)} LIST (RF=3: ${r3(atMiB[1]!.usage.idleRun.perPartition.replica.lists)}) and ${r3(u1.idleRun.perPartition.metadata.readUnits)} RRU; over the index it holds, ${r3(u1.readUnitsPerIndexByte * 4096)} RRU per 4 KiB (retention and local retention). A run of a topic in use (data on every partition since the last run, two groups) besides rolling, retiring and expiring: ${r3(u1.steadyRun.fixed.metadata.writeUnits)} WRU and ${r3(u1.steadyRun.fixed.metadata.readUnits)} RRU, plus per partition ${r3(u1.steadyRun.perPartition.metadata.writeUnits)} WRU (RF=3: ${r3(atMiB[1]!.usage.steadyRun.perPartition.metadata.writeUnits)}) and ${r3(u1.steadyRun.perPartition.metadata.readUnits)} RRU (RF=3: ${r3(atMiB[1]!.usage.steadyRun.perPartition.metadata.readUnits)}): the followers' catch-up, the tail indexed at the run, the groups' sweep. The orphan scan adds ${r3(u1.orphanScan.fixed.replica.lists)} LIST per replica store (RF=3: ${r3(atMiB[1]!.usage.orphanScan.fixed.replica.lists)}) and ${r3(u1.orphanScan.fixed.segment.lists)} of the segment store per 1,000 objects, ${r3(u1.orphanScan.perPartition.metadata.readUnits)} RRU per partition and ${r3(u1.orphanScan.readUnitsPerIndexByte * 4096)} RRU per 4 KiB of index, once per ${orphanScanPeriodSec(deployment(1, 'standard')) / 60} minutes. Per heartbeat: ${u1.heartbeat.writeUnits} WRU, ${u1.heartbeat.readUnits} RRU; per committed offset: ${u1.commitPerPartition.writeUnits} WRU, ${u1.commitPerPartition.readUnits} RRU.`,
    '',
    `### Prices (${PRICES.region}, read ${PRICES.readOn}; \`bench/cost-prices.ts\`)`,
    '',
    table(
      ['Item', 'Price', 'Basis', 'Source'],
      PRICE_SOURCES.map((p) => [p.item, p.price, p.basis, p.source]),
    ),
    '',
    '### $/GiB written once and read once (RF=1, S3 Standard)',
    '',
    table(
      ['Request', 'S3', 'DynamoDB', 'Lambda requests', 'Lambda GB-s', 'API Gateway', 'Total $/GiB'],
      perGiBRows,
    ),
    '',
    `At 1 MiB requests: ${COLUMNS.map((c, i) => `${c.label.replace('Sluice ', '')} $${per(onceAt1MiB[i]!)}`).join(', ')}.`,
    '',
    '### Per month (USD), 7-day retention, 2 consumer groups',
    '',
    table(['Shape', ...COLUMNS.map((c) => c.label), ...others], monthRows),
    '',
    '### The same months per GiB produced',
    '',
    table(['Shape', ...COLUMNS.map((c) => c.label), ...others], perGiBShapeRows),
    '',
    '### Where a Sluice month goes (USD)',
    '',
    "Under each month, its floor: what no design can avoid at that RF and store class (the data's PUTs and one commit per request, its GETs for each group, the offsets groups commit, one copy of the retained data in S3 Standard; nothing while consumers wait and nothing of maintenance, which S3 lifecycle rules could do for free).",
    '',
    table(
      [
        'Shape, deployment',
        'produce',
        'consume',
        'consumers waiting',
        'groups',
        'maintenance',
        'storage',
        'total',
      ],
      activityRows,
    ),
    '',
    'Maintenance with `retention.bytes` set on the topic as well as `retention.ms` (the read units a run spends per 4 KiB of index held, measured with it):',
    '',
    table(['Deployment', 'RRU per 4 KiB of index', ...SHAPES.map((s) => s.name)], byBytesRows),
    '',
    'How a caught-up consumer waits, priced per option (RF=1 Standard, "consumers waiting" only):',
    '',
    table(
      ['Option', ...SHAPES.map((s) => s.name)],
      (
        [
          [
            'one long poll per partition, 1,024 MB fetch function (before issue 28)',
            { longPollPer: 'partition', memoryMb: { ...base.memoryMb, fetch: 1024 } },
          ],
          [
            'one long poll per member (POST /v1/fetch), 1,024 MB',
            { longPollPer: 'member', memoryMb: { ...base.memoryMb, fetch: 1024 } },
          ],
          [
            `one long poll per member, ${base.memoryMb.fetch} MB (built: the SDK's fallback without a socket)`,
            { longPollPer: 'member' },
          ],
          [
            'one long poll per member, 128 MB',
            { longPollPer: 'member', memoryMb: { ...base.memoryMb, fetch: 128 } },
          ],
          [
            `one long poll per member, ${base.memoryMb.fetch} MB, woken by reading the table's stream (not built)`,
            { longPollPer: 'member-stream' },
          ],
          [
            'WebSocket: registered by every fetch that leaves the member caught up, told by the stream record that passes it (built: `pacedFetchMs: 0`)',
            { pacedFetchMs: 0 },
          ],
          [
            `the same, but while a fetch ${base.pacedFetchMs} ms after the last is empty at most 5 % of the time the member fetches on that pace without registering (built, the default)`,
            {},
          ],
        ] as [string, Partial<Deployment>][]
      ).map(([name, change]) => [
        name,
        ...SHAPES.map((s) =>
          usd(billTotal(sluiceMonthly(s, { ...base, ...change }, u1, durations).byActivity.consumerWaiting)),
        ),
      ]),
    ),
    '',
    'What pacing trades (the SDK consumer\'s `pacedFetchMs`; RF=1 Standard, "consumers waiting" only). A paced member fetches that long after its last fetch began, so a record waits up to that long (half of it on average) more than a wake would take; it paces only where batches come at least ln 20 / pacedFetchMs a second per member:',
    '',
    table(
      ['pacedFetchMs', 'paces from (batches/s per member)', ...SHAPES.map((s) => s.name)],
      [0, 250, 300, 500, 1000].map((pacedFetchMs) => [
        pacedFetchMs === base.pacedFetchMs ? `**${pacedFetchMs}** (default)` : String(pacedFetchMs),
        pacedFetchMs === 0 ? 'never' : (Math.log(20) / (pacedFetchMs / 1000)).toFixed(1),
        ...SHAPES.map((s) =>
          usd(
            billTotal(sluiceMonthly(s, { ...base, pacedFetchMs }, u1, durations).byActivity.consumerWaiting),
          ),
        ),
      ]),
    ),
    '',
    `Shapes: ${SHAPES.map((s) => `${s.name}: ${s.partitions} partitions, ${s.membersPerGroup} member(s) per group, Confluent ${eckusFor(trafficOf(s))} eCKU(s)`).join('; ')}.`,
  ];
  const generated = lines.join('\n');
  if (f.has('write')) {
    const doc = await readFile(DOC, 'utf8');
    const from = doc.indexOf(BEGIN);
    const to = doc.indexOf(END);
    if (from < 0 || to < from) throw new Error(`${DOC} has no ${BEGIN} … ${END} section`);
    const next = `${doc.slice(0, from + BEGIN.length)}\n\n${generated}\n\n${doc.slice(to)}`;
    const options = (await resolveConfig(DOC)) ?? {};
    await writeFile(DOC, await format(next, { ...options, filepath: DOC }));
    console.log(`wrote ${DOC}`);
  } else console.log(generated);
};

await main();
