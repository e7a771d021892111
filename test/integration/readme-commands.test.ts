/**
 * Every shell command in README.md, in the README's order, against a real `npm start`, so the README
 * and what it shows cannot drift apart: the commands are read from the README at run time.
 *
 * What runs: each ```sh or ```bash block, command by command (a line ending in `\` or inside an
 * unclosed '…' quote continues on the next line; blank and `#` lines are skipped). Variables a command
 * sets (`U=http://…`) stay set for the commands after it. Commands run with bash in the repository
 * root, with `SLUICE_DATA_DIR` pointing at this test's stack, and with `127.0.0.1:8787`,
 * `localhost:8787` (and the Kafka gateway's `:9092`) and `.sluice/` rewritten to this test's port and data directory (other tests may
 * hold 8787 and `.sluice/`).
 *
 * A command passes when it exits 0, prints no Sluice error body (`"error":{"code"`) and no FAILED
 * Connect state, and, when its trailing comment is an output (`# {"status":"ok"}`, `# 204`), prints
 * exactly that; a comment holding `` `text` `` in backquotes promises that text in its output
 * (stdout or stderr).
 * `NAME=value` and `NAME=$(…)` set NAME (evaluated once, there) for the commands after it. A command whose comment says `Ctrl-C` runs until it has printed something, is then
 * interrupted with SIGINT (sent to its process group, as a terminal does) and must exit 0 or end by
 * that SIGINT (130).
 * An `npm start` command (optionally with variables before it, or `&` after it) is this test's own
 * stack: it is started once, up front, with the variables the README gives it.
 *
 * THE SKIP MARKER. A block that cannot run here (it needs AWS, takes hours, or is the test suite
 * itself) is preceded, on the line just before its opening fence, by
 *
 *     <!-- readme-test: skip — the reason, for the reader of this test -->
 *
 * A marker without a reason, or a reason under 10 characters, fails the test. Markers are invisible in
 * the rendered README. A new README section's commands run here unless marked.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MARKER = /^<!--\s*readme-test:\s*skip\b\s*[—:-]?\s*(.*?)\s*-->$/;

export interface ReadmeCommand {
  /** The README line the command starts on (1-based). */
  line: number;
  text: string;
}

export interface ReadmeBlock {
  line: number;
  commands: ReadmeCommand[];
  skip?: string;
}

/** Whether `text` leaves a single quote open (bash's rule: no escapes inside '…'). */
const openQuote = (text: string): boolean => {
  let open = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "'") open = !open;
    else if (c === '\\' && !open) i++;
    else if (c === '#' && !open && (i === 0 || /\s/.test(text[i - 1]!))) {
      // a comment runs to the end of its line
      const end = text.indexOf('\n', i);
      if (end < 0) break;
      i = end;
    }
  }
  return open;
};

/** The shell blocks of a README, in order, each split into commands. */
export const readmeBlocks = (markdown: string): ReadmeBlock[] => {
  const lines = markdown.split('\n');
  const blocks: ReadmeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(sh|bash|shell)\s*$/.exec(lines[i]!);
    if (!fence) {
      if (/^```/.test(lines[i]!)) {
        // another language's block: skip to its end
        while (++i < lines.length && !/^```\s*$/.test(lines[i]!));
      }
      continue;
    }
    let prev = i - 1;
    while (prev >= 0 && lines[prev]!.trim() === '') prev--;
    const marker = prev >= 0 ? MARKER.exec(lines[prev]!.trim()) : null;
    const block: ReadmeBlock = { line: i + 1, commands: [], ...(marker ? { skip: marker[1] ?? '' } : {}) };
    let current: ReadmeCommand | undefined;
    while (++i < lines.length && !/^```\s*$/.test(lines[i]!)) {
      const line = lines[i]!;
      if (current) {
        current.text += `\n${line}`;
      } else {
        if (line.trim() === '' || line.trim().startsWith('#')) continue;
        current = { line: i + 1, text: line };
      }
      if (!current.text.endsWith('\\') && !openQuote(current.text)) {
        block.commands.push(current);
        current = undefined;
      }
    }
    if (current) block.commands.push(current);
    blocks.push(block);
  }
  return blocks;
};

/** The trailing `# comment` of a command's last line, outside quotes. */
export const trailingComment = (text: string): string | undefined => {
  const last = text.split('\n').at(-1)!;
  let quote: string | undefined;
  for (let i = 0; i < last.length; i++) {
    const c = last[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && i > 0 && /\s/.test(last[i - 1]!) && last[i - 1] !== '$')
      return last.slice(i + 1).trim();
  }
  return undefined;
};

/** The output a comment promises, when it is one: a JSON value or a bare number. */
const promisedOutput = (comment: string | undefined): string | undefined =>
  comment !== undefined && (/^\{.*\}$/.test(comment) || /^\d+$/.test(comment)) ? comment : undefined;

/** Fragments a comment promises the output contains: `` `"value":"hello"` ``. */
const promisedFragments = (comment: string | undefined): string[] =>
  [...(comment ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/** `NAME=value` or `NAME=$(…)` alone on its line: the variable's name. */
export const assignedName = (text: string): string | undefined => {
  if (text.includes('\n')) return undefined;
  const comment = trailingComment(text);
  const body = (comment === undefined ? text : text.slice(0, text.lastIndexOf('#'))).trim();
  const m = /^([A-Za-z_][A-Za-z0-9_]*)=(\$\(.*\)|\S+)$/.exec(body);
  return m?.[1];
};

/** `npm start`, `VAR=x npm start`, `… npm start &`: this test's own stack. */
const START = /^((?:[A-Z_][A-Z0-9_]*=\S*\s+)*)npm start\s*&?\s*(#.*)?$/;
const startEnv = (text: string): Record<string, string> | undefined => {
  const m = START.exec(text.trim());
  if (!m) return undefined;
  return Object.fromEntries(
    (m[1] ?? '')
      .trim()
      .split(/\s+/)
      .filter((a) => a.includes('='))
      .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]),
  );
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

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const cleanEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(SLUICE_|AWS_ENDPOINT_URL|PORT$|VITEST|npm_)/.test(k)) continue;
    env[k] = v;
  }
  return env;
};

/** Runs `script` with bash in its own process group; `interrupt` sends SIGINT once output shows. */
const runBash = (
  script: string,
  env: NodeJS.ProcessEnv,
  o: { timeoutMs: number; interrupt?: boolean },
): Promise<Outcome> =>
  new Promise((resolve) => {
    const child: ChildProcess = spawn('bash', ['-c', script], {
      cwd: ROOT,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let interrupted = false;
    const interrupt = (): void => {
      if (interrupted || child.exitCode !== null) return;
      interrupted = true;
      try {
        process.kill(-child.pid!, 'SIGINT');
      } catch {
        // already gone
      }
    };
    const onOutput = (): void => {
      // Interrupted a moment after it first speaks (a group member says which partitions it owns).
      if (o.interrupt && !interrupted) setTimeout(interrupt, 3_000);
    };
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      onOutput();
    });
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      onOutput();
    });
    const timer = setTimeout(() => {
      if (o.interrupt) return interrupt();
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, o.timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });

const markdown = await readFile(join(ROOT, 'README.md'), 'utf8');
const blocks = readmeBlocks(markdown);

describe('README.md: its command blocks, as this test reads them', () => {
  it('finds the blocks and commands, and every skip marker gives a reason', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(8);
    for (const b of blocks) {
      if (b.skip !== undefined)
        expect(b.skip.length, `README.md:${b.line}: skip needs a reason`).toBeGreaterThan(10);
    }
    const curl = blocks.find((b) => b.commands.some((c) => c.text.startsWith('U=')))!;
    expect(curl.skip).toBeUndefined();
    // Multi-line commands stay whole: the Connect create spans three lines of one quoted body.
    const connect = blocks
      .flatMap((b) => b.commands)
      .find((c) => c.text.includes('/v1/connect/connectors -d'));
    expect(connect?.text.split('\n').length).toBeGreaterThan(1);
    expect(connect?.text.trim().endsWith("}}'")).toBe(true);
  });

  it('parses continuation lines, quotes and trailing comments', () => {
    const parsed = readmeBlocks(
      [
        'text',
        '<!-- readme-test: skip — needs an AWS account to deploy -->',
        '```sh',
        'npx cdk deploy',
        '```',
        '```ts',
        'const x = 1; # not a command',
        '```',
        '```sh',
        'curl -s $U/v1/health          # {"status":"ok"}',
        "curl -d '{",
        '  "a": "b # c"}\' \\',
        '  -o /dev/null',
        '# a comment line',
        '```',
      ].join('\n'),
    );
    expect(parsed).toEqual([
      { line: 3, skip: 'needs an AWS account to deploy', commands: [{ line: 4, text: 'npx cdk deploy' }] },
      {
        line: 9,
        commands: [
          { line: 10, text: 'curl -s $U/v1/health          # {"status":"ok"}' },
          { line: 11, text: 'curl -d \'{\n  "a": "b # c"}\' \\\n  -o /dev/null' },
        ],
      },
    ]);
    expect(trailingComment('curl -s $U/v1/health # {"status":"ok"}')).toBe('{"status":"ok"}');
    expect(trailingComment("curl -w '%{http_code}\\n'   # 204")).toBe('204');
    expect(trailingComment('echo "a # b"')).toBeUndefined();
    expect(startEnv('SLUICE_REPLICA_LAG_TIME_MAX_MS=2000 npm start &')).toEqual({
      SLUICE_REPLICA_LAG_TIME_MAX_MS: '2000',
    });
    expect(startEnv('npm ci && npm start')).toBeUndefined();
    expect(assignedName('U=http://127.0.0.1:8787')).toBe('U');
    expect(assignedName("F=$(curl -s x | jq -r '.a')   # a follower")).toBe('F');
    expect(assignedName('SLUICE_X=1 npm start')).toBeUndefined();
    expect(promisedFragments('# `"value":"hello"` and `b`')).toEqual(['"value":"hello"', 'b']);
  });
});

/**
 * Commands the README's prose names in `code` (npm, npx, curl, kcat, cdk), without a placeholder
 * (`<…>`, `…`, `[…]`): each must be one of its blocks' commands (or part of one), so a command a reader is
 * told to run is run here or skipped with a reason, never left in prose.
 */
export const proseCommands = (markdown: string): { line: number; text: string }[] => {
  const found: { line: number; text: string }[] = [];
  let fenced = false;
  for (const [i, line] of markdown.split('\n').entries()) {
    if (/^```/.test(line)) fenced = !fenced;
    if (fenced || /^```/.test(line)) continue;
    for (const m of line.matchAll(/`([^`]+)`/g)) {
      const text = m[1]!;
      if (/^(npm (run|ci|start|test)|npx |curl |kcat |cdk )/.test(text) && !/[<…[]/.test(text))
        found.push({ line: i + 1, text });
    }
  }
  return found;
};

describe('README.md: its commands are in blocks', () => {
  it('names no command in prose that no block holds', () => {
    const held = blocks.flatMap((b) => b.commands.map((c) => c.text.replace(/ -s /g, ' ')));
    const loose = proseCommands(markdown).filter((p) => !held.some((c) => c.includes(p.text)));
    expect(loose.map((p) => `README.md:${p.line}: ${p.text}`)).toEqual([]);
  });

  it('finds a command left in prose', () => {
    const planted = 'Run `npm run bench:planted` to see.\n\n```sh\nnpm run -s streams -- app.ts\n```\n';
    expect(proseCommands(planted)).toEqual([{ line: 1, text: 'npm run bench:planted' }]);
    expect(proseCommands('Use `npx sluice streams query <app> <store>` or `npm start`.')).toEqual([
      { line: 1, text: 'npm start' },
    ]);
  });
});

describe('README.md: every command, in order, against npm start', () => {
  const runnable = blocks.filter((b) => b.skip === undefined);
  const commands = runnable.flatMap((b) => b.commands);
  const stackEnv: Record<string, string> = Object.assign(
    {},
    ...commands.map((c) => startEnv(c.text) ?? {}),
  ) as Record<string, string>;
  let dataDir = '';
  let port = 0;
  let kafkaPort = 0;
  let stack: ChildProcess | undefined;
  let stackLog = '';
  const assignments: string[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'sluice-readme-'));
    port = await freePort();
    kafkaPort = await freePort();
    stack = spawn('npm', ['start'], {
      cwd: ROOT,
      env: {
        ...cleanEnv(),
        ...stackEnv,
        PORT: String(port),
        SLUICE_KAFKA_PORT: String(kafkaPort),
        SLUICE_DATA_DIR: dataDir,
      },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    stack.stdout!.on('data', (d: Buffer) => (stackLog += d.toString()));
    stack.stderr!.on('data', (d: Buffer) => (stackLog += d.toString()));
    const deadline = Date.now() + 240_000;
    while (
      !(await fetch(`http://127.0.0.1:${port}/v1/health`).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      if (stack.exitCode !== null || Date.now() > deadline)
        throw new Error(`npm start did not come up (exit ${stack.exitCode}):\n${stackLog}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }, 300_000);

  afterAll(async () => {
    if (stack && stack.exitCode === null) {
      const exited = new Promise((resolve) => stack!.once('exit', resolve));
      process.kill(-stack.pid!, 'SIGINT');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000))]);
      if (stack.exitCode === null) {
        try {
          process.kill(-stack.pid!, 'SIGKILL');
        } catch {
          // the group is gone already
        }
      }
    }
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  const rewrite = (text: string): string =>
    text
      .replace(/(127\.0\.0\.1|localhost):8787/g, `127.0.0.1:${port}`)
      .replace(/(127\.0\.0\.1|localhost):9092/g, `127.0.0.1:${kafkaPort}`)
      .replace(/(^|[\s'"(])\.sluice\//g, `$1${dataDir}/`);

  it.each(commands.map((c) => [`README.md:${c.line}`, c] as const))(
    '%s',
    async (_where, command) => {
      if (startEnv(command.text)) {
        // This test's own stack, started up front with these variables.
        expect(stack?.exitCode).toBeNull();
        return;
      }
      const comment = trailingComment(command.text);
      const interrupt = /ctrl-c/i.test(comment ?? '');
      const name = assignedName(command.text);
      const script = [...assignments, rewrite(command.text), ...(name ? [`printf %s "$${name}"`] : [])].join(
        '\n',
      );
      const env = { ...cleanEnv(), SLUICE_DATA_DIR: dataDir };
      const out = await runBash(script, env, { timeoutMs: interrupt ? 60_000 : 150_000, interrupt });
      const shown = `README.md:${command.line}: ${command.text}\nexit ${out.code} ${out.signal ?? ''}\nstdout:\n${out.stdout}\nstderr:\n${out.stderr}`;
      // Interrupted, the shell (or npm) ends by the signal itself, as in a terminal (status 130).
      const code = interrupt && out.signal === 'SIGINT' ? 130 : out.code;
      expect([0, ...(interrupt ? [130] : [])], shown).toContain(code);
      expect(out.stdout, shown).not.toMatch(/"error":\s*\{\s*"code"/);
      expect(out.stdout, shown).not.toMatch(/"state":\s*"FAILED"/);
      const promised = promisedOutput(comment);
      if (promised !== undefined) expect(out.stdout.trim(), shown).toBe(promised);
      for (const fragment of promisedFragments(comment))
        expect(out.stdout + out.stderr, shown).toContain(fragment);
      // Variables stay set for the commands after this one, as in the reader's shell.
      if (name) {
        expect(out.stdout, `${shown}\n${name} is empty`).not.toBe('');
        assignments.push(`${name}='${out.stdout.replace(/'/g, `'\\''`)}'`);
      }
    },
    200_000,
  );
});
