/**
 * `npm run bench:segments`: what rolling segments buys, counted in the units AWS bills. A 100k-record
 * partition is written as 64 KiB produce requests to Sluice on in-memory stores (the adapters meter
 * every request as S3 and DynamoDB would bill it), read from offset 0 with 4 MiB fetches, rolled into
 * 16 MiB segments by the maintenance run, and read again. Prints S3 GETs and DynamoDB reads per MiB
 * read before and after, index items per GiB before and after, the roll's own cost per GiB, and $/GiB
 * written, stored 7 days and read twice: S3 Express One Zone replicas + S3 Standard segments against
 * S3 Standard only (today's layout). Options: --records N (default 100000), --replicas R (default 3).
 * Counts are exact; the Lambda duration of the roll is measured on this machine.
 */
import { parseArgs } from 'node:util';
import { ManualClock } from '../lib/adapters/fault/index.js';
import { MemoryMetadataStore } from '../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../lib/adapters/memory/object-store.js';
import { createSluice } from '../functions/app.js';
import { keys } from '../lib/core/keys.js';
import { encodeRecordBatch } from '../protocol/record-batch/index.js';
import { MAX_FETCH_BYTES } from '../lib/core/log/fetch.js';
import type { MeterReading } from '../lib/ports/meter.js';
import { FUNCTION_MEMORY_MB, PRICES, STORAGE_PRICES, sluiceCost } from './cost.js';

const { values } = parseArgs({
  options: { records: { type: 'string', default: '100000' }, replicas: { type: 'string', default: '3' } },
});
const RECORDS = Number(values.records);
const REPLICAS = Number(values.replicas);
const REQUEST_BYTES = 64 * 1024;
const VALUE_BYTES = 1000;
const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

const clock = new ManualClock(Date.UTC(2026, 11, 1));
const store = new MemoryMetadataStore();
const replica = new MemoryObjectStore('s0', undefined, clock);
const segments = new MemoryObjectStore('segments', undefined, clock);
const sluice = createSluice({
  store,
  objectStores: [replica],
  segmentStore: segments,
  clock,
  config: { clusterId: 'bench', topicCacheTtlMs: 3_600_000 },
});

const meters = () => ({
  metadata: store.meter.read(),
  replica: replica.meter.read(),
  segments: segments.meter.read(),
});
type Meters = ReturnType<typeof meters>;
const delta = (a: MeterReading, b: MeterReading): MeterReading =>
  Object.fromEntries(
    Object.keys(a).map((k) => [k, b[k as keyof MeterReading] - a[k as keyof MeterReading]]),
  ) as unknown as MeterReading;
const since = (start: Meters) => {
  const now = meters();
  return {
    metadata: delta(start.metadata, now.metadata),
    replica: delta(start.replica, now.replica),
    segments: delta(start.segments, now.segments),
  };
};

// segment.ms of an hour so the open segment rolls in the same run (Kafka's default is 7 days).
await sluice.catalog.create({ name: 'bench', partitions: 1, configs: { 'segment.ms': '3600000' } });
const topic = await sluice.catalog.get('bench');

// Write: requests of 64 KiB (records of 1000-byte values, as many as fit).
const perRequest = Math.floor(REQUEST_BYTES / (VALUE_BYTES + 20));
let written = 0;
let requests = 0;
let writtenBytes = 0;
const writeStart = meters();
while (written < RECORDS) {
  const n = Math.min(perRequest, RECORDS - written);
  const body = encodeRecordBatch(
    Array.from({ length: n }, (_, i) => ({
      key: null,
      value: new Uint8Array(VALUE_BYTES).fill((written + i) % 251),
      headers: [],
      timestamp: clock.now(),
      offsetDelta: i,
    })),
  );
  await sluice.producer.produceBatches('bench', 0, body, '1');
  written += n;
  writtenBytes += body.length;
  requests++;
  await clock.advance(10);
}
await sluice.maintenance.indexTail(topic.topicId, 0);
const writeUsage = since(writeStart);

const indexItems = async () => {
  const items = store.dump().filter((i) => i.pk === keys.partitionPk(topic.topicId, 0));
  const live = (prefix: string) =>
    items.filter((i) => i.sk.startsWith(prefix) && Array.isArray(i['e'])).length;
  return {
    batchPages: live(keys.batchPrefix),
    segmentItems: live(keys.segmentPrefix),
    timeMarks: items.filter((i) => i.sk.startsWith(keys.timePrefix)).length,
    retiredMarkers: items.filter((i) => i.sk.startsWith('B#') && !Array.isArray(i['e'])).length,
  };
};

/** Reads the whole partition from offset 0 with 4 MiB fetches. */
const readAll = async () => {
  const start = meters();
  let offset = 0;
  let fetches = 0;
  let bytes = 0;
  while (offset < written) {
    const r = await sluice.fetcher.fetchBatches('bench', 0, {
      offset,
      maxBytes: MAX_FETCH_BYTES,
      maxWaitMs: 0,
    });
    offset = r.nextOffset;
    bytes += r.batches.reduce((n, b) => n + b.length, 0);
    fetches++;
  }
  const used = since(start);
  const gets = used.replica.objectGets + used.segments.objectGets;
  return {
    fetches,
    mib: bytes / MiB,
    gets,
    metadataReads: used.metadata.metadataReads,
    // One partition-item read per fetch; the rest are index queries.
    indexReads: used.metadata.metadataReads - fetches,
    readUnits: used.metadata.readUnits,
    getBytes: used.replica.objectGetBytes + used.segments.objectGetBytes,
    replicaGets: used.replica.objectGets,
    segmentGets: used.segments.objectGets,
  };
};

const before = { read: await readAll(), items: await indexItems() };

// Roll two hours later: past segment.ms, so the open segment rolls too, and past local.retention.ms
// (1 hour), so the replica copies are retired in the same run.
await clock.advance(2 * 3_600_000);
const rollStart = meters();
const started = performance.now();
const report = await sluice.maintenance.run();
const rollMs = performance.now() - started;
const rollUsage = since(rollStart);
if (report.errors.length > 0) throw new Error(report.errors.join('; '));
const after = { read: await readAll(), items: await indexItems() };

const gib = writtenBytes / GiB;
const perMiB = (n: number, mib: number) => (n / mib).toFixed(3);
const perGiB = (n: number) => (n / gib).toFixed(1);
// The roll's requests except its replica GETs, which are priced by the replica stores' class below.
const rollBase = sluiceCost({
  s3Puts: rollUsage.segments.objectPuts,
  s3Gets: 0,
  s3Lists: rollUsage.replica.objectLists + rollUsage.segments.objectLists,
  dynamodbWriteUnits: rollUsage.metadata.writeUnits,
  dynamodbReadUnits: rollUsage.metadata.readUnits,
  lambda: [{ invocations: 1, memoryMb: FUNCTION_MEMORY_MB.maintenance, totalDurationMs: rollMs }],
  apiGatewayRequests: 0,
}).total;
const rollFromExpress =
  rollBase +
  (rollUsage.replica.objectGets * STORAGE_PRICES.s3Express.perThousandGets) / 1000 +
  (rollUsage.replica.objectGetBytes / GiB) * STORAGE_PRICES.s3Express.perGiBRetrieved;
const rollFromStandard = rollBase + (rollUsage.replica.objectGets * PRICES.s3.perThousandGets) / 1000;

// $/GiB written, stored 7 days and read twice (storage layer: S3, DynamoDB, the roll's Lambda time;
// produce and fetch Lambdas and API Gateway are the same on both sides and left out).
const month = 30 * 86_400_000;
const sevenDays = (7 * 86_400_000) / month;
const { s3Express: express } = STORAGE_PRICES;
const dynamo = (wru: number, rru: number) =>
  (wru * PRICES.dynamodb.perMillionWriteUnits + rru * PRICES.dynamodb.perMillionReadUnits) / 1e6;
const writeDynamo = dynamo(writeUsage.metadata.writeUnits, writeUsage.metadata.readUnits);
const standardOnly =
  (requests * PRICES.s3.perThousandPuts) / 1000 +
  writeDynamo +
  gib * STORAGE_PRICES.s3StandardPerGiBMonth * sevenDays +
  2 * ((before.read.gets * PRICES.s3.perThousandGets) / 1000 + dynamo(0, before.read.readUnits));
const localMs = 3_600_000;
const tiered =
  REPLICAS * ((requests * express.perThousandPuts) / 1000 + gib * express.perGiBUploaded) +
  writeDynamo +
  rollFromExpress +
  REPLICAS * gib * express.perGiBMonth * (localMs / month) +
  gib * STORAGE_PRICES.s3StandardPerGiBMonth * sevenDays +
  2 * ((after.read.gets * PRICES.s3.perThousandGets) / 1000 + dynamo(0, after.read.readUnits));

const rows: [string, string, string][] = [
  [
    'S3 GETs per MiB read from offset 0',
    perMiB(before.read.gets, before.read.mib),
    perMiB(after.read.gets, after.read.mib),
  ],
  [
    'DynamoDB reads per MiB (requests: partition item + index)',
    perMiB(before.read.metadataReads, before.read.mib),
    perMiB(after.read.metadataReads, after.read.mib),
  ],
  [
    '  of which index reads per MiB',
    perMiB(before.read.indexReads, before.read.mib),
    perMiB(after.read.indexReads, after.read.mib),
  ],
  [
    'DynamoDB read units per MiB',
    perMiB(before.read.readUnits, before.read.mib),
    perMiB(after.read.readUnits, after.read.mib),
  ],
  [
    'index items per GiB (batch pages + segment items + time marks)',
    perGiB(before.items.batchPages + before.items.segmentItems + before.items.timeMarks),
    perGiB(after.items.batchPages + after.items.segmentItems + after.items.timeMarks),
  ],
];
const pad = (s: string, n: number) => s.padEnd(n);
console.log(
  `bench:segments — ${written} records, ${requests} requests of ~${Math.round(writtenBytes / requests / 1024)} KiB, ${(writtenBytes / MiB).toFixed(1)} MiB; ${after.read.fetches} fetches of ${MAX_FETCH_BYTES / MiB} MiB`,
);
console.log(`${pad('', 64)} ${pad('before roll', 12)} after roll`);
for (const [name, b, a] of rows) console.log(`${pad(name, 64)} ${pad(b, 12)} ${a}`);
console.log(
  `items before: ${before.items.batchPages} batch pages, ${before.items.timeMarks} time marks; after: ${after.items.segmentItems} segments, ${after.items.batchPages} batch pages, ${after.items.timeMarks} time marks (+${after.items.retiredMarkers} retired page markers, gone by TTL within a day)`,
);
console.log(
  `roll: ${report.segmentsRolled} segments, ${report.localPagesRetired} local pages retired; per GiB: ${perGiB(rollUsage.replica.objectGets)} GETs, ${perGiB(rollUsage.segments.objectPuts)} PUTs, ${perGiB(rollUsage.metadata.readUnits)} RRU, ${perGiB(rollUsage.metadata.writeUnits)} WRU, ${perGiB(rollMs)} ms of one maintenance Lambda (measured here) = $${(rollFromExpress / gib).toFixed(5)}/GiB reading Express One Zone replicas, $${(rollFromStandard / gib).toFixed(5)}/GiB reading Standard ones`,
);
console.log(
  `$/GiB written + stored 7 days + read twice: S3 Standard only $${(standardOnly / gib).toFixed(4)}; ${REPLICAS} Express One Zone replicas (local.retention.ms 1 h) + Standard segments $${(tiered / gib).toFixed(4)} (prices ${STORAGE_PRICES.readOn}, ${PRICES.region})`,
);
