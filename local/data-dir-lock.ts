/**
 * One stack per data directory: DynamoDB Local and s3rver would both write the same files, so a second
 * `npm start` on a directory in use refuses to start. The lock file holds the owner's PID; a lock whose
 * process is gone (kill -9, a crash) or a zombie is stale and taken over.
 */
import { readFileSync, rmSync } from 'node:fs';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

export const LOCK_FILE = 'sluice.lock';

export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `${dataDir} is in use by another Sluice stack (pid ${pid}); stop it or set SLUICE_DATA_DIR to another directory`,
    );
    this.name = 'DataDirInUseError';
  }
}

/**
 * Whether `pid` still runs. A process killed with SIGKILL stays a zombie until its parent (or init,
 * after its parent died with it) reaps it, and signal 0 still reaches a zombie: after `kill -9` of a
 * stack's process group that took up to 1.7 s, and an immediate restart was refused. A zombie (state
 * Z, or X while being reaped, in /proc/{pid}/stat) holds no files and runs nothing: it counts as dead.
 */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !isZombie(pid);
};

const isZombie = (pid: number): boolean => {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false; // no /proc (not Linux): signal 0 is all there is
  }
  // `pid (comm) state …`: comm may hold spaces and parentheses, so read after the last `)`.
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state === 'Z' || state === 'X';
};

/** Takes the directory's lock for this process; resolves a release function (synchronous, so it runs on exit). */
export const lockDataDir = async (dataDir: string, pid = process.pid): Promise<() => void> => {
  await mkdir(dataDir, { recursive: true });
  const file = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, 'wx');
      await handle.writeFile(`${pid}\n`);
      await handle.close();
      return () => {
        let owner = NaN;
        try {
          owner = Number(readFileSync(file, 'utf8').trim());
        } catch {
          return;
        }
        if (owner === pid) rmSync(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number((await readFile(file, 'utf8').catch(() => '')).trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== pid && alive(owner)) {
        throw new DataDirInUseError(dataDir, owner);
      }
      // Stale (its process is gone) or unreadable: remove it and try once more.
      await rm(file, { force: true });
    }
  }
  throw new Error(`could not lock ${dataDir}`);
};
