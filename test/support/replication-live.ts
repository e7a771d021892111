/**
 * Replication through `npm start` with real store processes: RF=3, min.insync.replicas=2, acks=all,
 * a steady produce stream, and store faults by signal to the PIDs in stack.json:
 *
 *   baseline → one follower frozen (SIGSTOP) → two followers frozen → both restored (SIGCONT)
 *   → the leader's store killed (SIGKILL)
 *
 * It reports acked/lost/duplicated records, the time to shrink the ISR, to rejoin and to elect, the
 * produce p99 per phase, and shows a writer holding the old leader epoch fenced on the real table.
 *
 *   npm run replication:live                    # full phases (REPL_PHASE_MS, default 8000)
 * The integration test (test/integration/replication-live.test.ts) runs it with short phases.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAwsClients } from '../../lib/adapters/aws/clients.js';
import { DynamoMetadataStore } from '../../lib/adapters/aws/dynamodb-metadata-store.js';
import { commitBatch } from '../../lib/core/log/commit.js';
import { isSluiceError } from '../../protocol/errors.js';
import type { StackDescription } from '../../local/stack.js';

export interface LiveOptions {
  phaseMs: number;
  lagMs: number;
  log?: (line: string) => void;
}

export interface PhaseReport {
  acked: number;
  errors: Record<string, number>;
  p99Ms: number | null;
}

export interface LiveReport {
  acked: number;
  lost: number;
  duplicates: number;
  shrinkMs: number | null;
  rejoinMs: number | null;
  electMs: number | null;
  leaderEpochs: [number, number];
  oldEpochWriter: string;
  readsWhileRefused: number;
  stackFileRemoved: boolean;
  /** The segment store ran on an emulator of its own, apart from every replica store's. */
  segmentsApart: boolean;
  phases: Record<string, PhaseReport>;
}

interface Partition {
  leader: string;
  leaderEpoch: number;
  replicas: string[];
  isr: string[];
  highWatermark: number;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const p99 = (xs: number[]): number | null => {
  if (xs.length === 0) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
};

const startStack = async (dataDir: string, lagMs: number) => {
  const port = await freePort();
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(port),
    SLUICE_KAFKA_PORT: '0',
    SLUICE_DATA_DIR: dataDir,
    SLUICE_STORE_COUNT: '3',
    SLUICE_REPLICA_LAG_TIME_MAX_MS: String(lagMs),
    SLUICE_REPLICATION_INTERVAL_MS: '200',
    SLUICE_MAINTENANCE_INTERVAL_MS: '0',
  };
  for (const name of [
    'AWS_ENDPOINT_URL',
    'AWS_ENDPOINT_URL_S3',
    'AWS_ENDPOINT_URL_DYNAMODB',
    'SLUICE_TABLE_NAME',
    'SLUICE_BUCKETS',
  ])
    delete env[name];
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const file = join(dataDir, 'stack.json');
  const started = Date.now();
  while (Date.now() - started < 90_000) {
    if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}:\n${output}`);
    const stack = await readFile(file, 'utf8').then(
      (t) => JSON.parse(t) as StackDescription,
      () => undefined,
    );
    if (stack) return { child, stack, file };
    await sleep(250);
  }
  child.kill('SIGKILL');
  throw new Error(`npm start wrote no stack.json within 90 s:\n${output}`);
};

export const runLiveReplication = async (options: LiveOptions): Promise<LiveReport> => {
  const log = options.log ?? (() => {});
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-repl-live-'));
  let child: ChildProcess | undefined;
  const frozen = new Set<number>();
  try {
    const started = await startStack(dataDir, options.lagMs);
    child = started.child;
    const { stack } = started;
    log(`stack at ${stack.url}, stores ${stack.stores.map((s) => `${s.id}:${s.pid}`).join(' ')}`);
    const api = async (
      method: string,
      path: string,
      body?: unknown,
      headers: Record<string, string> = {},
    ) => {
      const r = await fetch(`${stack.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      return { status: r.status, json: (await r.json()) as any };
    };
    const created = await api('POST', '/v1/topics', {
      name: 'live',
      replicationFactor: 3,
      configs: { 'min.insync.replicas': '2' },
    });
    if (created.status !== 201) throw new Error(`create topic: ${JSON.stringify(created.json)}`);
    const partition = async (): Promise<Partition> =>
      (await api('GET', '/v1/topics/live')).json.partitions[0];
    const pidOf = (id: string) => stack.stores.find((s) => s.id === id)!.pid!;
    const signal = (id: string, sig: NodeJS.Signals) => {
      process.kill(pidOf(id), sig);
      if (sig === 'SIGSTOP') frozen.add(pidOf(id));
      if (sig === 'SIGCONT') frozen.delete(pidOf(id));
      log(`${sig} ${id} (pid ${pidOf(id)})`);
    };
    const waitFor = async (what: string, test: (p: Partition) => boolean, limitMs: number) => {
      const from = Date.now();
      while (Date.now() - from < limitMs) {
        if (test(await partition())) return Date.now() - from;
        await sleep(50);
      }
      log(`${what}: not within ${limitMs} ms`);
      return null;
    };

    // The steady stream: one acks=all request at a time, each retried with its Idempotency-Key.
    const acked = new Map<string, number>();
    const phases: Record<string, PhaseReport & { latencies: number[] }> = {};
    let phase = 'baseline';
    let producing = true;
    let n = 0;
    const producer = (async () => {
      while (producing) {
        const value = `v${n++}`;
        for (let attempt = 0; producing && attempt < 50; attempt++) {
          const current = (phases[phase] ??= { acked: 0, errors: {}, p99Ms: null, latencies: [] });
          const t0 = Date.now();
          const r = await api(
            'POST',
            '/v1/topics/live/records',
            { records: [{ value, partition: 0 }], acks: 'all' },
            { 'idempotency-key': value },
          ).catch(() => ({ status: 0, json: { error: { code: 'NETWORK' } } }));
          current.latencies.push(Date.now() - t0);
          const result = r.json.results?.[0];
          if (r.status === 200 && result && 'offset' in result) {
            acked.set(value, result.offset as number);
            current.acked++;
            break;
          }
          const code = (result?.error ?? r.json.error)?.code ?? `HTTP_${r.status}`;
          current.errors[code] = (current.errors[code] ?? 0) + 1;
          await sleep(100);
        }
      }
    })();

    const inPhase = async (name: string, ms: number) => {
      phase = name;
      await sleep(ms);
    };
    await inPhase('baseline', options.phaseMs);
    const first = await partition();
    const [f1, f2] = first.replicas.filter((r) => r !== first.leader) as [string, string];

    phase = 'one follower down';
    signal(f1, 'SIGSTOP');
    const shrinkMs = await waitFor('shrink', (p) => !p.isr.includes(f1), options.lagMs * 4);
    await inPhase('one follower down', options.phaseMs);

    phase = 'two followers down';
    signal(f2, 'SIGSTOP');
    await waitFor('shrink to the leader', (p) => p.isr.length === 1, options.lagMs * 4);
    let readsWhileRefused = 0;
    const refusedUntil = Date.now() + options.phaseMs;
    while (Date.now() < refusedUntil) {
      const r = await api('GET', '/v1/topics/live/partitions/0/records?offset=0&maxBytes=1000000');
      if (r.status === 200 && r.json.records.length > 0) readsWhileRefused++;
      await sleep(200);
    }

    phase = 'restored';
    signal(f1, 'SIGCONT');
    signal(f2, 'SIGCONT');
    const rejoinMs = await waitFor('rejoin', (p) => p.isr.length === 3, options.lagMs * 10);
    await inPhase('restored', options.phaseMs);

    // A writer that read leadership before the election (another Lambda, say) and commits after it.
    const before = await partition();
    const table = new DynamoMetadataStore({
      client: createAwsClients({ endpoints: { dynamodb: stack.table.endpoint } }).dynamodb,
      tableName: stack.table.name,
    });
    const topicId = (await api('GET', '/v1/topics/live')).json.topicId as string;
    phase = 'leader down';
    signal(before.leader, 'SIGKILL');
    const electMs = await waitFor(
      'election',
      (p) => p.leader !== before.leader && p.leaderEpoch === before.leaderEpoch + 1,
      options.lagMs * 10,
    );
    const oldEpochWriter = await commitBatch(table, {
      topicId,
      topic: 'live',
      partition: 0,
      replica: { acks: '1', leader: before.leader, leaderEpoch: before.leaderEpoch, isr: before.isr },
      entry: {
        objectKey: `d/${topicId}/zz/stale`,
        position: 0,
        sizeInBytes: 70,
        offsetCount: 1,
        recordCount: 1,
        maxTimestamp: 0,
        firstTimestamp: 0,
      },
      now: Date.now(),
    }).then(
      (o) => ('baseOffset' in o ? `committed at ${o.baseOffset}` : o.kind),
      (e: unknown) => (isSluiceError(e) ? e.code : String(e)),
    );
    await inPhase('leader down', options.phaseMs);
    producing = false;
    await producer;
    const after = await partition();

    // Everything acknowledged must be readable at its offset, once.
    const seen = new Map<string, number[]>();
    let offset = 0;
    for (;;) {
      const r = await api('GET', `/v1/topics/live/partitions/0/records?offset=${offset}&maxBytes=1000000`);
      if (r.status !== 200) throw new Error(`final read: ${JSON.stringify(r.json)}`);
      for (const rec of r.json.records as { offset: number; value: string }[])
        seen.set(rec.value, [...(seen.get(rec.value) ?? []), rec.offset]);
      if (r.json.nextOffset >= r.json.highWatermark) break;
      offset = r.json.nextOffset;
    }
    let lost = 0;
    for (const [value, at] of acked) if (!(seen.get(value) ?? []).includes(at)) lost++;
    const duplicates = [...seen.values()].filter((at) => at.length > 1).length;

    child.kill('SIGINT');
    await new Promise((r) => child!.once('exit', r));
    const stackFileRemoved = await stat(started.file).then(
      () => false,
      () => true,
    );
    return {
      acked: acked.size,
      lost,
      duplicates,
      shrinkMs,
      rejoinMs,
      electMs,
      leaderEpochs: [before.leaderEpoch, after.leaderEpoch],
      oldEpochWriter,
      readsWhileRefused,
      stackFileRemoved,
      segmentsApart:
        started.stack.segments.pid !== null &&
        started.stack.stores.every(
          (s) => s.pid !== started.stack.segments.pid && s.endpoint !== started.stack.segments.endpoint,
        ),
      phases: Object.fromEntries(
        Object.entries(phases).map(([k, v]) => [
          k,
          { acked: v.acked, errors: v.errors, p99Ms: p99(v.latencies) },
        ]),
      ),
    };
  } finally {
    for (const pid of frozen) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        /* gone */
      }
    }
    if (child?.pid !== undefined && child.exitCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await rm(dataDir, { recursive: true, force: true });
  }
};

if (import.meta.url === `file://${process.argv[1]}`) {
  const phaseMs = Number(process.env['REPL_PHASE_MS'] ?? 8000);
  const lagMs = Number(process.env['REPL_LAG_MS'] ?? 2000);
  const report = await runLiveReplication({ phaseMs, lagMs, log: (l) => console.error(`replication: ${l}`) });
  console.log(JSON.stringify(report, null, 2));
  process.exit(report.lost === 0 ? 0 : 1);
}
