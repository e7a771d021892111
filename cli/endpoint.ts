/**
 * Where the command line sends requests and how it signs them: the URL from the flags, SLUICE_URL, or
 * the local stack's state file ($SLUICE_DATA_DIR/stack.json, written by `npm start`, so a stack on
 * another PORT is found); SigV4 with --profile or --region (credentials from the profile, AWS_PROFILE or the environment), and always for an API Gateway
 * URL (`*.execute-api.{region}.amazonaws.com` only takes signed requests). A custom domain in front
 * of API Gateway needs --region.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { CommandSpec, Values } from './command.js';
import { UsageError } from './command.js';
import { fieldOf } from './json-input.js';

type Env = Record<string, string | undefined>;

/** What the CLI reads of the local stack's state file. */
interface StackFile {
  url?: string;
  table?: { name: string; endpoint: string };
}

/** The running local stack's state file ($SLUICE_DATA_DIR/stack.json), if there is one; what it lacks or holds wrongly is left out. */
const readStackFile = async (env: Env, cwd: string): Promise<StackFile | undefined> => {
  const file = join(resolve(cwd, env['SLUICE_DATA_DIR'] ?? '.sluice'), 'stack.json');
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return undefined;
  }
  const url = fieldOf(parsed, 'url');
  const table = fieldOf(parsed, 'table');
  const name = fieldOf(table, 'name');
  const endpoint = fieldOf(table, 'endpoint');
  return {
    ...(typeof url === 'string' ? { url } : {}),
    ...(typeof name === 'string' && typeof endpoint === 'string' ? { table: { name, endpoint } } : {}),
  };
};

/** The running local stack's URL from its state file, if there is one. */
export const localStackUrl = async (env: Env, cwd = process.cwd()): Promise<string | undefined> =>
  (await readStackFile(env, cwd))?.url;

/** The running local stack's metadata table (name and DynamoDB endpoint), if there is one. */
export const localStackTable = async (
  env: Env,
  cwd = process.cwd(),
): Promise<{ name: string; endpoint: string } | undefined> => (await readStackFile(env, cwd))?.table;

/** `https://{id}.execute-api.{region}.amazonaws.com`: the region is in the host. */
const EXECUTE_API = /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com$/;

/** Whether and how to sign requests to `url`; undefined sends them unsigned. */
export const signingFor = (
  url: string,
  values: Values,
  env: Env,
  command?: CommandSpec,
): { region: string; profile?: string } | undefined => {
  const host = new URL(url).hostname;
  const flagRegion = typeof values['region'] === 'string' ? values['region'] : undefined;
  const profile =
    (typeof values['profile'] === 'string' ? values['profile'] : undefined) ?? env['AWS_PROFILE'];
  // AWS_PROFILE alone chooses the credentials, not whether to sign: it is often set for other tools.
  const wanted = flagRegion !== undefined || values['profile'] !== undefined || EXECUTE_API.test(host);
  if (!wanted) return undefined;
  const region = flagRegion ?? EXECUTE_API.exec(host)?.[1] ?? env['AWS_REGION'] ?? env['AWS_DEFAULT_REGION'];
  if (region === undefined) {
    throw new UsageError(
      `signing requests to ${host} needs a region: pass --region or set AWS_REGION`,
      command,
    );
  }
  return { region, ...(profile === undefined ? {} : { profile }) };
};
