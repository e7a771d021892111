/**
 * Signs test requests with the AWS SDK's own SigV4 signer (@smithy/signature-v4), as the SDK and any
 * AWS client sign for API Gateway (service execute-api), so the gateway's verifier is tested against
 * real signatures rather than against its own arithmetic.
 */
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '../../local/auth/sigv4.js';

export interface TestKey {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface ToSign {
  method: string;
  /** Absolute URL, e.g. http://127.0.0.1:1234/v1/topics?x=1 */
  url: string;
  headers?: Record<string, string>;
  body?: Uint8Array | string;
  key: TestKey;
  region?: string;
  signingDate?: Date;
  /** The path exactly as it goes on the wire (a URL would resolve `..` and `\\`); default the URL's. */
  rawPath?: string;
}

/** The headers to send: the caller's own plus host, x-amz-date and Authorization. */
export const signHeaders = async (request: ToSign): Promise<Record<string, string>> => {
  const url = new URL(request.url);
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of url.searchParams) {
    const seen = query[name];
    query[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  const signer = new SignatureV4({
    service: 'execute-api',
    region: request.region ?? 'us-east-1',
    credentials: request.key,
    sha256: Sha256,
    applyChecksum: false,
  });
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: request.rawPath ?? url.pathname,
      query,
      headers: { host: url.host, ...(request.headers ?? {}) },
      ...(request.body !== undefined ? { body: request.body } : {}),
    },
    request.signingDate ? { signingDate: request.signingDate } : {},
  );
  return signed.headers;
};
