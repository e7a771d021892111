/**
 * Where a Streams runner talks to and keeps its state: one resolution for every runner
 * (`npm run streams`, `sluice streams run`), so the same app finds the same stack either way.
 *
 * - the API URL: `bootstrap.servers` (--config), else the CLI's --url, else SLUICE_URL, else the
 *   running `npm start`'s URL ($SLUICE_DATA_DIR/stack.json), else http://127.0.0.1:8787;
 * - the state table: SLUICE_TABLE_NAME (its endpoint from the AWS SDK's own variables, e.g.
 *   AWS_ENDPOINT_URL_DYNAMODB), else the local stack's table and DynamoDB endpoint when the URL is that
 *   stack's, else `sluice`.
 */
import { localStackTable, localStackUrl } from '../../cli/endpoint.js';
import { DEFAULT_BOOTSTRAP_SERVERS } from './config.js';

type Env = Record<string, string | undefined>;

export interface RunTarget {
  url: string;
  /** Where the URL came from, for the runner's first status line. */
  urlFrom: 'bootstrap.servers' | '--url' | 'SLUICE_URL' | 'stack.json' | 'default';
  table: { name: string; endpoint?: string };
}

export const resolveRunTarget = async (o: {
  configs: Record<string, string>;
  env: Env;
  /** The CLI's --url / --bootstrap-server, when given. */
  flagUrl?: string;
  cwd?: string;
}): Promise<RunTarget> => {
  const cwd = o.cwd ?? process.cwd();
  const stackUrl = await localStackUrl(o.env, cwd);
  const [url, urlFrom]: [string, RunTarget['urlFrom']] =
    o.configs['bootstrap.servers'] !== undefined
      ? [o.configs['bootstrap.servers'], 'bootstrap.servers']
      : o.flagUrl !== undefined
        ? [o.flagUrl, '--url']
        : o.env['SLUICE_URL']
          ? [o.env['SLUICE_URL'], 'SLUICE_URL']
          : stackUrl !== undefined
            ? [stackUrl, 'stack.json']
            : [DEFAULT_BOOTSTRAP_SERVERS, 'default'];
  const named = o.env['SLUICE_TABLE_NAME'];
  if (named) return { url, urlFrom, table: { name: named } };
  if (stackUrl !== undefined && sameUrl(stackUrl, url)) {
    const local = await localStackTable(o.env, cwd);
    if (local) return { url, urlFrom, table: local };
  }
  return { url, urlFrom, table: { name: 'sluice' } };
};

const sameUrl = (a: string, b: string): boolean => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
