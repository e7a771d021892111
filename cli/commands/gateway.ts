/**
 * `sluice gateway --listen HOST:PORT`: the Kafka gateway as a sidecar. Kafka clients connect to it;
 * it serves them from the Sluice at --url (a deployed one is signed for with SigV4 and the default
 * AWS credential chain, like every other command), keeping Sluice per-request and scale-to-zero.
 */
import { nodeHttpFetch } from '../../sdk/node-http.js';
import { sigV4Fetch } from '../../sdk/sigv4.js';
import { KafkaGateway } from '../../gateway/server.js';
import type { CommandSpec } from '../command.js';
import { UsageError } from '../command.js';
import { signingFor } from '../endpoint.js';

const hostPort = (value: string, option: string, spec: CommandSpec): { host: string; port: number } => {
  const match = /^(.+):(\d{1,5})$/.exec(value);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65535) throw new UsageError(`--${option} must be HOST:PORT, not "${value}"`, spec);
  return { host: match[1]!, port };
};

export const gateway: CommandSpec = {
  words: ['gateway'],
  summary: 'Serve the Kafka protocol for this Sluice (a sidecar for Kafka clients).',
  args: [],
  options: {
    listen: {
      type: 'string',
      valueName: 'HOST:PORT',
      description: 'where to listen (default 127.0.0.1:9092; port 0 picks one)',
    },
    advertise: {
      type: 'string',
      valueName: 'HOST:PORT',
      description:
        'the address clients are told to connect to (advertised.listeners; default the listen address)',
    },
  },
  examples: [
    'sluice gateway --listen 127.0.0.1:9092',
    'sluice gateway --listen 127.0.0.1:9092 --url https://abc123.execute-api.eu-west-1.amazonaws.com',
  ],
  async run(ctx, { values }) {
    const listen = hostPort(
      typeof values['listen'] === 'string' ? values['listen'] : '127.0.0.1:9092',
      'listen',
      gateway,
    );
    const advertise =
      typeof values['advertise'] === 'string'
        ? hostPort(values['advertise'], 'advertise', gateway)
        : undefined;
    const signing = signingFor(ctx.api.url, values, ctx.env, gateway);
    const base = nodeHttpFetch({ maxSockets: 256 });
    const server = new KafkaGateway({
      sluice: { url: ctx.api.url, fetch: signing ? sigV4Fetch({ ...signing, fetch: base }) : base },
      host: listen.host,
      port: listen.port,
      ...(advertise ? { advertisedHost: advertise.host, advertisedPort: advertise.port } : {}),
      log: (line) => ctx.note(`sluice gateway: ${line}`),
    });
    await server.listen();
    const where = server.listening;
    ctx.note(
      `sluice gateway: Kafka protocol on ${where.host}:${where.port} (advertised as ${server.bootstrap}) for ${ctx.api.url}${signing ? `, signing for ${signing.region}` : ''}`,
    );
    if (ctx.json) await ctx.print(JSON.stringify({ bootstrap: server.bootstrap, url: ctx.api.url }));
    else await ctx.print(`bootstrap.servers=${server.bootstrap}`);
    await new Promise<void>((resolve) =>
      ctx.signal.aborted ? resolve() : ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    await server.close();
  },
};
