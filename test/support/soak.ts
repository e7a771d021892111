/**
 * The soak test: `npm run soak -- --seconds N [--seed S] [--rate R]`. Starts the local stack (DynamoDB
 * Local, the S3 emulator, the real Lambda handlers) with faults injected into the stores inside the
 * handlers (SLUICE_FAULTS), runs idempotent, Idempotency-Key and plain producers, consumers and a
 * consumer group over real HTTP for N seconds, then turns faults off, drains every partition and runs
 * the history checker. The topic is replicated over `--stores` store processes (default 3, RF=3,
 * min.insync.replicas=2), and store faults freeze one store's emulator (SIGSTOP) for a few seconds at a
 * time, now and then two, leader or follower, so ISR shrinks, rejoins and elections run under load. Progress goes to stderr; the last stdout line is one JSON object with the
 * counts. Exits non-zero on any violation.
 */
import { parseArgs } from 'node:util';
import { seededRandom, setFaultsEnabled, totalFaultCounts } from '../../lib/adapters/fault/index.js';
import { startLocalStack } from '../../local/stack.js';
import { VIOLATIONS, check } from './checker.js';
import { httpClient } from './client.js';
import { runGroup } from './group-workload.js';
import { HistoryRecorder } from './history.js';
import type { ProducerKind, WorkloadContext } from './workload.js';
import { finalRead, runConsumer, runProducer } from './workload.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    seed: { type: 'string', default: String(Date.now() % 100_000) },
    rate: { type: 'string', default: '0.05' },
    partitions: { type: 'string', default: '3' },
    stores: { type: 'string', default: '3' },
    'store-faults': { type: 'boolean', default: true },
    'no-store-faults': { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
  },
});
const stores = Number(values.stores);
const storeFaults = values['store-faults'] && !values['no-store-faults'] && stores > 1;
/** replica.lag.time.max.ms of the soak's stack: a frozen store leaves the ISR after this long. */
const LAG_MS = 2_000;
const seconds = Number(values.seconds);
const seed = Number(values.seed);
const rate = Number(values.rate);
const partitions = Number(values.partitions);
/** The app's default group session timeout (the handlers run with it). */
const SESSION_TIMEOUT_MS = 45_000;

const progress = (line: string) => process.stderr.write(`soak: ${line}\n`);

// The handlers log every 5xx (there are many: faults are injected) and the maintenance function logs
// its report to stdout. Keep stdout for the summary line: count those logs, show them with --verbose.
let handlerLogs = 0;
const quiet =
  (write: (line: string) => void) =>
  (...args: unknown[]): void => {
    handlerLogs++;
    if (values.verbose) write(args.map(String).join(' '));
  };
console.log = quiet((line) => process.stderr.write(`${line}\n`));
console.error = quiet((line) => process.stderr.write(`${line}\n`));

const main = async (): Promise<number> => {
  // Faults go into the stores the handlers build (local/runtime.ts layers them per SLUICE_FAULTS); the
  // module switch below is shared with them because the local stack runs in this process.
  const faults = JSON.stringify({ seed, rate, maxDelayMs: 20 });
  process.env['SLUICE_FAULTS'] = faults;
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
  setFaultsEnabled(false);
  progress(`starting the local stack (faults ${faults}, ${seconds} s)…`);
  const stack = await startLocalStack({
    port: 0,
    maintenanceIntervalMs: 1_000,
    storeCount: stores,
    replicationIntervalMs: 250,
    env: { ...process.env, SLUICE_FAULTS: faults, SLUICE_REPLICA_LAG_TIME_MAX_MS: String(LAG_MS) },
  });
  const frozen = new Set<number>();
  const thaw = () => {
    for (const pid of frozen) process.kill(pid, 'SIGCONT');
    frozen.clear();
  };
  try {
    const client = httpClient(stack.url, 10_000);
    const topic = `soak-${seed}`;
    await client.createTopic(topic, partitions, {
      replicationFactor: stores,
      configs: { 'min.insync.replicas': String(Math.min(2, stores)) },
    });
    const recorder = new HistoryRecorder();
    const random = seededRandom(seed);
    const deadline = Date.now() + seconds * 1_000;
    const ctx: WorkloadContext = {
      client,
      recorder,
      random,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      topic,
      partitions,
      stopped: () => Date.now() >= deadline,
      now: () => Date.now(),
      unexpected: [],
    };
    setFaultsEnabled(true);
    progress(`stack at ${stack.url}; topic ${topic} with ${partitions} partitions; running`);

    const kinds: [ProducerKind, number][] = [
      ['idempotent', 2],
      ['keyed', 2],
      ['plain', 2],
    ];
    const work = [
      ...kinds.flatMap(([kind, count]) =>
        Array.from({ length: count }, (_, i) =>
          runProducer(ctx, { kind, name: `${kind}-${i}`, maxRecordsPerWrite: 5, thinkMs: 50 }),
        ),
      ),
      ...Array.from({ length: 2 }, (_, i) =>
        runConsumer(ctx, { name: `consumer-${i}`, until: ctx.stopped, idleMs: 300, maxWaitMs: 500 }),
      ),
      ...(storeFaults ? [freezeStores(ctx, stack.stores, frozen, random)] : []),
      runGroup(ctx, {
        group: `soak-${seed}`,
        members: 3,
        heartbeatMs: 1_000,
        until: ctx.stopped,
        crashChance: 0.01,
        random,
      }),
    ];
    const ticker = setInterval(() => {
      const ops = recorder.ops;
      const acked = ops.filter((o) => o.f === 'send' && o.outcome === 'ok').length;
      const f = totalFaultCounts();
      progress(
        `${Math.max(0, Math.round((deadline - Date.now()) / 1000))} s left: ${ops.length} ops, ${acked} acked sends, ` +
          `faults ${f.failBefore}/${f.failAfter}/${f.dropResponse}/${f.delay} (before/after/dropped/delay)`,
      );
    }, 5_000);
    await Promise.all(work);
    clearInterval(ticker);
    thaw();

    setFaultsEnabled(false);
    const faultCounts = totalFaultCounts();
    progress('workload done; faults off; indexing and draining every partition');
    // Let every thawed store catch up and rejoin before the drain reads the log.
    await new Promise((resolve) => setTimeout(resolve, 2 * LAG_MS));
    await stack.runMaintenance();
    const drained = await finalRead(ctx);
    const report = check(recorder.history(), { sessionTimeoutMs: SESSION_TIMEOUT_MS });

    const rows: [string, number][] = [
      ['acknowledged values', report.counts.acked],
      ['sends (attempts)', report.counts.sends],
      ['ambiguous sends', report.counts.ambiguous],
      ['polls', report.counts.polls],
      ['heartbeats', report.counts.heartbeats],
      ['offset commits', report.counts.commits],
      ['records drained', drained],
      ['allowed duplicates', report.counts.allowedDuplicates],
      ...VIOLATIONS.map((k): [string, number] => [k, report.counts[k]]),
      ['unexpected errors', ctx.unexpected.length],
      ['faults: fail before', faultCounts.failBefore],
      ['faults: fail after', faultCounts.failAfter],
      ['faults: dropped response', faultCounts.dropResponse],
      ['faults: delay', faultCounts.delay],
      ['store freezes', storeFreezes],
    ];
    process.stderr.write(
      `\n${rows.map(([k, v]) => `  ${k.padEnd(26)} ${String(v).padStart(8)}`).join('\n')}\n\n`,
    );
    for (const k of VIOLATIONS) {
      for (const example of report.examples[k] ?? []) progress(`${k}: ${JSON.stringify(example)}`);
    }
    for (const u of ctx.unexpected.slice(0, 10)) progress(`unexpected: ${u}`);

    const faultsInjected =
      faultCounts.failBefore + faultCounts.failAfter + faultCounts.dropResponse + faultCounts.delay;
    const summary = {
      seconds,
      seed,
      rate,
      acked: report.counts.acked,
      lost: report.counts.lost,
      duplicates: report.counts.duplicates,
      phantoms: report.counts.phantoms,
      faultsInjected,
      ...Object.fromEntries(VIOLATIONS.map((k) => [k, report.counts[k]])),
      allowedDuplicates: report.counts.allowedDuplicates,
      sends: report.counts.sends,
      ambiguous: report.counts.ambiguous,
      polls: report.counts.polls,
      heartbeats: report.counts.heartbeats,
      commits: report.counts.commits,
      drained,
      unexpected: ctx.unexpected.length,
      handlerLogs,
      faults: faultCounts,
      stores,
      storeFreezes,
      valid: report.valid && ctx.unexpected.length === 0,
    };
    // Stop first, so nothing the stack logs can come after the summary line.
    await stack.stop();
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return summary.valid ? 0 : 1;
  } catch (error) {
    thaw();
    await stack.stop();
    throw error;
  }
};

let storeFreezes = 0;

/** Store faults: one store (now and then two) frozen with SIGSTOP for 0.5-2 × the lag limit. */
const freezeStores = async (
  ctx: WorkloadContext,
  stores: readonly { id: string; pid: number | null }[],
  frozen: Set<number>,
  random: () => number,
): Promise<void> => {
  const pids = stores.flatMap((s) => (s.pid === null ? [] : [s.pid]));
  while (!ctx.stopped()) {
    await ctx.sleep(LAG_MS * (1 + random()));
    const count = random() < 0.2 ? 2 : 1;
    const victims = [...pids].sort(() => random() - 0.5).slice(0, Math.min(count, pids.length - 1));
    for (const pid of victims) {
      process.kill(pid, 'SIGSTOP');
      frozen.add(pid);
      storeFreezes++;
    }
    await ctx.sleep(LAG_MS * (0.5 + 1.5 * random()));
    for (const pid of victims) {
      process.kill(pid, 'SIGCONT');
      frozen.delete(pid);
    }
  }
};

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    progress(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(2);
  },
);
