/**
 * `npm run bench:gateway`: the Kafka gateway against the HTTP API on this machine, in one run.
 * Sluice runs as `npm start` in a child process; the gateway runs in this process (so its CPU is this
 * process's), in front of that Sluice over HTTP, exactly as `sluice gateway` does.
 *
 * 1. Throughput: kcat produces N records to one partition through the gateway, and the SDK's binary
 *    producer (the HTTP API) produces the same records to another; kcat consumes through the gateway,
 *    the SDK's consumer reads over HTTP. Records/s each way, and the gateway's CPU per MiB moved.
 * 2. Produce latency under the AWS latency model (a second Sluice with SLUICE_LATENCY_MODEL): one
 *    record per request, one request at a time, acks=all, through the gateway and straight over HTTP;
 *    p50 and p99. Modelled latencies, not AWS measurements.
 *
 * 3. The same with authentication on (SLUICE_AUTH=iam): SASL/OAUTHBEARER through the gateway (each
 *    produce forwarded on behalf of the client) against SigV4-signed HTTP.
 *
 * Flags: --records N (100000), --size BYTES (100), --latency-requests N (300), --model standard|express (express).
 */
import type { ChildProcess } from 'node:child_process';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KafkaGateway } from '../gateway/server.js';
import { presignedWhoami } from '../gateway/sasl.js';
import { SaslAuthenticate, SaslHandshake } from '../protocol/kafka/messages/sasl.js';
import { kafkaToken } from '../sdk/kafka-token.js';
import { sigV4Fetch } from '../sdk/sigv4.js';
import { encodeRecordBatch } from '../protocol/record-batch/index.js';
import { Produce } from '../protocol/kafka/messages/produce.js';
import type { Message } from '../protocol/kafka/codec.js';
import { SluiceClient } from '../sdk/client.js';
import { nodeHttpFetch } from '../sdk/node-http.js';
import { readPartition } from '../sdk/partition-reader.js';
import { KafkaWire } from '../test/support/kafka-wire.js';
import { flags, modelFlag, numberFlag } from './flags.js';

const args = flags(process.argv.slice(2));
const RECORDS = numberFlag(args, 'records', 100_000);
const SIZE = numberFlag(args, 'size', 100);
const LATENCY_REQUESTS = numberFlag(args, 'latency-requests', 300);
const MODEL = modelFlag(args, 'express');

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

async function startSluice(env: Record<string, string>): Promise<{ url: string; stop(): Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-gateway-'));
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
    env: {
      ...process.env,
      PORT: String(port),
      SLUICE_KAFKA_PORT: '0',
      SLUICE_DATA_DIR: dataDir,
      SLUICE_STORE_COUNT: '1',
      SLUICE_MAINTENANCE_INTERVAL_MS: '0',
      ...env,
    },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 180_000;
  while (
    !(await fetch(`${url}/v1/health`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('npm start did not come up');
    await new Promise((r) => setTimeout(r, 500));
  }
  return {
    url,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGINT');
        await exited;
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

const kcat = (argv: string[]): Promise<string> =>
  new Promise((resolve, reject) =>
    execFile('kcat', argv, { maxBuffer: 1 << 30 }, (error, stdout) =>
      error ? reject(error) : resolve(stdout),
    ),
  );

/** Wall time and this process's CPU time around `task`. */
async function measured<T>(
  task: () => Promise<T>,
): Promise<{ result: T; seconds: number; cpuSeconds: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const result = await task();
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  return { result, seconds, cpuSeconds: (used.user + used.system) / 1e6 };
}

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const value = (i: number): string => `${String(i).padStart(10, '0')}:${'v'.repeat(Math.max(0, SIZE - 11))}`;

async function throughput(): Promise<Record<string, number>> {
  const sluice = await startSluice({});
  const gateway = new KafkaGateway({ sluice: { url: sluice.url }, port: 0 });
  await gateway.listen();
  try {
    const client = new SluiceClient({ url: sluice.url, fetch: nodeHttpFetch() });
    const admin = client.admin();
    await admin.createTopic({ name: 'bench-kafka' });
    await admin.createTopic({ name: 'bench-http' });
    const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-records-'));
    const file = join(dir, 'records.txt');
    await writeFile(file, Array.from({ length: RECORDS }, (_, i) => value(i)).join('\n') + '\n');
    const mib = (RECORDS * SIZE) / (1024 * 1024);

    const kafkaProduce = await measured(() =>
      kcat([
        '-b',
        gateway.bootstrap,
        '-P',
        '-t',
        'bench-kafka',
        '-p',
        '0',
        '-z',
        'none',
        '-X',
        'linger.ms=20',
        '-X',
        'batch.size=1000000',
        '-l',
        file,
      ]),
    );
    const producer = client.producer();
    const httpProduce = await measured(async () => {
      const sends: Promise<unknown>[] = [];
      for (let i = 0; i < RECORDS; i += 5000) {
        const messages = Array.from({ length: Math.min(5000, RECORDS - i) }, (_, k) => ({
          value: value(i + k),
        }));
        sends.push(producer.sendBatch('bench-http', 0, messages));
      }
      await Promise.all(sends);
    });
    const kafkaConsume = await measured(() =>
      kcat([
        '-b',
        gateway.bootstrap,
        '-C',
        '-t',
        'bench-kafka',
        '-p',
        '0',
        '-o',
        'beginning',
        '-c',
        String(RECORDS),
        '-q',
        '-f',
        '%s\n',
      ]),
    );
    if (kafkaConsume.result.split('\n').length - 1 !== RECORDS)
      throw new Error('kcat did not read every record');
    const consumer = client.consumer();
    let read = 0;
    const httpConsume = await measured(() =>
      readPartition(consumer, {
        topic: 'bench-http',
        partition: 0,
        offset: 0,
        follow: false,
        signal: new AbortController().signal,
        deliver: async (batch) => {
          read += batch.records.length;
          return read < RECORDS;
        },
      }),
    );
    if (read < RECORDS) throw new Error(`the HTTP consumer read ${read} of ${RECORDS}`);
    await rm(dir, { recursive: true, force: true });
    return {
      'kafka produce records/s (kcat → gateway)': Math.round(RECORDS / kafkaProduce.seconds),
      'http produce records/s (SDK binary)': Math.round(RECORDS / httpProduce.seconds),
      'kafka consume records/s (gateway → kcat)': Math.round(RECORDS / kafkaConsume.seconds),
      'http consume records/s (SDK binary fetch)': Math.round(RECORDS / httpConsume.seconds),
      'gateway CPU ms per MiB produced': Math.round((kafkaProduce.cpuSeconds * 1000) / mib),
      'gateway CPU ms per MiB consumed': Math.round((kafkaConsume.cpuSeconds * 1000) / mib),
    };
  } finally {
    await gateway.close();
    await sluice.stop();
  }
}

async function latency(): Promise<Record<string, number>> {
  const sluice = await startSluice({ SLUICE_LATENCY_MODEL: MODEL });
  const gateway = new KafkaGateway({ sluice: { url: sluice.url }, port: 0 });
  await gateway.listen();
  try {
    const client = new SluiceClient({ url: sluice.url, fetch: nodeHttpFetch() });
    await client.admin().createTopic({ name: 'latency' });
    const wire = await KafkaWire.open(gateway.listening.port);
    const batch = () =>
      encodeRecordBatch([
        { key: null, value: new TextEncoder().encode(value(0)), headers: [], timestamp: Date.now() },
      ]);
    const kafka: number[] = [];
    const http: number[] = [];
    for (let i = 0; i < LATENCY_REQUESTS; i++) {
      let start = performance.now();
      const answer = await wire.request(Produce, 7, {
        transactionalId: null,
        acks: -1,
        timeoutMs: 30_000,
        topicData: [{ name: 'latency', partitionData: [{ index: 0, records: batch() }] }],
      });
      kafka.push(performance.now() - start);
      const p = ((answer.body['responses'] as Message[])[0]!['partitionResponses'] as Message[])[0]!;
      if (p['errorCode'] !== 0) throw new Error(`produce failed with ${String(p['errorCode'])}`);
      start = performance.now();
      const r = await fetch(`${sluice.url}/v1/topics/latency/partitions/0/batches`, {
        method: 'POST',
        headers: { 'content-type': 'application/vnd.kafka.record-batch' },
        body: batch(),
      });
      await r.arrayBuffer();
      http.push(performance.now() - start);
    }
    wire.end();
    kafka.sort((a, b) => a - b);
    http.sort((a, b) => a - b);
    return {
      [`kafka produce p50 ms (${MODEL} model)`]: Number(percentile(kafka, 50).toFixed(1)),
      [`kafka produce p99 ms (${MODEL} model)`]: Number(percentile(kafka, 99).toFixed(1)),
      [`http produce p50 ms (${MODEL} model)`]: Number(percentile(http, 50).toFixed(1)),
      [`http produce p99 ms (${MODEL} model)`]: Number(percentile(http, 99).toFixed(1)),
    };
  } finally {
    await gateway.close();
    await sluice.stop();
  }
}

/**
 * 3. The same produce latency with authentication on (SLUICE_AUTH=iam): the client authenticates with
 *    SASL/OAUTHBEARER (a presigned whoami), and the gateway forwards each produce signed with its own
 *    key and naming the client in Sluice-On-Behalf-Of, which Sluice checks (the delegation, then the
 *    client's own route); over HTTP the client signs each request with SigV4 itself.
 */
async function authenticatedLatency(): Promise<Record<string, number>> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-auth-'));
  const region = 'us-east-1';
  const principal = (name: string) => `arn:aws:iam::111122223333:user/${name}`;
  const key = (name: string) => ({
    accessKeyId: `AKIDBENCH${name.toUpperCase()}`,
    secretAccessKey: `${name}-secret`,
  });
  const everything = {
    Version: '2012-10-17',
    Statement: [{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: 'arn:aws:execute-api:*' }],
  };
  await writeFile(
    join(dir, 'keys.json'),
    JSON.stringify({
      credentials: ['client', 'gateway'].map((n) => ({ ...key(n), principalArn: principal(n) })),
    }),
  );
  await writeFile(
    join(dir, 'policy.json'),
    JSON.stringify({ principals: { [principal('client')]: everything, [principal('gateway')]: everything } }),
  );
  const sluice = await startSluice({
    SLUICE_LATENCY_MODEL: MODEL,
    SLUICE_AUTH: 'iam',
    SLUICE_AUTH_KEYS: join(dir, 'keys.json'),
    SLUICE_AUTH_POLICY: join(dir, 'policy.json'),
    AWS_REGION: region,
  });
  const base = nodeHttpFetch({ maxSockets: 64 });
  const gateway = new KafkaGateway({
    sluice: { url: sluice.url, fetch: sigV4Fetch({ region, credentials: key('gateway'), fetch: base }) },
    sasl: { required: true, authenticator: presignedWhoami({ url: sluice.url, fetch: base }) },
    port: 0,
  });
  await gateway.listen();
  try {
    const signed = sigV4Fetch({ region, credentials: key('client'), fetch: base });
    await new SluiceClient({ url: sluice.url, fetch: signed }).admin().createTopic({ name: 'latency' });
    const wire = await KafkaWire.open(gateway.listening.port);
    let start = performance.now();
    await wire.request(SaslHandshake, 1, { mechanism: 'OAUTHBEARER' });
    const token = await kafkaToken({ url: sluice.url, region, credentials: key('client') });
    const authenticated = await wire.request(SaslAuthenticate, 2, {
      authBytes: Buffer.from(`n,,\u0001auth=Bearer ${token.value}\u0001\u0001`),
    });
    const authMs = performance.now() - start;
    if (authenticated.body['errorCode'] !== 0)
      throw new Error(`SASL failed: ${String(authenticated.body['errorMessage'])}`);
    const batch = () =>
      encodeRecordBatch([
        { key: null, value: new TextEncoder().encode(value(0)), headers: [], timestamp: Date.now() },
      ]);
    const kafka: number[] = [];
    const http: number[] = [];
    for (let i = 0; i < LATENCY_REQUESTS; i++) {
      start = performance.now();
      const answer = await wire.request(Produce, 7, {
        transactionalId: null,
        acks: -1,
        timeoutMs: 30_000,
        topicData: [{ name: 'latency', partitionData: [{ index: 0, records: batch() }] }],
      });
      kafka.push(performance.now() - start);
      const p = ((answer.body['responses'] as Message[])[0]!['partitionResponses'] as Message[])[0]!;
      if (p['errorCode'] !== 0) throw new Error(`produce failed with ${String(p['errorCode'])}`);
      start = performance.now();
      const r = await signed(`${sluice.url}/v1/topics/latency/partitions/0/batches`, {
        method: 'POST',
        headers: { 'content-type': 'application/vnd.kafka.record-batch' },
        body: batch(),
      });
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`signed produce answered ${r.status}`);
      http.push(performance.now() - start);
    }
    wire.end();
    kafka.sort((a, b) => a - b);
    http.sort((a, b) => a - b);
    return {
      [`SASL handshake + authenticate ms`]: Number(authMs.toFixed(1)),
      [`kafka SASL produce p50 ms (${MODEL} model)`]: Number(percentile(kafka, 50).toFixed(1)),
      [`kafka SASL produce p99 ms (${MODEL} model)`]: Number(percentile(kafka, 99).toFixed(1)),
      [`http SigV4 produce p50 ms (${MODEL} model)`]: Number(percentile(http, 50).toFixed(1)),
      [`http SigV4 produce p99 ms (${MODEL} model)`]: Number(percentile(http, 99).toFixed(1)),
    };
  } finally {
    await gateway.close();
    await sluice.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

console.log(
  `bench:gateway: ${RECORDS} records of ${SIZE} bytes; latency: ${LATENCY_REQUESTS} requests under the ${MODEL} model`,
);
const figures = { ...(await throughput()), ...(await latency()), ...(await authenticatedLatency()) };
for (const [name, v] of Object.entries(figures)) console.log(`${name.padEnd(48)} ${v}`);
const out = join('bench', 'results', `${new Date().toISOString().replace(/[:.]/g, '-')}-gateway.json`);
await writeFile(out, `${JSON.stringify({ records: RECORDS, size: SIZE, model: MODEL, figures }, null, 2)}\n`);
console.log(`bench:gateway: wrote ${out}`);
