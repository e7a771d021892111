/**
 * `npm run bench:client`: the client's own throughput through the local stack (handlers in this
 * process, DynamoDB Local and s3rver as children).
 * - SDK: one idempotent producer sends 1 KiB records for `--seconds`, in batches of `--batch` records
 *   (one RecordBatch per request), one request in flight per partition over `--partitions`.
 * - CLI: `sluice produce` of `--lines` stdin lines (one record each, 100 bytes), then
 *   `sluice consume --from earliest --max N` of them, then the same as a new group's only member
 *   (`--group`, committing on exit), each a child process timed wall-clock.
 * Figures are wall-clock on whatever machine runs it; the last stdout line is one JSON object.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { SluiceClient } from '../sdk/client.js';
import { nodeHttpFetch } from '../sdk/node-http.js';
import { flags, numberFlag } from './flags.js';
import { startTarget } from './target.js';

const f = flags();
const seconds = numberFlag(f, 'seconds', 10);
const batch = numberFlag(f, 'batch', 500);
const partitions = numberFlag(f, 'partitions', 4);
const lines = numberFlag(f, 'lines', 200_000);

const target = await startTarget({ ...(f.get('url') ? { url: f.get('url')! } : {}) });
const client = new SluiceClient({ url: target.url, fetch: nodeHttpFetch() });
const admin = client.admin();

const sdkProduce = async (): Promise<{ records: number; recordsPerSec: number; mibPerSec: number }> => {
  const topic = `bench-sdk-${Date.now()}`;
  await admin.createTopic({ name: topic, partitions });
  const producer = client.producer();
  const value = randomBytes(1024);
  const messages = Array.from({ length: batch }, (_, i) => ({ key: `k${i}`, value }));
  let records = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: partitions }, async (_, partition) => {
      while (performance.now() < until) {
        await producer.sendBatch(topic, partition, messages);
        records += messages.length;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return {
    records,
    recordsPerSec: Math.round(records / elapsed),
    mibPerSec: Math.round(((records * 1024) / elapsed / 1024 / 1024) * 10) / 10,
  };
};

/** Runs the CLI as a child process with `input` on stdin; resolves its wall-clock ms. */
const cli = (args: string[], input?: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', ...args, '--url', target.url], {
      stdio: ['pipe', 'ignore', 'inherit'],
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve(performance.now() - started)
        : reject(new Error(`sluice ${args[0]} exited ${code}`)),
    );
    child.stdin.end(input ?? '');
  });

const cliRates = async (): Promise<{
  produceLinesPerSec: number;
  consumeLinesPerSec: number;
  groupConsumeLinesPerSec: number;
}> => {
  const topic = `bench-cli-${Date.now()}`;
  await admin.createTopic({ name: topic, partitions });
  const payload = 'x'.repeat(90);
  const input = Array.from({ length: lines }, (_, i) => `${String(i).padStart(9, '0')}${payload}`).join('\n');
  const produceMs = await cli(['produce', topic, '-q'], `${input}\n`);
  const consumeMs = await cli(['consume', topic, '--from', 'earliest', '--max', String(lines), '-q']);
  const groupMs = await cli([
    'consume',
    topic,
    '--group',
    `${topic}-group`,
    '--from',
    'earliest',
    '--max',
    String(lines),
    '-q',
  ]);
  return {
    produceLinesPerSec: Math.round((lines * 1000) / produceMs),
    consumeLinesPerSec: Math.round((lines * 1000) / consumeMs),
    groupConsumeLinesPerSec: Math.round((lines * 1000) / groupMs),
  };
};

try {
  const sdk = await sdkProduce();
  console.log(`SDK producer, 1 KiB records, batches of ${batch}: ${sdk.recordsPerSec} records/s`);
  const rates = await cliRates();
  console.log(`CLI produce ${lines} lines: ${rates.produceLinesPerSec} lines/s`);
  console.log(`CLI consume ${lines} lines: ${rates.consumeLinesPerSec} lines/s`);
  console.log(`CLI consume --group ${lines} lines: ${rates.groupConsumeLinesPerSec} lines/s`);
  console.log(JSON.stringify({ sdk, cli: rates, seconds, batch, partitions, lines }));
} finally {
  await target.stop();
}
