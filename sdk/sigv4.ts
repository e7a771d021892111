/**
 * SigV4 signing for a deployed Sluice (API Gateway with IAM authorization, service `execute-api`): a
 * fetch that signs every request with the AWS SDK's own signer before sending it. Credentials are
 * passed in, or come from the AWS SDK's default chain (environment, shared config and SSO profiles,
 * web identity, container and instance metadata), loaded only when first needed.
 */
import { createHash, createHmac } from 'node:crypto';
import type { Checksum, SourceData } from '@smithy/types';
import { SignatureV4 } from '@smithy/signature-v4';
import type { FetchLike } from './transport.js';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}

export type AwsCredentialsProvider = () => Promise<AwsCredentials>;

export interface SigV4Options {
  /** The API's region, e.g. `eu-west-1`. */
  region: string;
  /** Default: the AWS SDK's default credential chain (with `profile`, when given). */
  credentials?: AwsCredentials | AwsCredentialsProvider;
  /** A named profile of ~/.aws/config for the default chain (otherwise AWS_PROFILE, else `default`). */
  profile?: string;
  /** Default `execute-api` (API Gateway). */
  service?: string;
  /** The fetch that sends the signed request (default the global one). */
  fetch?: FetchLike;
  /** The signing time (tests); default now. */
  now?: () => Date;
}

/** SHA-256 and HMAC-SHA-256 over node:crypto, in the shape the signer takes (a one-shot digest). */
class NodeSha256 implements Checksum {
  private hash;

  constructor(private readonly secret?: SourceData) {
    this.hash = this.start();
  }

  update(data: Uint8Array): void {
    this.hash.update(toBytes(data));
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }

  reset(): void {
    this.hash = this.start();
  }

  private start() {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', toBytes(this.secret));
  }
}

const toBytes = (data: SourceData): Uint8Array =>
  typeof data === 'string'
    ? Buffer.from(data, 'utf8')
    : data instanceof ArrayBuffer
      ? new Uint8Array(data)
      : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);

/** The default credential chain, imported on first use so unsigned clients never load it. */
const defaultChain = (profile: string | undefined): AwsCredentialsProvider => {
  let provider: Promise<AwsCredentialsProvider> | undefined;
  return async () => {
    provider ??= import('@aws-sdk/credential-provider-node').then(({ defaultProvider }) =>
      defaultProvider(profile === undefined ? {} : { profile }),
    );
    return (await provider)();
  };
};

/** The signer for these options (exposed for tests and for callers that sign requests themselves). */
export const createSigner = (options: SigV4Options): SignatureV4 =>
  new SignatureV4({
    service: options.service ?? 'execute-api',
    region: options.region,
    credentials: options.credentials ?? defaultChain(options.profile),
    sha256: NodeSha256,
    // API Gateway, like every AWS service but S3, signs the path URI-encoded twice (the signer
    // encodes the already-encoded path once more), and needs no x-amz-content-sha256 header.
    uriEscapePath: true,
    applyChecksum: false,
  });

/** A fetch that signs each request with SigV4, then sends it with `options.fetch`. */
export const sigV4Fetch = (options: SigV4Options): FetchLike => {
  const signer = createSigner(options);
  const send = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  return async (input, init) => {
    const url = new URL(input);
    const headers = headerRecord(init.headers);
    headers['host'] = url.host;
    const query: Record<string, string | string[]> = {};
    for (const [k, v] of url.searchParams) {
      const seen = query[k];
      query[k] = seen === undefined ? v : [...(Array.isArray(seen) ? seen : [seen]), v];
    }
    const signed = await signer.sign(
      {
        method: init.method ?? 'GET',
        protocol: url.protocol,
        hostname: url.hostname,
        ...(url.port ? { port: Number(url.port) } : {}),
        path: url.pathname,
        query,
        headers,
        body: init.body ?? undefined,
      },
      options.now ? { signingDate: options.now() } : {},
    );
    // fetch sets Host itself from the URL (the same value that was signed).
    const { host: _host, ...sent } = signed.headers;
    return send(input, { ...init, headers: sent });
  };
};

/**
 * The SigV4 headers of a GET of `url` (a WebSocket's upgrade request, signed as its https:// twin, as
 * API Gateway's IAM authorizer checks `$connect`).
 */
export const signedHeaders = (
  options: Omit<SigV4Options, 'fetch'>,
): ((url: string) => Promise<Record<string, string>>) => {
  let captured: Record<string, string> = {};
  const capture = sigV4Fetch({
    ...options,
    fetch: (_input, init) => {
      captured = headerRecord(init.headers);
      return Promise.resolve(new Response(null, { status: 204 }));
    },
  });
  return async (url) => {
    await capture(url.replace(/^ws(s?):/, 'http$1:'), { method: 'GET' });
    return captured;
  };
};

const headerRecord = (headers: RequestInit['headers']): Record<string, string> => {
  const out: Record<string, string> = {};
  if (headers === undefined) return out;
  const entries =
    headers instanceof Headers ? [...headers] : Array.isArray(headers) ? headers : Object.entries(headers);
  for (const [k, v] of entries) if (k !== undefined && v !== undefined) out[k.toLowerCase()] = String(v);
  return out;
};
