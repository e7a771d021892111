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
import { presignedWhoami } from '../../gateway/sasl.js';
import { kafkaToken } from '../../sdk/kafka-token.js';

/** 127.0.0.0/8, ::1 and localhost: only this machine can connect. */
const isLoopback = (host: string): boolean =>
  /^127\.\d+\.\d+\.\d+$/.test(host) || host === '::1' || host === '[::1]' || host === 'localhost';

/** `sluice gateway token`: the SASL/OAUTHBEARER token for a Kafka client of a Sluice Kafka gateway. */
export const gatewayToken: CommandSpec = {
  words: ['gateway', 'token'],
  summary: 'Print a SASL/OAUTHBEARER token proving your AWS identity to a Sluice Kafka gateway.',
  args: [],
  options: {
    'expires-in': {
      type: 'string',
      valueName: 'SECONDS',
      description: 'how long the token is valid, 1-900 (default 900); the Kafka session lasts as long',
    },
  },
  examples: [
    'sluice gateway token --url https://abc123.execute-api.eu-west-1.amazonaws.com',
    'sluice gateway token --url http://127.0.0.1:8787 --region us-east-1 --json',
  ],
  async run(ctx, { values }) {
    const signing = signingFor(ctx.api.url, values, ctx.env, gatewayToken);
    if (!signing)
      throw new UsageError(
        'a token is a signed request: pass --region (or --profile), or use an execute-api URL',
        gatewayToken,
      );
    const raw = typeof values['expires-in'] === 'string' ? values['expires-in'] : '900';
    const expiresInSeconds = Number(raw);
    if (!/^\d+$/.test(raw) || expiresInSeconds < 1 || expiresInSeconds > 900)
      throw new UsageError(`--expires-in must be 1 to 900 seconds, not "${raw}"`, gatewayToken);
    const token = await kafkaToken({ url: ctx.api.url, ...signing, expiresInSeconds });
    if (ctx.json) await ctx.print(JSON.stringify({ token: token.value, expiresAt: token.expiresAt }));
    else await ctx.print(token.value);
  },
};

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
    'require-sasl': {
      type: 'boolean',
      description:
        'refuse clients that do not authenticate with SASL/OAUTHBEARER (always so on a non-loopback address)',
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
    // On loopback the sidecar serves its application with its own credentials; anywhere else each
    // connection must prove a principal (SASL/OAUTHBEARER) and is served as that principal.
    const required = values['require-sasl'] === true || !isLoopback(listen.host);
    const server = new KafkaGateway({
      sluice: { url: ctx.api.url, fetch: signing ? sigV4Fetch({ ...signing, fetch: base }) : base },
      sasl: { required, authenticator: presignedWhoami({ url: ctx.api.url, fetch: base }) },
      host: listen.host,
      port: listen.port,
      ...(advertise ? { advertisedHost: advertise.host, advertisedPort: advertise.port } : {}),
      log: (line) => ctx.note(`sluice gateway: ${line}`),
    });
    await server.listen();
    const where = server.listening;
    ctx.note(
      `sluice gateway: Kafka protocol on ${where.host}:${where.port} (advertised as ${server.bootstrap}) for ${ctx.api.url}${signing ? `, signing for ${signing.region}` : ''}; SASL/OAUTHBEARER ${required ? 'required' : 'optional'} (tokens: sluice gateway token)`,
    );
    if (ctx.json) await ctx.print(JSON.stringify({ bootstrap: server.bootstrap, url: ctx.api.url }));
    else await ctx.print(`bootstrap.servers=${server.bootstrap}`);
    await new Promise<void>((resolve) =>
      ctx.signal.aborted ? resolve() : ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    await server.close();
  },
};
