/**
 * Sluice as a user installs it: `npm pack` (which builds dist/ in prepack), then `npm install --offline`
 * of the tarball into an empty folder, with no registry and no cache needed (the client's runtime
 * dependencies travel in the tarball). The installed `sluice` command and `import … from 'sluice'` then
 * work against the local stack.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestStack } from './stack.js';
import { startTestStack } from './stack.js';

const exec = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;

let t: TestStack;
let dir: string;

beforeAll(async () => {
  t = await startTestStack();
  dir = await mkdtemp(join(tmpdir(), 'sluice-pack-'));
  await exec('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: root });
  const tarball = (await readdir(dir)).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error('npm pack wrote no tarball');
  const app = join(dir, 'app');
  await exec('mkdir', [app]);
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  // An empty cache proves nothing is fetched: every dependency must come from the tarball.
  await exec(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund', '--cache', join(dir, 'cache'), join('..', tarball)],
    { cwd: app },
  );
}, 180_000);

afterAll(async () => {
  await t?.stack.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the installed package', () => {
  it('has a working sluice command', async () => {
    const bin = join(dir, 'app', 'node_modules', '.bin', 'sluice');
    const env = { ...process.env, SLUICE_URL: t.url };
    const created = await exec(bin, ['topics', 'create', 'pack-orders', '--partitions', '2', '--json'], {
      env,
    });
    expect(JSON.parse(created.stdout)).toMatchObject({ name: 'pack-orders', partitions: [{}, {}] });
    const produced = exec(bin, ['produce', 'pack-orders', '--partition', '1', '-q'], { env });
    produced.child.stdin?.end('a\nb\nc\n');
    await produced;
    const consumed = await exec(
      bin,
      [
        'consume',
        'pack-orders',
        '--partition',
        '1',
        '--from-beginning',
        '--max-messages',
        '3',
        '--property',
        'print.offset=true',
      ],
      { env },
    );
    expect(consumed.stdout).toBe('Offset:0\ta\nOffset:1\tb\nOffset:2\tc\n');
  });

  it("exports the SDK from 'sluice', with its types", async () => {
    const app = join(dir, 'app');
    await writeFile(
      join(app, 'read.mjs'),
      `import { SluiceClient, SluiceError, sigV4Fetch } from 'sluice';
const client = new SluiceClient({ url: process.argv[2] });
await client.producer().sendBatch('pack-orders', 0, [{ key: 'k', value: 'from the sdk' }]);
const batch = await client.consumer().fetch('pack-orders', 0, 0);
const missing = await client.admin().describeTopic('nope').catch((e) => e);
console.log(JSON.stringify({
  values: batch.records.map((r) => new TextDecoder().decode(r.value)),
  missing: missing instanceof SluiceError ? missing.code : String(missing),
  signer: typeof sigV4Fetch,
}));
`,
    );
    const { stdout } = await exec(process.execPath, ['read.mjs', t.url], { cwd: app });
    expect(JSON.parse(stdout)).toEqual({
      values: ['from the sdk'],
      missing: 'UNKNOWN_TOPIC_OR_PARTITION',
      signer: 'function',
    });
    const types = await readdir(join(app, 'node_modules', 'sluice', 'dist', 'sdk'));
    expect(types).toContain('index.d.ts');
  });
});
