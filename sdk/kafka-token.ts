/**
 * The token a Kafka client sends to Sluice's Kafka gateway with SASL/OAUTHBEARER: a SigV4-presigned
 * `GET /v1/whoami` on the Sluice API, base64url-encoded (the scheme EKS uses with STS
 * GetCallerIdentity, pointed at Sluice). The gateway calls it once to learn who signed it, then acts
 * as that principal. Give it to kafkajs's `oauthBearerProvider` or librdkafka's token refresh callback.
 */
import type { SigV4Options } from './sigv4.js';
import { createSigner } from './sigv4.js';

export interface KafkaTokenOptions extends Omit<SigV4Options, 'fetch' | 'service'> {
  /** The Sluice API the gateway serves (its `--url`), e.g. `https://abc123.execute-api.eu-west-1.amazonaws.com`. */
  url: string;
  /** How long the token proves the principal (1-900 s, default 900); the session lasts as long. */
  expiresInSeconds?: number;
}

export interface KafkaToken {
  /** The bearer token (kafkajs: `{ value }`). */
  value: string;
  /** Epoch ms when it expires: the connection re-authenticates before (librdkafka: `expiry` in s). */
  expiresAt: number;
}

/** RFC 3986 encoding, as SigV4 canonicalizes query values. */
const escape = (value: string): string =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export const kafkaToken = async (options: KafkaTokenOptions): Promise<KafkaToken> => {
  const expiresIn = options.expiresInSeconds ?? 900;
  if (!Number.isInteger(expiresIn) || expiresIn < 1 || expiresIn > 900)
    throw new RangeError('expiresInSeconds must be an integer from 1 to 900');
  const base = new URL(options.url);
  const path = `${base.pathname.replace(/\/+$/, '')}/v1/whoami`;
  const signingDate = options.now?.() ?? new Date();
  const signed = await createSigner(options).presign(
    {
      method: 'GET',
      protocol: base.protocol,
      hostname: base.hostname,
      ...(base.port ? { port: Number(base.port) } : {}),
      path,
      query: {},
      headers: { host: base.host },
    },
    { expiresIn, signingDate },
  );
  const query = Object.entries(signed.query ?? {})
    .flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((one) => `${escape(k)}=${escape(String(one))}`))
    .join('&');
  const url = `${base.origin}${path}?${query}`;
  return {
    value: Buffer.from(url, 'utf8').toString('base64url'),
    // X-Amz-Date has whole seconds: the expiry the gateway computes from it.
    expiresAt: Math.floor(signingDate.getTime() / 1000) * 1000 + expiresIn * 1000,
  };
};
