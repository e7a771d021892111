import { describe, expect, it } from 'vitest';
import { Options, UsageError, parseInteger, parseTimestamp } from '../../../cli/command.js';
import { parseStartPosition } from '../../../cli/commands/consume.js';
import { parseResetTarget } from '../../../cli/commands/reset-offsets.js';
import { parseOffsetSpec } from '../../../cli/commands/offsets.js';
import { parseLine, requestKey } from '../../../cli/commands/produce.js';
import { readLines } from '../../../cli/io.js';
import { EXIT_OK, EXIT_USAGE, commandWords, findCommand, run } from '../../../cli/main.js';

/** Runs the CLI with a fetch that fails the test if called: parsing must not touch the network. */
const runOffline = async (argv: string[]) => {
  let stdout = '';
  let stderr = '';
  let requests = 0;
  const code = await run(argv, {
    stdout: { write: (t) => void (stdout += t) },
    stderr: { write: (t) => void (stderr += t) },
    env: {},
    fetch: async () => {
      requests += 1;
      throw new Error('no network in parsing tests');
    },
  });
  return { code, stdout, stderr, requests };
};

describe('commandWords', () => {
  it('skips global options and their values before and between the command words', () => {
    expect(
      commandWords(['--url', 'http://x', 'topics', '--json', 'create', 'orders', '--partitions', '3']),
    ).toEqual(['topics', 'create']);
    expect(commandWords(['--url=http://x', '-q', 'produce', 'orders'])).toEqual(['produce', 'orders']);
  });

  it('stops at the first command option', () => {
    expect(commandWords(['consume', '--from', 'earliest', 'orders'])).toEqual(['consume']);
    expect(commandWords([])).toEqual([]);
  });
});

describe('findCommand', () => {
  it('finds grouped and single-word commands by their words', () => {
    expect(findCommand(['topics', 'describe'])?.words).toEqual(['topics', 'describe']);
    expect(findCommand(['groups', 'reset-offsets'])?.words).toEqual(['groups', 'reset-offsets']);
    expect(findCommand(['consume', 'orders'])?.words).toEqual(['consume']);
    expect(findCommand(['topics'])).toBeUndefined();
    expect(findCommand(['topics', 'frob'])).toBeUndefined();
  });
});

describe('Options', () => {
  const options = new Options({
    partitions: '3',
    bad: '3x',
    negative: '-1',
    config: ['retention.ms=1000', 'cleanup.policy=compact', 'retention.ms=2000'],
    encoding: 'json',
    follow: true,
  });

  it('reads integers within limits and rejects anything else as a usage error', () => {
    expect(options.int('partitions', { min: 1 })).toBe(3);
    expect(options.int('missing')).toBeUndefined();
    expect(() => options.int('bad')).toThrow(UsageError);
    expect(() => options.int('bad')).toThrow('--bad must be an integer ≥ 0, got "3x"');
    expect(() => options.int('negative')).toThrow(UsageError);
    expect(() => options.int('partitions', { min: 1, max: 2 })).toThrow('from 1 to 2');
  });

  it('reads repeated key=value options into an object, a later key winning', () => {
    expect(options.keyValues('config')).toEqual({ 'retention.ms': '2000', 'cleanup.policy': 'compact' });
    expect(options.keyValues('missing')).toBeUndefined();
    expect(() => new Options({ config: ['=x'] }).keyValues('config')).toThrow('takes key=value');
    expect(() => new Options({ config: ['novalue'] }).keyValues('config')).toThrow(UsageError);
  });

  it('checks choices and flags', () => {
    expect(options.choice('encoding', ['utf8', 'json'])).toBe('json');
    expect(() => options.choice('encoding', ['utf8', 'base64'])).toThrow('one of utf8, base64');
    expect(options.flag('follow')).toBe(true);
    expect(options.flag('json')).toBe(false);
    expect(options.string('config')).toBe('retention.ms=2000');
  });
});

describe('value parsers', () => {
  it('parses integers strictly', () => {
    expect(parseInteger('42', 'n')).toBe(42);
    expect(parseInteger(' 7 ', 'n')).toBe(7);
    expect(() => parseInteger('1e3', 'n')).toThrow(UsageError);
    expect(() => parseInteger('9007199254740993', 'n')).toThrow(UsageError);
  });

  it('parses timestamps in ms or ISO 8601', () => {
    expect(parseTimestamp('1700000000000', 't')).toBe(1_700_000_000_000);
    expect(parseTimestamp('2024-05-01T00:00:00Z', 't')).toBe(Date.UTC(2024, 4, 1));
    expect(() => parseTimestamp('yesterday', 't')).toThrow('ISO 8601');
  });

  it('parses consume --from', () => {
    expect(parseStartPosition('earliest')).toBe('earliest');
    expect(parseStartPosition('latest')).toBe('latest');
    expect(parseStartPosition('42')).toEqual({ offset: 42 });
    expect(parseStartPosition('@1700000000000')).toEqual({ timestamp: 1_700_000_000_000 });
    expect(parseStartPosition('@2024-05-01T00:00:00Z')).toEqual({ timestamp: Date.UTC(2024, 4, 1) });
    expect(() => parseStartPosition('beginning')).toThrow(UsageError);
  });

  it('parses groups reset-offsets --to', () => {
    expect(parseResetTarget('earliest')).toBe('earliest');
    expect(parseResetTarget('offset:17')).toEqual({ offset: 17 });
    expect(parseResetTarget('1700000000000')).toBe(1_700_000_000_000);
    expect(parseResetTarget('@1700000000000')).toBe(1_700_000_000_000);
    expect(parseResetTarget('2024-05-01T00:00:00Z')).toBe(Date.UTC(2024, 4, 1));
    expect(() => parseResetTarget('offset:x')).toThrow(UsageError);
    expect(() => parseResetTarget('start')).toThrow(UsageError);
  });

  it('parses offsets --at', () => {
    expect(parseOffsetSpec('earliest')).toBe('earliest');
    expect(parseOffsetSpec('1700000000000')).toBe(1_700_000_000_000);
    expect(() => parseOffsetSpec('soon')).toThrow(UsageError);
  });
});

describe('produce input', () => {
  it('splits key and value at the first separator, like parse.key', () => {
    expect(parseLine('user-1:a:b', 1, { encoding: 'utf8', separator: ':' })).toEqual({
      key: 'user-1',
      value: 'a:b',
    });
    expect(parseLine(':v', 1, { encoding: 'utf8', separator: ':' })).toEqual({ key: '', value: 'v' });
    expect(parseLine('whole line', 1, { encoding: 'utf8' })).toEqual({ value: 'whole line' });
    expect(() => parseLine('no-separator', 7, { encoding: 'utf8', separator: '\t' })).toThrow(
      'line 7 has no key separator "\\t"',
    );
  });

  it('parses JSON values and null markers', () => {
    expect(parseLine('k\t{"n":1}', 1, { encoding: 'json', separator: '\t' })).toEqual({
      key: 'k',
      value: { n: 1 },
    });
    expect(parseLine('NULL', 1, { encoding: 'utf8', nullMarker: 'NULL' })).toEqual({ value: null });
    expect(() => parseLine('{oops', 3, { encoding: 'json' })).toThrow('line 3 is not valid JSON');
  });

  it('derives one idempotency key per request from the user key', () => {
    expect([0, 1, 2].map((n) => requestKey('load-7', n))).toEqual(['load-7', 'load-7-1', 'load-7-2']);
  });

  it('splits chunks into lines across chunk boundaries, CRLF included', async () => {
    async function* chunks() {
      yield 'a\r\nb';
      yield new TextEncoder().encode('c\n\nd');
      yield new Uint8Array([0xc3]);
      yield new Uint8Array([0xa9, 0x0a]);
    }
    const lines: string[] = [];
    for await (const line of readLines(chunks())) lines.push(line);
    expect(lines).toEqual(['a', 'bc', '', 'dé']);
  });
});

describe('run: usage errors and help', () => {
  it('exits 2 with the error, the usage line and no request for a missing argument', async () => {
    const result = await runOffline(['topics', 'create']);
    expect(result.code).toBe(EXIT_USAGE);
    expect(result.requests).toBe(0);
    expect(result.stderr).toBe(
      'error: missing <topic>\nusage: sluice topics create <topic> [options]\nrun `sluice topics create --help` for more.\n',
    );
  });

  it('rejects unknown options, unknown commands and extra arguments', async () => {
    const unknownOption = await runOffline(['consume', 'orders', '--frm', 'earliest']);
    expect(unknownOption.code).toBe(EXIT_USAGE);
    expect(unknownOption.stderr).toContain("error: Unknown option '--frm' (did you mean --from?)\n");
    // Two letters swapped are one slip, not two.
    const swapped = await runOffline(['produce', 'orders', '--vaule', 'x']);
    expect(swapped.code).toBe(EXIT_USAGE);
    expect(swapped.stderr).toContain("error: Unknown option '--vaule' (did you mean --value?)");
    // A mistyped global option before the command is named, not answered with the overview.
    const before = await runOffline(['--bootstrap-servers', 'http://x', 'topics', 'list']);
    expect(before.code).toBe(EXIT_USAGE);
    expect(before.stderr).toContain(
      "error: Unknown option '--bootstrap-servers' (did you mean --bootstrap-server?)",
    );
    const unknownCommand = await runOffline(['topics', 'frob']);
    expect(unknownCommand.code).toBe(EXIT_USAGE);
    expect(unknownCommand.stderr).toContain('topics has list, describe, create, alter, delete');
    expect(unknownCommand.stderr).toContain('usage: sluice topics <command>');
    const extra = await runOffline(['topics', 'describe', 'a', 'b']);
    expect(extra.stderr).toContain('error: unexpected argument "b"');
  });

  it('checks option values before any request', async () => {
    const result = await runOffline(['topics', 'create', 'orders', '--partitions', '0']);
    expect(result.code).toBe(EXIT_USAGE);
    expect(result.requests).toBe(0);
    expect(result.stderr).toContain('--partitions must be an integer ≥ 1, got "0"');
    const group = await runOffline(['consume', 'orders', '--group', 'g', '--partition', '1']);
    expect(group.stderr).toContain('--partition does not go with --group');
    const url = await runOffline(['--url', 'ftp://x', 'health']);
    expect(url.code).toBe(EXIT_USAGE);
    expect(url.stderr).toContain('--url must be an http(s) URL');
  });

  it('reports usage errors as JSON under --json', async () => {
    const result = await runOffline(['topics', 'create', '--json']);
    expect(JSON.parse(result.stderr)).toEqual({
      error: {
        code: 'USAGE',
        message: 'missing <topic>',
        usage: 'usage: sluice topics create <topic> [options]',
      },
    });
  });

  it('prints help on stdout with exit 0, for the program, a group and a command', async () => {
    const top = await runOffline(['--help']);
    expect(top.code).toBe(EXIT_OK);
    expect(top.stdout).toContain('  groups reset-offsets  ');
    expect(top.stdout).toContain('--url URL');
    const group = await runOffline(['topics', '--help']);
    expect(group.stdout).toContain('  topics alter');
    expect(group.stdout).not.toContain('groups list');
    const command = await runOffline(['produce', '--help']);
    expect(command.stdout).toContain('Usage: sluice produce <topic> [options]');
    expect(command.stdout).toContain('--value V');
    expect(command.stdout).toContain('(repeatable)');
    const viaHelp = await runOffline(['help', 'consume']);
    expect(viaHelp.stdout).toContain('Usage: sluice consume <topic> [options]');
    expect([top, group, command, viaHelp].map((r) => r.requests)).toEqual([0, 0, 0, 0]);
  });

  it('prints the command list on stderr with exit 2 when no command is given', async () => {
    const result = await runOffline([]);
    expect(result.code).toBe(EXIT_USAGE);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('Commands:');
  });
});
