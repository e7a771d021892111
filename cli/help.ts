/** Help texts, generated from the command specs so they cannot drift from what is parsed. */
import type { CommandSpec, OptionSpec } from './command.js';
import { commandName } from './command.js';

export const PROGRAM = 'sluice';

export const DEFAULT_URL = 'http://127.0.0.1:8787';

export const GLOBAL_OPTIONS = {
  url: {
    type: 'string',
    valueName: 'URL',
    description: `API base URL (default $SLUICE_URL, else the local stack's, else ${DEFAULT_URL})`,
  },
  'bootstrap-server': { type: 'string', valueName: 'URL', description: "Kafka's name for --url" },
  region: {
    type: 'string',
    valueName: 'R',
    description: 'sign requests with SigV4 for this region (default $AWS_REGION when signing)',
  },
  profile: {
    type: 'string',
    valueName: 'P',
    description: 'sign requests with this AWS profile (default $AWS_PROFILE)',
  },
  json: { type: 'boolean', description: 'machine output: JSON on stdout, one value per line' },
  quiet: { type: 'boolean', short: 'q', description: 'no progress or status lines on stderr' },
  help: { type: 'boolean', short: 'h', description: 'show help' },
} as const satisfies Record<string, OptionSpec>;

export const usageLine = (spec: CommandSpec): string => {
  const args = spec.args.map((a) => (a.required ? `<${a.name}>` : `[<${a.name}>]`));
  return [PROGRAM, ...spec.words, ...args, '[options]'].join(' ');
};

const optionLabel = (name: string, option: OptionSpec): string => {
  const long = `--${name}${option.type === 'string' ? ` ${option.valueName ?? 'VALUE'}` : ''}`;
  return option.short ? `-${option.short}, ${long}` : `    ${long}`;
};

const optionLines = (options: Readonly<Record<string, OptionSpec>>): string[] => {
  const entries = Object.entries(options).map(
    ([name, option]) =>
      [optionLabel(name, option), option.description + (option.multiple ? ' (repeatable)' : '')] as const,
  );
  const width = Math.max(...entries.map(([label]) => label.length));
  return entries.map(([label, description]) => `  ${label.padEnd(width)}  ${description}`);
};

export const commandHelp = (spec: CommandSpec): string => {
  const lines = [`${spec.summary}`, '', `Usage: ${usageLine(spec)}`];
  if (spec.args.length > 0) {
    const width = Math.max(...spec.args.map((a) => a.name.length + 2));
    lines.push('', 'Arguments:');
    for (const arg of spec.args) lines.push(`  ${`<${arg.name}>`.padEnd(width)}  ${arg.description}`);
  }
  if (Object.keys(spec.options).length > 0) lines.push('', 'Options:', ...optionLines(spec.options));
  lines.push('', 'Global options:', ...optionLines(GLOBAL_OPTIONS));
  if (spec.examples && spec.examples.length > 0) {
    lines.push('', 'Examples:', ...spec.examples.map((e) => `  ${e}`));
  }
  return lines.join('\n');
};

/** The command list: everything, or the subcommands under `prefix` (e.g. `topics`). */
export const overviewHelp = (commands: readonly CommandSpec[], prefix?: string): string => {
  const shown = prefix === undefined ? commands : commands.filter((c) => c.words[0] === prefix);
  const width = Math.max(...shown.map((c) => commandName(c).length));
  const title =
    prefix === undefined
      ? `${PROGRAM}: Kafka's command line tools for Sluice, over its HTTP API.`
      : `${PROGRAM} ${prefix}: ${shown.length} commands.`;
  return [
    title,
    '',
    `Usage: ${PROGRAM} ${prefix ?? '<command>'}${prefix === undefined ? '' : ' <command>'} [arguments] [options]`,
    '',
    'Commands:',
    ...shown.map((c) => `  ${commandName(c).padEnd(width)}  ${c.summary}`),
    '',
    'Global options:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    `Run \`${PROGRAM} <command> --help\` for a command's arguments and options.`,
  ].join('\n');
};
