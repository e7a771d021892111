/**
 * `npm run sluice -- <command>`: finds the command, parses its options, runs it, and turns what went
 * wrong into a message, a hint and an exit code (0 ok, 1 API error, 2 usage error). `run` takes its
 * streams, environment and fetch as arguments, so tests drive it in-process.
 */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { SluiceApi } from './api.js';
import type { CommandSpec, Context } from './command.js';
import { UsageError, commandName, didYouMean } from './command.js';
import { localStackUrl, signingFor } from './endpoint.js';
import { cluster, health } from './commands/cluster.js';
import { consume } from './commands/consume.js';
import { groupCommands } from './commands/groups.js';
import { connectCommands } from './commands/connect.js';
import { streamsCommands } from './commands/streams.js';
import { offsets } from './commands/offsets.js';
import { configs } from './commands/configs.js';
import { gateway, gatewayToken } from './commands/gateway.js';
import { top } from './commands/top.js';
import { produce } from './commands/produce.js';
import { topicCommands } from './commands/topics.js';
import { transactionCommands } from './commands/transactions.js';
import { DEFAULT_URL, GLOBAL_OPTIONS, PROGRAM, commandHelp, overviewHelp, usageLine } from './help.js';
import { hintFor } from './hints.js';
import { SluiceError } from '../sdk/errors.js';
import type { Io, Output } from './io.js';

export const EXIT_OK = 0;
export const EXIT_API_ERROR = 1;
export const EXIT_USAGE = 2;

export const COMMANDS: readonly CommandSpec[] = [
  ...topicCommands,
  produce,
  consume,
  ...groupCommands,
  ...connectCommands,
  ...streamsCommands,
  ...transactionCommands,
  offsets,
  configs,
  top,
  cluster,
  health,
  gatewayToken,
  gateway,
];

/** Global options that take a value, so the command words can be found before the command is known. */
const VALUE_OPTIONS = new Set(['--url', '--bootstrap-server', '--region', '--profile']);
const FLAG_OPTIONS = new Set(['--json', '--quiet', '-q', '--help', '-h']);

/** The words before the first command option: `topics create` in `--url U topics create t --partitions 3`. */
export const commandWords = (argv: readonly string[]): string[] => {
  const words: string[] = [];
  for (let i = 0; i < argv.length && words.length < 2; i++) {
    const arg = argv[i]!;
    if (VALUE_OPTIONS.has(arg)) i++;
    else if (FLAG_OPTIONS.has(arg) || [...VALUE_OPTIONS].some((o) => arg.startsWith(`${o}=`))) continue;
    else if (arg.startsWith('-')) break;
    else words.push(arg);
  }
  return words;
};

const isGlobalOption = (arg: string): boolean =>
  VALUE_OPTIONS.has(arg) || FLAG_OPTIONS.has(arg) || [...VALUE_OPTIONS].some((o) => arg.startsWith(`${o}=`));

const isGroup = (word: string | undefined): boolean =>
  word !== undefined && COMMANDS.some((c) => c.words.length > 1 && c.words[0] === word);

/** The command the words name, if any. */
export const findCommand = (words: readonly string[]): CommandSpec | undefined =>
  COMMANDS.find((c) => c.words.every((w, i) => words[i] === w));

export async function run(argv: readonly string[], io: Io): Promise<number> {
  const wantsJson = argv.includes('--json');
  const wantsHelp = argv.includes('--help') || argv.includes('-h');
  const words = commandWords(argv);
  let spec: CommandSpec | undefined;
  let url = DEFAULT_URL;
  try {
    if (words[0] === 'help') return await printHelp(io.stdout, argv.slice(argv.indexOf('help') + 1));
    spec = findCommand(words);
    if (!spec) {
      if (wantsHelp && (words.length === 0 || (isGroup(words[0]) && words.length === 1))) {
        await io.stdout.write(`${overviewHelp(COMMANDS, words[0])}\n`);
        return EXIT_OK;
      }
      throw unknownCommand(words, argv);
    }
    const options = { ...GLOBAL_OPTIONS, ...spec.options };
    const parsed = parseOptions(argv, options, spec);
    if (parsed.values['help'] === true) {
      await io.stdout.write(`${commandHelp(spec)}\n`);
      return EXIT_OK;
    }
    const args = parsed.positionals.slice(spec.words.length);
    checkArguments(spec, args);
    url =
      stringValue(parsed.values['url']) ??
      stringValue(parsed.values['bootstrap-server']) ??
      io.env?.['SLUICE_URL'] ??
      (await localStackUrl(io.env ?? {})) ??
      DEFAULT_URL;
    checkUrl(url, spec);
    const signing = signingFor(url, parsed.values, io.env ?? {}, spec);
    const ctx = createContext(
      io,
      url,
      parsed.values['json'] === true,
      parsed.values['quiet'] === true,
      signing,
    );
    try {
      return (await spec.run(ctx, { args, values: parsed.values })) ?? EXIT_OK;
    } catch (error) {
      await suggestTopic(error, ctx, spec, args);
      throw error;
    }
  } catch (error) {
    return report(error, io.stderr, { json: wantsJson, url, spec, words });
  }
}

/** An unknown topic named as the command's argument: the nearest existing one goes into the hint. */
const suggestTopic = async (
  error: unknown,
  ctx: Context,
  spec: CommandSpec,
  args: string[],
): Promise<void> => {
  const topic = args[0];
  if (!(error instanceof SluiceError) || error.code !== 'UNKNOWN_TOPIC_OR_PARTITION') return;
  if (spec.args[0]?.name !== 'topic' || topic === undefined) return;
  const topics = await ctx.api.listTopics().catch(() => []);
  const near = didYouMean(
    topic,
    topics.map((t) => t.name),
  );
  if (near) error.details['didYouMean'] = near;
};

const createContext = (
  io: Io,
  url: string,
  json: boolean,
  quiet: boolean,
  signing: { region: string; profile?: string } | undefined,
): Context => ({
  api: new SluiceApi({
    url,
    ...(io.fetch ? { fetch: io.fetch } : {}),
    ...(signing ? { signing } : {}),
    ...(io.sleep ? { sleep: io.sleep } : {}),
  }),
  json,
  quiet,
  stdout: io.stdout,
  stderr: io.stderr,
  ...(io.stdin ? { stdin: io.stdin } : {}),
  stdinIsTTY: io.stdinIsTTY === true,
  signal: io.signal ?? new AbortController().signal,
  env: io.env ?? {},
  now: io.now ?? (() => performance.now()),
  print: (text) => io.stdout.write(`${text}\n`),
  note: (text) => {
    if (!quiet) void io.stderr.write(`${text}\n`);
  },
});

const parseOptions = (
  argv: readonly string[],
  options: CommandSpec['options'],
  spec: CommandSpec,
): ReturnType<typeof parseArgs> => {
  try {
    return parseArgs({
      args: joinNegativeValues(argv, options),
      // parseArgs only needs type, short and multiple; descriptions stay in the specs.
      options: Object.fromEntries(
        Object.entries(options).map(([name, o]) => [
          name,
          { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) },
        ]),
      ),
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    // Node's messages end with advice about `--` that does not apply here; the first sentence says it.
    let message =
      error instanceof Error ? (error.message.split(/(?<=\.) /)[0] ?? error.message) : String(error);
    const unknown = /^Unknown option '--([^']+)'/.exec(message)?.[1];
    const near = unknown === undefined ? undefined : didYouMean(unknown, Object.keys(options));
    if (near) message = `${message.replace(/\.$/, '')} (did you mean --${near}?)`;
    throw new UsageError(message, spec);
  }
};

/** `--shift-by -6`: a negative number after an option that takes a value is its value, not a flag. */
const joinNegativeValues = (argv: readonly string[], options: CommandSpec['options']): string[] => {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    if (
      arg.startsWith('--') &&
      options[arg.slice(2)]?.type === 'string' &&
      next !== undefined &&
      /^-\d+$/.test(next)
    ) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
};

const checkArguments = (spec: CommandSpec, args: readonly string[]): void => {
  const missing = spec.args.filter((a, i) => a.required && args[i] === undefined);
  if (missing.length > 0) {
    throw new UsageError(`missing ${missing.map((a) => `<${a.name}>`).join(' ')}`, spec);
  }
  if (args.length > spec.args.length) {
    throw new UsageError(`unexpected argument ${JSON.stringify(args[spec.args.length])}`, spec);
  }
};

const checkUrl = (url: string, spec: CommandSpec): void => {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new UsageError(`--url must be an http(s) URL, got ${JSON.stringify(url)}`, spec);
  }
};

const stringValue = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

const unknownCommand = (words: readonly string[], argv: readonly string[]): UsageError => {
  if (words.length === 0) {
    // An option before any command word that is not a global one: a typo of one, most likely.
    const flag = argv.find((a) => a.startsWith('-') && !isGlobalOption(a));
    if (flag === undefined) return new UsageError('no command given');
    const name = flag.replace(/^-+/, '').split('=')[0]!;
    const near = didYouMean(name, Object.keys(GLOBAL_OPTIONS));
    return new UsageError(
      `Unknown option '${flag.split('=')[0]}'${near ? ` (did you mean --${near}?)` : ''}; before the command only --${Object.keys(GLOBAL_OPTIONS).join(', --')} may come`,
    );
  }
  if (isGroup(words[0])) {
    const subcommands = COMMANDS.filter((c) => c.words[0] === words[0]).map((c) => c.words[1]);
    return new UsageError(
      words[1] === undefined
        ? `${words[0]} needs a command: ${subcommands.join(', ')}`
        : `unknown command "${words[0]} ${words[1]}"; ${didYouMeanText(words[1], subcommands)}${words[0]} has ${subcommands.join(', ')}`,
    );
  }
  const near = didYouMean(words[0]!, new Set(COMMANDS.map((c) => c.words[0]!)));
  return new UsageError(`unknown command "${words[0]}"${near ? `; did you mean "${near}"?` : ''}`);
};

const didYouMeanText = (word: string, known: readonly (string | undefined)[]): string => {
  const near = didYouMean(
    word,
    known.filter((k): k is string => k !== undefined),
  );
  return near ? `did you mean "${near}"? ` : '';
};

const printHelp = async (out: Output, rest: readonly string[]): Promise<number> => {
  const spec = findCommand(rest);
  const text = spec ? commandHelp(spec) : overviewHelp(COMMANDS, isGroup(rest[0]) ? rest[0] : undefined);
  await out.write(`${text}\n`);
  return EXIT_OK;
};

/** Prints the error (JSON under --json) with a hint, and returns the exit code. */
const report = async (
  error: unknown,
  stderr: Output,
  {
    json,
    url,
    spec,
    words,
  }: { json: boolean; url: string; spec: CommandSpec | undefined; words: readonly string[] },
): Promise<number> => {
  if (error instanceof UsageError) {
    const command = error.command ?? spec;
    if (!command && !json && words.length === 0 && error.message === 'no command given') {
      await stderr.write(`${overviewHelp(COMMANDS)}\n`);
      return EXIT_USAGE;
    }
    const prefix = !command && isGroup(words[0]) ? `${words[0]} ` : '';
    const usage = command
      ? `usage: ${usageLine(command)}`
      : `usage: ${PROGRAM} ${prefix}<command> [arguments] [options]`;
    const more = command ? `${PROGRAM} ${commandName(command)} --help` : `${PROGRAM} ${prefix}--help`;
    await stderr.write(
      json
        ? `${JSON.stringify({ error: { code: 'USAGE', message: error.message, usage } })}\n`
        : `error: ${error.message}\n${usage}\nrun \`${more}\` for more.\n`,
    );
    return EXIT_USAGE;
  }
  if (error instanceof SluiceError) {
    const hint = hintFor(error, url);
    const { code, message, retriable, status } = error;
    if (json) {
      await stderr.write(
        `${JSON.stringify({ error: { code, message, retriable, status, ...(hint ? { hint } : {}) } })}\n`,
      );
    } else {
      const where = status > 0 ? ` (HTTP ${status})` : '';
      await stderr.write(`error: ${code}${where}: ${message}\n${hint ? `hint: ${hint}\n` : ''}`);
    }
    return EXIT_API_ERROR;
  }
  // A bug in the command line itself: show everything there is.
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  await stderr.write(`error: ${detail}\n`);
  return EXIT_API_ERROR;
};

/** An Output over a Node stream that waits when the stream is full and ignores a closed pipe (`| head`). */
const streamOutput = (stream: NodeJS.WriteStream, onClosed: () => void): Output => {
  let closed = false;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    closed = true;
    onClosed();
  });
  return {
    isTTY: stream.isTTY === true,
    size: () => (stream.isTTY ? { columns: stream.columns, rows: stream.rows } : undefined),
    write(text) {
      if (closed || stream.write(text)) return;
      return new Promise<void>((resolve) => {
        const done = (): void => {
          stream.off('drain', done).off('close', done).off('error', done);
          resolve();
        };
        stream.on('drain', done).on('close', done).on('error', done);
      });
    },
  };
};

/** Interrupts closer together than this are one Ctrl-C relayed by several processes. */
const SECOND_INTERRUPT_MS = 1_000;

/** The `sluice` command: runs `run` over this process's streams, environment and signals. */
export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  const interrupt = new AbortController();
  let firstInterrupt: number | undefined;
  process.on('SIGINT', () => {
    // The first Ctrl-C stops cleanly (commit, leave the group); a second one does not wait. One
    // Ctrl-C can arrive several times at once: the terminal signals the whole process group, and
    // `npm run` and tsx relay it to their child as well, so copies within a second count as one.
    const now = performance.now();
    if (firstInterrupt !== undefined && now - firstInterrupt > SECOND_INTERRUPT_MS) process.exit(130);
    firstInterrupt ??= now;
    interrupt.abort();
  });
  // A service manager's stop: long-running commands (streams run, consume) stop cleanly as on Ctrl-C.
  process.on('SIGTERM', () => interrupt.abort());
  const code = await run(argv, {
    stdout: streamOutput(process.stdout, () => interrupt.abort()),
    stderr: streamOutput(process.stderr, () => {}),
    stdin: process.stdin,
    stdinIsTTY: process.stdin.isTTY === true,
    env: process.env,
    signal: interrupt.signal,
  });
  process.exitCode = code;
  // An unread or interactive stdin would keep the process alive.
  process.stdin.destroy();
}

const isMain = (): boolean => {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
};

if (isMain()) await main();
