/**
 * `npm run bench:connect`: Connect task throughput on the local stack (handlers in this process,
 * DynamoDB Local and s3rver as children) and a PostgreSQL started for the run. One task each, run
 * by the runtime exactly as the connect-worker function runs it (leases, intents, commits):
 * 1. JDBC source: `--rows` rows of ~`--row-bytes` bytes from a table into a 3-partition topic;
 * 2. S3 sink: that topic into s3rver objects of `--flush-size` records (S3 PUTs per GiB counted);
 * 3. JDBC sink: that topic upserted into a table;
 * 4. DynamoDB Streams source: `--rows` item writes of ~`--row-bytes` bytes to a DynamoDB Local table
 *    with a NEW_IMAGE stream, read from the stream into a 3-partition topic;
 * 5. Lambda sink: the pg-events topic to a real handler in the Invoke emulator
 *    (test/support/lambda-emulator.ts), `--lambda-batch-size` records per invocation.
 * Each phase runs invocations of `--budget-ms` until its work is done and reports records/s over the
 * wall time. The last stdout line is one JSON object with every figure.
 */
import { mkdtemp } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BatchWriteItemCommand, CreateTableCommand } from '@aws-sdk/client-dynamodb';
import pg from 'pg';
import { s3SinkMeter } from '../connect/connectors/s3-sink.js';
import { ConnectWorker } from '../connect/worker/worker.js';
import { ConnectStateStore } from '../connect/state-store.js';
import { createAwsClients } from '../lib/adapters/aws/clients.js';
import { ensureBucket } from '../lib/adapters/aws/schema.js';
import { systemClock } from '../lib/ports/clock.js';
import { startLocalStack } from '../local/stack.js';
import { SluiceClient } from '../sdk/client.js';
import { nodeHttpFetch } from '../sdk/node-http.js';
import { startLambdaEmulator } from '../test/support/lambda-emulator.js';
import { startPostgres } from '../test/support/postgres.js';
import { flags, numberFlag } from './flags.js';

const args = flags(process.argv.slice(2));
const rows = numberFlag(args, 'rows', 20_000);
const rowBytes = numberFlag(args, 'row-bytes', 512);
const flushSize = numberFlag(args, 'flush-size', 1_000);
const budgetMs = numberFlag(args, 'budget-ms', 10_000);
const lambdaBatchSize = numberFlag(args, 'lambda-batch-size', 500);

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const counted = join(await mkdtemp(join(tmpdir(), 'bench-lambda-')), 'counts.jsonl');
const [stack, db, lambda] = await Promise.all([
  startLocalStack({ port: 0, maintenanceIntervalMs: 0 }),
  startPostgres(),
  startLambdaEmulator([
    {
      name: 'bench-fn',
      module: fileURLToPath(new URL('../test/fixtures/lambda/msk-orders.ts', import.meta.url)),
      exportName: 'countHandler',
      environment: { ORDERS_OUT: counted },
      timeoutMs: 30_000,
    },
  ]),
]);
process.env.AWS_ENDPOINT_URL_LAMBDA = lambda.endpoint;
const sql = new pg.Client({ connectionString: db.url });
try {
  await sql.connect();
  const client = new SluiceClient({ url: stack.url, fetch: nodeHttpFetch() });
  const runtime = await import('../local/runtime.js');
  const state = new ConnectStateStore(runtime.sluiceFromEnv().store);
  const worker = new ConnectWorker({
    state,
    client,
    clock: systemClock,
    workerId: 'bench',
    budgetMs,
    pollIntervalMs: 200,
  });
  const { s3 } = createAwsClients({ endpoints: { s3: stack.endpoints.s3 } });
  await ensureBucket(s3, 'bench-archive');

  await sql.query(
    'CREATE TABLE events (id bigserial PRIMARY KEY, kind text NOT NULL, payload text NOT NULL)',
  );
  await sql.query('CREATE TABLE "pg-events" (id bigint PRIMARY KEY, kind text, payload text)');
  await sql.query(
    `INSERT INTO events (kind, payload) SELECT 'kind-' || (g % 7), repeat(md5(g::text), $1) FROM generate_series(1, $2) g`,
    [Math.max(1, Math.round(rowBytes / 32)), rows],
  );
  await client.admin().createTopic({ name: 'pg-events', partitions: 3 });
  const connect = client.connect();
  const common = { 'key.converter': 'org.apache.kafka.connect.json.JsonConverter' };

  /**
   * Creates one connector and runs invocations until `done` holds (checked every 100 ms while they
   * run, since a task keeps polling until its budget ends); records/s over the time until then.
   */
  const phase = async (name: string, config: Record<string, string>, done: () => Promise<boolean>) => {
    await connect.createConnector(name, { ...common, ...config });
    const started = performance.now();
    let invocations = 0;
    let seconds: number | undefined;
    while (seconds === undefined) {
      let finished = false;
      const tick = worker.tick().finally(() => (finished = true));
      invocations += 1;
      while (seconds === undefined && !finished) {
        if (await done()) seconds = (performance.now() - started) / 1000;
        else await new Promise((r) => setTimeout(r, 100));
      }
      await tick;
    }
    await connect.stop(name);
    return {
      seconds: Math.round(seconds * 100) / 100,
      invocations,
      recordsPerSec: Math.round(rows / seconds),
    };
  };

  const source = await phase(
    'bench-source',
    {
      'connector.class': 'JdbcSourceConnector',
      'connection.url': db.url,
      'table.whitelist': 'events',
      mode: 'incrementing',
      'incrementing.column.name': 'id',
      'topic.prefix': 'pg-',
      'batch.max.rows': '1000',
      transforms: 'key',
      'transforms.key.type': 'org.apache.kafka.connect.transforms.ValueToKey',
      'transforms.key.fields': 'id',
    },
    async () => (await connect.offsets('bench-source'))[0]?.offset?.['incrementing'] === rows,
  );
  const highs = await client.admin().fetchTopicOffsets('pg-events');
  const sinkDone = (name: string) => async () => {
    const committed = new Map(
      (await connect.offsets(name)).map((o) => [o.partition['kafka_partition'], o.offset?.['kafka_offset']]),
    );
    // The S3 sink commits at object boundaries: done when only a partial object is left per partition.
    const slack = name === 'bench-s3' ? flushSize : 1;
    return highs.every((h) => h.high - Number(committed.get(h.partition) ?? 0) < slack);
  };
  const s3Phase = await phase(
    'bench-s3',
    {
      'connector.class': 'S3SinkConnector',
      topics: 'pg-events',
      's3.bucket.name': 'bench-archive',
      'store.url': stack.endpoints.s3,
      'flush.size': String(flushSize),
    },
    sinkDone('bench-s3'),
  );
  const s3Usage = s3SinkMeter.read();
  const pgPhase = await phase(
    'bench-pg',
    {
      'connector.class': 'JdbcSinkConnector',
      topics: 'pg-events',
      'connection.url': db.url,
      'insert.mode': 'upsert',
      'pk.mode': 'record_key',
      'pk.fields': 'id',
    },
    sinkDone('bench-pg'),
  );
  const lambdaPhase = await phase(
    'bench-lambda',
    {
      'connector.class': 'AwsLambdaSinkConnector',
      topics: 'pg-events',
      'aws.lambda.function.name': 'bench-fn',
      'aws.lambda.region': 'us-east-1',
      'aws.lambda.batch.size': String(lambdaBatchSize),
    },
    sinkDone('bench-lambda'),
  );
  const { dynamodb } = createAwsClients({ endpoints: { dynamodb: stack.endpoints.dynamodb } });
  await dynamodb.send(
    new CreateTableCommand({
      TableName: 'bench-items',
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' },
    }),
  );
  const payload = 'x'.repeat(Math.max(1, rowBytes - 40));
  for (let i = 0; i < rows; i += 25) {
    const puts = Array.from({ length: Math.min(25, rows - i) }, (_, j) => ({
      PutRequest: {
        Item: { id: { S: `item-${i + j}` }, kind: { S: `kind-${(i + j) % 7}` }, payload: { S: payload } },
      },
    }));
    await dynamodb.send(new BatchWriteItemCommand({ RequestItems: { 'bench-items': puts } }));
  }
  await client.admin().createTopic({ name: 'dynamodb-bench-items', partitions: 3 });
  const ddbPhase = await phase(
    'bench-dynamodb',
    {
      'connector.class': 'DynamoDbSourceConnector',
      'dynamodb.table.includelist': 'bench-items',
      'dynamodb.service.endpoint': stack.endpoints.dynamodb,
      'dynamodb.cdc.max.poll.records': '1000',
    },
    async () =>
      (await client.admin().fetchTopicOffsets('dynamodb-bench-items')).reduce((n, p) => n + p.high, 0) >=
      rows,
  );
  dynamodb.destroy();
  const gib = s3Usage.objectPutBytes / 2 ** 30;
  const result = {
    machine: { cpus: cpus().length, loadavg: loadavg().map((l) => Math.round(l * 100) / 100) },
    rows,
    rowBytes,
    flushSize,
    budgetMs,
    jdbcSource: source,
    s3Sink: {
      ...s3Phase,
      puts: s3Usage.objectPuts,
      bytes: s3Usage.objectPutBytes,
      putsPerGiB: Math.round(s3Usage.objectPuts / gib),
    },
    jdbcSink: pgPhase,
    lambdaSink: {
      ...lambdaPhase,
      batchSize: lambdaBatchSize,
      functionInvocations: lambda.invocations.length,
    },
    dynamodbSource: ddbPhase,
  };
  console.log(JSON.stringify(result));
} finally {
  await sql.end().catch(() => undefined);
  await Promise.all([stack.stop(), db.stop(), lambda.stop()]);
}
