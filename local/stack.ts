/**
 * The local stack: emulators (unless AWS_ENDPOINT_URL* point elsewhere, e.g. LocalStack), the table and
 * buckets, the Lambda handlers configured exactly as the CDK app configures them, the local API
 * Gateway, and the maintenance function on a timer.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { createAwsClients } from '../lib/adapters/aws/clients.js';
import { ensureBucket, ensureTable } from '../lib/adapters/aws/schema.js';
import { ENV, storeId } from '../lib/config/environment.js';
import { parseFaultSpec, withFaults } from '../lib/adapters/fault/index.js';
import type { LatencyModelName } from '../lib/adapters/latency/index.js';
import { latencyModels, parseLatencyModel, withLatency } from '../lib/adapters/latency/index.js';
import type * as Runtime from './runtime.js';
import type { StorageLayer } from './runtime.js';
import { resolveEndpoints, startEmulators } from './emulators.js';
import type { Handlers } from './gateway.js';
import { createGateway } from './gateway.js';
import { WAIT_SOCKET_PATH, attachWaitSocket } from './wait-gateway.js';
import { startConnectTimer } from './connect-timer.js';
import { ConnectStateStore } from '../connect/state-store.js';
import { inProcessFetch } from '../functions/in-process-fetch.js';
import { anyDue } from '../connect/worker/wakeup.js';
import { SluiceClient } from '../sdk/index.js';
import type { GatewayAuth } from './auth/gateway-auth.js';
import { loadGatewayAuth, localKafkaGatewayIdentity } from './auth/gateway-auth.js';
import { presignedWhoami } from '../gateway/sasl.js';
import { nodeHttpFetch } from '../sdk/node-http.js';
import { sigV4Fetch } from '../sdk/sigv4.js';
import { KafkaGateway } from '../gateway/server.js';
import { LocalTelemetry } from './telemetry-sink.js';

export interface LocalStackOptions {
  /** Port to serve on; 0 picks a free one. */
  port?: number;
  /** Persist emulator data and the cluster id here; undefined keeps everything temporary. */
  dataDir?: string;
  /** Environment to read AWS_ENDPOINT_URL* and SLUICE_* from (default process.env). */
  env?: Record<string, string | undefined>;
  tableName?: string;
  /**
   * Number of replica stores (default 1). With the emulators each store is its own S3 emulator
   * process on its own port, so one can be stopped, frozen or killed on its own.
   */
  storeCount?: number;
  maintenanceIntervalMs?: number;
  /** How often the replicator runs over every replicated partition (default 0 = never; npm start: 500 ms). */
  replicationIntervalMs?: number;
  /** Write the stack's description here (gateway URL, stores with endpoint and PID); removed on stop. */
  stackFile?: string;
  /**
   * Pause between invocations of the Connect runtime (each a child process running the
   * connect-worker function once); 0 (the default) runs none.
   */
  connectIntervalMs?: number;
  /**
   * Wait as AWS would on every storage call (lib/adapters/latency); default SLUICE_LATENCY_MODEL, else
   * `none`. Latencies measured under a model are modelled, not AWS measurements.
   */
  latencyModel?: LatencyModelName;
  /** Serve Kafka's protocol on this port too (gateway/; 0 picks a free one); undefined serves none. */
  kafkaPort?: number;
  log?: (line: string) => void;
  /**
   * Where the functions' log records go, one readable line each (functions/telemetry.ts writes them
   * as JSON for CloudWatch on Lambda); default: `log`.
   */
  telemetryLog?: (line: string) => void;
}

/** The bucket `npm start` makes for Connect's S3 sink on its S3 emulator. */
export const LOCAL_CONNECT_BUCKET = 'sluice-archive';

/** What `stack.json` holds: where the gateway listens, and each store's endpoint and emulator PID. */
export interface StackDescription {
  url: string;
  stores: { id: string; bucket: string; endpoint: string; pid: number | null }[];
  /** The segment store: not a replica store, on an emulator of its own. */
  segments: { bucket: string; endpoint: string; pid: number | null };
  /** The metadata table and where it is served. */
  table: { name: string; endpoint: string };
  /** The Kafka gateway, when it runs: the address for clients' bootstrap.servers. */
  kafka?: { bootstrap: string };
}

export interface LocalStack {
  url: string;
  endpoints: { s3: string; dynamodb: string };
  stores: StackDescription['stores'];
  segments: StackDescription['segments'];
  tableName: string;
  buckets: string[];
  /** The segment store's bucket. */
  segmentBucket: string;
  latencyModel: LatencyModelName;
  /** SLUICE_AUTH: whether requests must be signed and allowed by the policy file. */
  auth: { mode: 'open' } | { mode: 'iam'; credentials: string; policy: string; region: string };
  /** Runs the maintenance function once, now. */
  runMaintenance(): Promise<unknown>;
  /** The pid of the Connect invocation running now (when connectIntervalMs > 0). */
  connectWorkerPid(): number | undefined;
  /** The Kafka gateway in front of this stack, when kafkaPort was given. */
  kafka: KafkaGateway | undefined;
  /** The EMF documents the functions emitted (also at GET /_local/metrics). */
  telemetry: LocalTelemetry;
  stop(): Promise<void>;
}

export const startLocalStack = async (options: LocalStackOptions = {}): Promise<LocalStack> => {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => {});
  // Read the auth files before starting anything: a bad file must not leave an open gateway behind.
  const authFiles = localAuthFiles(env, options.dataDir);
  // Under SLUICE_AUTH=iam the Kafka gateway signs as a principal of its own, allowed to act for the
  // clients it authenticates (SASL/OAUTHBEARER); Sluice authorizes each of their requests as them.
  const kafkaIdentity =
    authFiles && options.kafkaPort !== undefined ? localKafkaGatewayIdentity(authFiles.region) : undefined;
  const gatewayAuth: GatewayAuth | undefined = authFiles
    ? await loadGatewayAuth(authFiles, kafkaIdentity)
    : undefined;
  const explicit = resolveEndpoints(env);
  const emulators =
    explicit?.s3 !== undefined && explicit.dynamodb !== undefined
      ? undefined
      : await startEmulators({
          ...(options.dataDir ? { dataDir: options.dataDir } : {}),
          s3Count: options.storeCount ?? 1,
          segmentStore: true,
          log,
        });
  const endpoints = {
    s3: explicit?.s3 ?? emulators!.s3Endpoint,
    dynamodb: explicit?.dynamodb ?? emulators!.dynamodbEndpoint,
  };
  try {
    const tableName = options.tableName ?? env[ENV.tableName] ?? 'sluice';
    const storeCount = options.storeCount ?? 1;
    const buckets =
      env[ENV.buckets]?.split(',') ?? Array.from({ length: storeCount }, (_, i) => `sluice-store-${i}`);
    // The segment store is its own bucket, as on AWS (a separate S3 Standard bucket).
    const segmentBucket = env[ENV.segmentBucket] ?? 'sluice-segments';
    const clusterId = env[ENV.clusterId] ?? (await persistentClusterId(options.dataDir));

    // With the emulators each bucket lives in its own S3 process; otherwise all share one endpoint.
    const storeEndpoints = buckets.map((_, i) =>
      explicit?.s3 !== undefined ? endpoints.s3 : (emulators!.s3[i]?.endpoint ?? endpoints.s3),
    );
    // The segment store has an emulator of its own (a separate bucket on AWS): stopping a replica
    // store's emulator leaves it up. With explicit endpoints it shares them, as on AWS.
    const segmentEndpoint =
      explicit?.s3 !== undefined ? endpoints.s3 : (emulators!.segments?.endpoint ?? endpoints.s3);
    const clients = createAwsClients({ endpoints });
    await ensureTable(clients.dynamodb, tableName);
    await Promise.all(
      buckets.map(async (bucket, i) => {
        const store = createAwsClients({ endpoints: { s3: storeEndpoints[i]! } }).s3;
        await ensureBucket(store, bucket);
        store.destroy();
      }),
    );
    const segments = createAwsClients({ endpoints: { s3: segmentEndpoint } }).s3;
    await ensureBucket(segments, segmentBucket);
    // A bucket for Connect's S3 sink (the README's example), where the sink's tasks look by default
    // (AWS_ENDPOINT_URL_S3 below); on AWS a sink names a bucket of the user's.
    await ensureBucket(clients.s3, LOCAL_CONNECT_BUCKET);
    segments.destroy();
    clients.s3.destroy();
    clients.dynamodb.destroy();

    // The functions read their configuration from the environment, as in Lambda. Stop puts back what
    // was there, so a later stack in the same process (a benchmark's next stage) starts its own
    // emulators instead of finding this one's endpoints.
    const functionEnv: Record<string, string> = {
      AWS_ENDPOINT_URL_S3: endpoints.s3,
      AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
      [ENV.tableName]: tableName,
      [ENV.buckets]: buckets.join(','),
      [ENV.segmentBucket]: segmentBucket,
      [ENV.clusterId]: clusterId,
      [ENV.storeEndpoints]: storeEndpoints.join(','),
      [ENV.segmentEndpoint]: segmentEndpoint,
      ...(env[ENV.maxRequestBytes] ? { [ENV.maxRequestBytes]: env[ENV.maxRequestBytes] } : {}),
      ...(env[ENV.replicaLagTimeMaxMs] ? { [ENV.replicaLagTimeMaxMs]: env[ENV.replicaLagTimeMaxMs] } : {}),
    };
    const previousEnv = Object.fromEntries(
      [...Object.keys(functionEnv), ENV.waitUrl].map((k) => [k, process.env[k]]),
    );
    Object.assign(process.env, functionEnv);
    const runtime = await import('./runtime.js');
    const latencyModel = options.latencyModel ?? parseLatencyModel(env['SLUICE_LATENCY_MODEL']);
    runtime.setAuthorizer(gatewayAuth?.authorizer);
    runtime.setStorageLayer(storageLayer(latencyModel, env['SLUICE_FAULTS']));
    const telemetry = new LocalTelemetry(options.telemetryLog ?? log);
    runtime.setTelemetrySink(telemetry);
    // One in-process Sluice serves every function's routes (local/runtime.ts); each deployed function
    // builds only its own (functions/<job>.ts, test/unit/functions/function-roots.test.ts).
    const handlers: Handlers = {
      admin: runtime.httpHandler('admin'),
      produce: runtime.httpHandler('produce'),
      fetch: runtime.httpHandler('fetch'),
      groups: runtime.httpHandler('groups'),
      connect: runtime.httpHandler('connect'),
    };
    const maintenance = runtime.maintenanceHandler;

    const server = createGateway(handlers, log, gatewayAuth, telemetry);
    server.keepAliveTimeout = 65_000;
    // The WebSocket API beside the HTTP API, on the same port (ws://…/v1/wait).
    const waitSocket = attachWaitSocket(server, {
      handler: runtime.waitSocketHandler,
      connections: runtime.localConnections,
      ...(gatewayAuth ? { auth: gatewayAuth } : {}),
      log,
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 8787, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    // Where clients find the wait socket (GET /v1/cluster's waitUrl), as the deployed admin function's
    // SLUICE_WAIT_URL names the WebSocket API's stage.
    process.env[ENV.waitUrl] = `ws://127.0.0.1:${port}${WAIT_SOCKET_PATH}`;
    runtime.resetSluice();

    let running: Promise<unknown> | undefined;
    const runMaintenance = () => {
      running ??= maintenance().finally(() => (running = undefined));
      return running;
    };
    const interval = options.maintenanceIntervalMs ?? 10_000;
    const timer =
      interval > 0
        ? setInterval(
            () => void runMaintenance().catch((e: unknown) => log(`maintenance failed: ${String(e)}`)),
            interval,
          )
        : undefined;
    timer?.unref();
    const replicator = startReplicator(runtime, options.replicationIntervalMs ?? 0, log);

    const url = `http://127.0.0.1:${port}`;
    const stores = buckets.map((bucket, i) => ({
      id: storeId(i),
      bucket,
      endpoint: storeEndpoints[i]!,
      pid: emulators?.s3[i]?.pid ?? null,
    }));
    const segmentStore = {
      bucket: segmentBucket,
      endpoint: segmentEndpoint,
      pid: emulators?.segments?.pid ?? null,
    };
    // The Kafka gateway is a client of the HTTP API like any other (gateway/sluice.ts).
    const kafka =
      options.kafkaPort === undefined
        ? undefined
        : new KafkaGateway({
            sluice: {
              url,
              ...(kafkaIdentity && authFiles
                ? {
                    fetch: sigV4Fetch({
                      region: authFiles.region,
                      credentials: kafkaIdentity.credential,
                      fetch: nodeHttpFetch({ maxSockets: 256 }),
                    }),
                  }
                : {}),
            },
            ...(authFiles
              ? {
                  sasl: {
                    required: true,
                    authenticator: presignedWhoami({ url, fetch: nodeHttpFetch({ maxSockets: 16 }) }),
                  },
                }
              : {}),
            port: options.kafkaPort,
            host: '127.0.0.1',
            log,
          });
    await kafka?.listen();
    if (options.stackFile) {
      await mkdir(dirname(options.stackFile), { recursive: true });
      await writeFile(
        options.stackFile,
        `${JSON.stringify({ url, stores, segments: segmentStore, table: { name: tableName, endpoint: endpoints.dynamodb }, ...(kafka ? { kafka: { bootstrap: kafka.bootstrap } } : {}) } satisfies StackDescription, null, 2)}\n`,
      );
    }
    const connect =
      (options.connectIntervalMs ?? 0) > 0
        ? startConnectTimer({
            intervalMs: options.connectIntervalMs!,
            env: { ...process.env, SLUICE_URL: `http://127.0.0.1:${port}` },
            ...(options.dataDir ? { dataDir: options.dataDir } : {}),
            log,
            emf: (line) => telemetry.emf(line),
            // Watches the partition items: an invocation starts only for a started source or a sink
            // whose topics have records past its group's committed offsets (connect/worker/wakeup.ts).
            due: async () => {
              const sluice = runtime.sluiceFromEnv();
              const client = new SluiceClient({
                url: 'http://sluice.internal',
                fetch: inProcessFetch(sluice.router()),
              });
              return anyDue(client, await new ConnectStateStore(sluice.store).list());
            },
          })
        : undefined;

    return {
      url,
      endpoints,
      stores,
      segments: segmentStore,
      tableName,
      buckets,
      segmentBucket,
      latencyModel,
      auth: authFiles ? { mode: 'iam', ...authFiles } : { mode: 'open' },
      runMaintenance,
      connectWorkerPid: () => connect?.pid(),
      kafka,
      telemetry,
      stop: async () => {
        await kafka?.close();
        if (timer) clearInterval(timer);
        await replicator.stop();
        await connect?.stop();
        if (options.stackFile) await rm(options.stackFile, { force: true });
        await running?.catch(() => undefined);
        waitSocket.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await emulators?.stop();
        for (const [k, v] of Object.entries(previousEnv)) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
        runtime.resetSluice();
        runtime.setTelemetrySink(undefined);
      },
    };
  } catch (error) {
    await emulators?.stop();
    throw error;
  }
};

/** The replicator on a timer: one pass at a time, each over every replicated partition. */
const startReplicator = (
  runtime: Pick<typeof Runtime, 'sluiceFromEnv'>,
  intervalMs: number,
  log: (line: string) => void,
): { stop(): Promise<void> } => {
  if (intervalMs <= 0) return { stop: async () => {} };
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    running ??= runtime
      .sluiceFromEnv()
      .maintenance.replicate((what, error) => log(`${what} failed: ${String(error)}`))
      .catch((error: unknown) => log(`replication failed: ${String(error)}`))
      .finally(() => (running = undefined));
  }, intervalMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
};

/** SLUICE_AUTH=iam: the credentials and policy files (SLUICE_AUTH_KEYS, SLUICE_AUTH_POLICY). */
const localAuthFiles = (
  env: Record<string, string | undefined>,
  dataDir: string | undefined,
): { credentials: string; policy: string; region: string } | undefined => {
  const mode = env['SLUICE_AUTH'] ?? 'open';
  if (mode === 'open') return undefined;
  if (mode !== 'iam') throw new Error(`SLUICE_AUTH must be "open" or "iam", not "${mode}"`);
  const file = (variable: string, name: string): string => {
    const path = env[variable] ?? (dataDir ? join(dataDir, name) : undefined);
    if (!path) throw new Error(`SLUICE_AUTH=iam needs ${variable} (or a data directory holding ${name})`);
    return path;
  };
  return {
    credentials: file('SLUICE_AUTH_KEYS', 'credentials.json'),
    policy: file('SLUICE_AUTH_POLICY', 'policy.json'),
    region: env['AWS_REGION'] ?? env['AWS_DEFAULT_REGION'] ?? 'us-east-1',
  };
};

/**
 * The local stack's layers over the handlers' stores: the latency model next to the stores (it stands
 * for the network), and outside it the soak test's seeded faults (SLUICE_FAULTS, a JSON spec such as
 * {"seed":1,"rate":0.05}; never for a deployment).
 */
const storageLayer = (model: LatencyModelName, faults: string | undefined): StorageLayer | undefined => {
  if (model === 'none' && !faults) return undefined;
  return (storage) => {
    const timed = model === 'none' ? storage : withLatency(latencyModels[model], storage);
    return faults ? withFaults(parseFaultSpec(faults), timed) : timed;
  };
};

const persistentClusterId = async (dataDir: string | undefined): Promise<string> => {
  if (!dataDir) return `local-${randomUUID()}`;
  const file = join(dataDir, 'cluster-id');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    const id = `local-${randomUUID()}`;
    await mkdir(dataDir, { recursive: true });
    await writeFile(file, `${id}\n`);
    return id;
  }
};
