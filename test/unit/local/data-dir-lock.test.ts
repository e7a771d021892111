import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DataDirInUseError, LOCK_FILE, lockDataDir } from '../../../local/data-dir-lock.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-lock-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('lockDataDir', () => {
  it('refuses a second stack on a directory whose owner is alive, naming its pid', async () => {
    const release = await lockDataDir(dir, process.pid);
    expect((await readFile(join(dir, LOCK_FILE), 'utf8')).trim()).toBe(String(process.pid));
    // Another live process (pid 1 always exists) holds it: a second owner is refused.
    await writeFile(join(dir, LOCK_FILE), '1\n');
    const refused = await lockDataDir(dir, process.pid).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DataDirInUseError);
    expect((refused as DataDirInUseError).pid).toBe(1);
    expect((refused as Error).message).toContain('(pid 1)');
    // Release only removes a lock this process owns.
    release();
    expect((await readFile(join(dir, LOCK_FILE), 'utf8')).trim()).toBe('1');
  });

  it('takes over the lock of a process that is gone (kill -9)', async () => {
    const child = spawn(process.execPath, ['-e', '']);
    const pid = child.pid!;
    await new Promise((resolve) => child.on('exit', resolve));
    await writeFile(join(dir, LOCK_FILE), `${pid}\n`);
    const release = await lockDataDir(dir, process.pid);
    expect((await readFile(join(dir, LOCK_FILE), 'utf8')).trim()).toBe(String(process.pid));
    release();
    await expect(readFile(join(dir, LOCK_FILE), 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('takes over right after SIGKILL of the owner whole process group, while the owner is still a zombie', async () => {
    // The owner runs in its own process group (setsid) under a parent that never reaps it (`exec
    // sleep`), so after the kill it stays a zombie, as a killed stack's processes did for up to 1.7 s.
    const holder = `require('fs').writeFileSync(${JSON.stringify(join(dir, LOCK_FILE))}, process.pid + '\\n', { flag: 'wx' }); console.log(process.pid); setInterval(() => {}, 1000);`;
    const parent = spawn(
      'sh',
      ['-c', `setsid ${JSON.stringify(process.execPath)} -e "$HOLDER" & exec sleep 30`],
      {
        env: { ...process.env, HOLDER: holder },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    try {
      const ownerPid = await new Promise<number>((resolve) =>
        parent.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))),
      );
      expect((await readFile(join(dir, LOCK_FILE), 'utf8')).trim()).toBe(String(ownerPid));
      process.kill(-ownerPid, 'SIGKILL');
      let state = '';
      for (let i = 0; i < 100 && state !== 'Z'; i++) {
        await new Promise((r) => setTimeout(r, 10));
        const stat = await readFile(`/proc/${ownerPid}/stat`, 'utf8');
        state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      }
      expect(state).toBe('Z');
      const release = await lockDataDir(dir, process.pid);
      expect((await readFile(join(dir, LOCK_FILE), 'utf8')).trim()).toBe(String(process.pid));
      release();
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
