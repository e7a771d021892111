/**
 * `sluice streams query` in-process against the real router (memory storage) over state registered
 * and written as a running application writes it: the table and JSON outputs, the range pages, the
 * window form, and the errors a user acts on (exit codes, messages, hints).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { EXIT_API_ERROR, EXIT_OK, EXIT_USAGE, run } from '../../../cli/main.js';
import { partitionForKey } from '../../../protocol/partitioner.js';
import { registerStores } from '../../../streams/query/registry.js';
import { MetadataStateBackend } from '../../../streams/state/metadata-backend.js';
import { encodeTime } from '../../../streams/state/stores.js';
import type { FetchLike } from '../../../sdk/transport.js';
import { routerFetch } from '../../support/router-fetch.js';
import { memorySluice } from '../../support/log-support.js';

const T = Date.UTC(2024, 4, 1, 10, 0, 0);
let fetch: FetchLike;

const hex = (s: string) => Buffer.from(s).toString('hex');

beforeAll(async () => {
  const { sluice } = memorySluice();
  fetch = routerFetch(sluice.router());
  await registerStores(sluice.store, 'word-count', {
    partitions: 2,
    stores: {
      'counts-store': { kind: 'key-value', subTopology: 0, keyFormat: 'string', valueFormat: 'json' },
      'per-minute': { kind: 'window', subTopology: 0, keyFormat: 'string', valueFormat: 'json' },
    },
  });
  const backend = new MetadataStateBackend(sluice.store, 'word-count');
  const counts: [string, number][] = [
    ['hello', 3],
    ['kafka', 12],
    ['world', 1],
  ];
  for (const [word, n] of counts) {
    const task = `0_${partitionForKey(Buffer.from(word), 2)}`;
    await backend.write(task, [
      {
        store: 'counts-store',
        key: hex(word),
        entry: { key: hex(word), value: Buffer.from(String(n)), timestamp: T + n },
      },
    ]);
  }
  const hello = `0_${partitionForKey(Buffer.from('hello'), 2)}`;
  await backend.write(
    hello,
    [0, 60_000].map((start, i) => {
      const key = `${hex('hello')}|${encodeTime(T + start)}`;
      return {
        store: 'per-minute',
        key,
        entry: { key, value: Buffer.from(String(i + 1)), timestamp: T + start + 5 },
      };
    }),
  );
});

const sluice = async (...argv: string[]) => {
  let stdout = '';
  let stderr = '';
  const code = await run(['--url', 'http://sluice.test', ...argv], {
    stdout: { write: (t) => void (stdout += t) },
    stderr: { write: (t) => void (stderr += t) },
    env: {},
    fetch,
    sleep: async () => {},
  });
  return { code, stdout, stderr };
};

describe('sluice streams query', () => {
  it('prints a key as a table', async () => {
    expect(await sluice('streams', 'query', 'word-count', 'counts-store', 'hello')).toEqual({
      code: EXIT_OK,
      stdout: 'KEY    VALUE  TIMESTAMP\nhello      3  2024-05-01T10:00:00.003Z\n',
      stderr: '',
    });
  });

  it('prints the API body with --json', async () => {
    const r = await sluice('streams', 'query', 'word-count', 'counts-store', 'kafka', '--json');
    expect(JSON.parse(r.stdout)).toEqual({ key: 'kafka', value: 12, timestamp: T + 12 });
  });

  it('a range without a key, paged: --limit leaves a note with the next --from, --all follows it', async () => {
    const page = await sluice('streams', 'query', 'word-count', 'counts-store', '--limit', '2');
    expect(page.stdout).toBe(
      'KEY    VALUE  TIMESTAMP\nhello      3  2024-05-01T10:00:00.003Z\nkafka     12  2024-05-01T10:00:00.012Z\n',
    );
    expect(page.stderr).toBe('more keys follow: --from "world" (or --all)\n');
    const all = await sluice(
      'streams',
      'query',
      'word-count',
      'counts-store',
      '--limit',
      '2',
      '--all',
      '--json',
    );
    expect(JSON.parse(all.stdout)).toEqual({
      entries: [
        { key: 'hello', value: 3, timestamp: T + 3 },
        { key: 'kafka', value: 12, timestamp: T + 12 },
        { key: 'world', value: 1, timestamp: T + 1 },
      ],
      next: null,
    });
    const bounded = await sluice(
      'streams',
      'query',
      'word-count',
      'counts-store',
      '--from',
      'i',
      '--to',
      'kafka',
    );
    expect(bounded.stdout).toBe('KEY    VALUE  TIMESTAMP\nkafka     12  2024-05-01T10:00:00.012Z\n');
  });

  it('a window store key: its windows, bounded by --window-start/--window-end (ms or ISO 8601)', async () => {
    const every = await sluice('streams', 'query', 'word-count', 'per-minute', 'hello');
    expect(every.stdout).toBe(
      'KEY    WINDOW START              VALUE  TIMESTAMP\n' +
        'hello  2024-05-01T10:00:00.000Z      1  2024-05-01T10:00:00.005Z\n' +
        'hello  2024-05-01T10:01:00.000Z      2  2024-05-01T10:01:00.005Z\n',
    );
    const later = await sluice(
      'streams',
      'query',
      'word-count',
      'per-minute',
      'hello',
      '--window-start',
      '2024-05-01T10:00:30Z',
      '--json',
    );
    expect(JSON.parse(later.stdout)).toEqual({
      key: 'hello',
      windows: [{ windowStart: T + 60_000, value: 2, timestamp: T + 60_005 }],
    });
  });

  it('a missing key: says so on stderr, exit 1', async () => {
    expect(await sluice('streams', 'query', 'word-count', 'counts-store', 'zebra')).toEqual({
      code: EXIT_API_ERROR,
      stdout: '',
      stderr: 'no key "zebra" in store counts-store of word-count\n',
    });
  });

  it('an unknown store: the message lists the stores, the hint says how one appears', async () => {
    const r = await sluice('streams', 'query', 'word-count', 'count-store', 'hello');
    expect(r.code).toBe(EXIT_API_ERROR);
    expect(r.stderr).toContain(
      'application word-count has no state store count-store; its stores: counts-store, per-minute',
    );
    expect(r.stderr).toContain('a new store appears once `sluice streams run <app.ts>` starts with it');
  });

  it('mistakes in the command line are usage errors (exit 2) and send nothing', async () => {
    const key = await sluice('streams', 'query', 'word-count', 'counts-store', 'hello', '--from', 'a');
    expect(key.code).toBe(EXIT_USAGE);
    expect(key.stderr).toContain('--from is for a range: leave out the <key>');
    const window = await sluice('streams', 'query', 'word-count', 'per-minute', '--window-start', '0');
    expect(window.code).toBe(EXIT_USAGE);
    expect(window.stderr).toContain('--window-start and --window-end need a <key>');
    const limit = await sluice('streams', 'query', 'word-count', 'counts-store', '--limit', '0');
    expect(limit.code).toBe(EXIT_USAGE);
    const missing = await sluice('streams', 'query', 'word-count');
    expect(missing.code).toBe(EXIT_USAGE);
  });
});

describe('sluice streams run', () => {
  it('refuses an unknown config before starting anything', async () => {
    const r = await sluice('streams', 'run', 'examples/word-count.ts', '--config', 'num.stream.threads=2');
    expect(r.code).toBe(EXIT_USAGE);
    expect(r.stderr).toContain('unknown config num.stream.threads');
  });

  it('says what is wrong with a module that is not an application', async () => {
    const r = await sluice('streams', 'run', 'examples/golden.ts');
    expect(r.code).toBe(EXIT_API_ERROR);
    expect(r.stderr).toContain('examples/golden.ts must export topology(): Topology');
  });
});
