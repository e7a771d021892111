/**
 * A real PostgreSQL for the Connect tests: Debian's binaries (/usr/lib/postgresql/<v>/bin, or
 * PG_BIN), a fresh cluster from initdb in a temp dir, on a free loopback port, stopped and removed
 * afterwards. PostgreSQL refuses to run as root, so under root the cluster belongs to the `postgres`
 * user (uid/gid looked up from /etc/passwd).
 */
import type { ChildProcess } from 'node:child_process';
import { execFile, spawn } from 'node:child_process';
import { chown, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

export interface TestPostgres {
  url: string;
  stop(): Promise<void>;
}

const findBin = async (): Promise<string> => {
  if (process.env['PG_BIN']) return process.env['PG_BIN'];
  const root = '/usr/lib/postgresql';
  const versions = (await readdir(root).catch(() => [] as string[])).sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0)
    throw new Error('PostgreSQL is not installed: apt-get install -y postgresql (or set PG_BIN)');
  return join(root, versions[0]!, 'bin');
};

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

const postgresUser = async (): Promise<{ uid: number; gid: number } | undefined> => {
  if (process.getuid?.() !== 0) return undefined;
  const line = (await readFile('/etc/passwd', 'utf8')).split('\n').find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('running as root needs a postgres user to own the test cluster');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
};

export const startPostgres = async (): Promise<TestPostgres> => {
  const bin = await findBin();
  const dir = await mkdtemp(join(tmpdir(), 'sluice-pg-'));
  const owner = await postgresUser();
  if (owner) await chown(dir, owner.uid, owner.gid);
  const as = owner ? { uid: owner.uid, gid: owner.gid } : {};
  const data = join(dir, 'data');
  await run(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'sluice', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'],
    {
      ...as,
    },
  );
  const port = await freePort();
  // fsync off: a test cluster trades crash safety for speed on a shared machine.
  const server: ChildProcess = spawn(
    join(bin, 'postgres'),
    [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
    ],
    { ...as, stdio: 'ignore' },
  );
  const url = `postgresql://sluice@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      break;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (server.exitCode !== null || Date.now() > deadline) {
        server.kill('SIGKILL');
        throw new Error(`PostgreSQL did not start: ${(error as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return {
    url,
    stop: async () => {
      if (server.exitCode === null) {
        const exited = new Promise((resolve) => server.once('exit', resolve));
        server.kill('SIGINT'); // fast shutdown
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
};
