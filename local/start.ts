/**
 * `npm start`: runs Sluice on this machine. Data persists under .sluice/ (SLUICE_DATA_DIR), so a
 * restart — even after kill -9 — keeps every topic and record.
 */
import { join, resolve } from 'node:path';
import { DataDirInUseError, lockDataDir } from './data-dir-lock.js';
import { startLocalStack } from './stack.js';

const env = process.env;
// Versions are pinned (package-lock.json); the SDK's Node 22 notice is about later releases.
env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const port = Number(env.PORT ?? 8787);
const kafkaPort = Number(env.SLUICE_KAFKA_PORT ?? 9092);
const dataDir = resolve(env.SLUICE_DATA_DIR ?? '.sluice');
const maintenanceIntervalMs = Number(env.SLUICE_MAINTENANCE_INTERVAL_MS ?? 10_000);
const storeCount = Number(env.SLUICE_STORE_COUNT ?? 3);
const replicationIntervalMs = Number(env.SLUICE_REPLICATION_INTERVAL_MS ?? 500);
const connectIntervalMs = Number(env.SLUICE_CONNECT_INTERVAL_MS ?? 1_000);
const verbose = env.SLUICE_VERBOSE === '1';

for (const [name, value] of [
  ['PORT', port],
  ['SLUICE_KAFKA_PORT', kafkaPort],
  ['SLUICE_MAINTENANCE_INTERVAL_MS', maintenanceIntervalMs],
  ['SLUICE_STORE_COUNT', storeCount],
  ['SLUICE_REPLICATION_INTERVAL_MS', replicationIntervalMs],
  ['SLUICE_CONNECT_INTERVAL_MS', connectIntervalMs],
] as const) {
  if (!Number.isInteger(value) || value < 0) {
    console.error(`sluice: ${name} must be a non-negative integer`);
    process.exit(2);
  }
}

console.log(`sluice: starting (data in ${dataDir})…`);
const started = Date.now();
try {
  const unlock = await lockDataDir(dataDir);
  process.on('exit', unlock);
  const stack = await startLocalStack({
    port,
    dataDir,
    maintenanceIntervalMs,
    replicationIntervalMs,
    connectIntervalMs,
    storeCount: Math.max(1, storeCount),
    kafkaPort,
    stackFile: join(dataDir, 'stack.json'),
    log: (line) => {
      if (verbose || /error|failed/i.test(line)) console.error(`sluice: ${line}`);
    },
    // The functions' structured log records, one readable line each: warnings and errors always.
    telemetryLog: (line) => {
      if (verbose || / (WARN|ERROR) /.test(line)) console.error(line);
    },
  });
  console.log(
    `sluice: DynamoDB ${stack.endpoints.dynamodb}  table ${stack.tableName}  stores ${stack.stores
      .map((s) => `${s.id}=${s.endpoint}${s.pid === null ? '' : ` (pid ${s.pid})`}`)
      .join('  ')}  segments ${stack.segments.bucket}=${stack.segments.endpoint}${
      stack.segments.pid === null ? '' : ` (pid ${stack.segments.pid})`
    }`,
  );
  if (stack.latencyModel !== 'none')
    console.log(
      `sluice: latency model ${stack.latencyModel}: every storage call waits as on AWS (modelled, not measured)`,
    );
  console.log(`sluice: ready in ${((Date.now() - started) / 1000).toFixed(1)} s — listening on ${stack.url}`);
  console.log(
    stack.auth.mode === 'iam'
      ? `sluice: SLUICE_AUTH=iam — requests must be SigV4-signed (service execute-api, region ${stack.auth.region}) with a key of ${stack.auth.credentials}, and are allowed by the IAM policies of ${stack.auth.policy}`
      : 'sluice: authorization is OPEN — any caller may do anything (local development); SLUICE_AUTH=iam enforces SigV4 and IAM policies',
  );
  if (stack.kafka)
    console.log(
      `sluice: Kafka protocol on ${stack.kafka.bootstrap} — try  kcat -b ${stack.kafka.bootstrap} -L  (SLUICE_KAFKA_PORT)`,
    );
  console.log(`sluice: try  curl ${stack.url}/v1/health`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`sluice: ${signal}, stopping…`);
    await stack.stop();
    unlock();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
} catch (error) {
  if (error instanceof DataDirInUseError) {
    console.error(`sluice: ${error.message}`);
    process.exit(1);
  }
  console.error(`sluice: could not start: ${error instanceof Error ? error.message : String(error)}`);
  if (error instanceof Error && error.message.includes('EADDRINUSE'))
    console.error(`sluice: port ${port} or ${kafkaPort} is taken; set PORT=… or SLUICE_KAFKA_PORT=…`);
  process.exit(1);
}
