/**
 * SigV4 verification for the local gateway, as API Gateway's AWS_IAM authorizer does it: the
 * Authorization header's credential scope must be today's (the request's) date, this region and
 * `execute-api`; X-Amz-Date within 15 minutes of now; and the signature must be the one the AWS SDK's
 * own signer (@smithy/signature-v4) computes for the signed headers, path, query and body with the
 * caller's secret key. A presigned URL (the signature in the query, as the Kafka gateway's OAUTHBEARER
 * token carries one) is held to the same rules, and to its own X-Amz-Expires. A replay inside the window passes, as on AWS (Idempotency-Keys and producer
 * sequences make that harmless); outside it, it is refused.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { SluiceError } from '../../protocol/errors.js';
import type { LocalCredential } from './files.js';

/** AWS refuses a signature whose X-Amz-Date is more than 15 minutes from its clock. */
export const SIGNATURE_WINDOW_MS = 15 * 60 * 1000;
export const SERVICE = 'execute-api';

export interface SignedRequest {
  method: string;
  /** The request target's path exactly as received (still percent-encoded). */
  rawPath: string;
  rawQuery: string;
  /** Lower-cased names. */
  headers: Readonly<Record<string, string>>;
  body: Uint8Array;
}

export interface VerifyOptions {
  region: string;
  now: number;
  credential: (accessKeyId: string) => LocalCredential | undefined;
}

/** The SHA-256 the signer needs, over node:crypto (the same shape as @smithy/types' Checksum). */
type Source = string | ArrayBuffer | ArrayBufferView;
const bytes = (data: Source): string | Uint8Array =>
  typeof data === 'string'
    ? data
    : ArrayBuffer.isView(data)
      ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : new Uint8Array(data);

export class Sha256 {
  private hash;
  constructor(private readonly secret?: Source) {
    this.hash = this.create();
  }
  private create() {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(this.secret));
  }
  update(data: Source): void {
    this.hash.update(bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
  reset(): void {
    this.hash = this.create();
  }
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})$/;
const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

const refuse = (reason: string): SluiceError => new SluiceError('SASL_AUTHENTICATION_FAILED', reason);

const parseAmzDate = (value: string | undefined): number => {
  const m = AMZ_DATE.exec(value ?? '');
  if (!m) throw refuse('X-Amz-Date is missing or not in the form YYYYMMDDTHHMMSSZ');
  return Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
};

const queryObject = (rawQuery: string): Record<string, string | string[]> => {
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    const seen = query[name];
    query[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return query;
};

/** Verifies the request's SigV4 signature; returns the signer's credential, or throws a 401 error. */
export const verifySigV4 = async (
  request: SignedRequest,
  options: VerifyOptions,
): Promise<LocalCredential> => {
  const { headers } = request;
  if (request.rawQuery.split('&').some((p) => p.toLowerCase().startsWith('x-amz-signature=')))
    return verifyPresigned(request, options);
  if (headers['authorization'] === undefined && /(^|&)x-amz-/i.test(request.rawQuery))
    throw refuse('a presigned URL needs X-Amz-Signature');
  const authorization = headers['authorization'];
  if (authorization === undefined) throw refuse('the request is not signed: no Authorization header (SigV4)');
  const m = AUTHORIZATION.exec(authorization);
  if (!m) throw refuse('the Authorization header is not a SigV4 (AWS4-HMAC-SHA256) signature');
  const [, accessKeyId, scopeDate, region, service, signedList, signature] = m as unknown as string[];
  const signedAt = parseAmzDate(headers['x-amz-date']);
  if (Math.abs(options.now - signedAt) > SIGNATURE_WINDOW_MS)
    throw refuse('signature expired: X-Amz-Date is more than 15 minutes from the server time');
  if (scopeDate !== headers['x-amz-date']!.slice(0, 8))
    throw refuse('the credential scope date is not the date of X-Amz-Date');
  if (region !== options.region) throw refuse(`the credential scope region must be ${options.region}`);
  if (service !== SERVICE) throw refuse(`the credential scope service must be ${SERVICE}`);
  const credential = options.credential(accessKeyId!);
  // One answer for an unknown key and a wrong signature: a caller learns nothing about which keys exist.
  const invalid = refuse('the request signature does not match (check the access key and secret)');
  if (!credential) throw invalid;

  const signed = signedList!.split(';');
  for (const name of ['host', 'x-amz-date']) {
    if (!signed.includes(name)) throw refuse(`SignedHeaders must include ${name}`);
  }
  const missing = signed.filter((name) => headers[name] === undefined);
  if (missing.length > 0) throw refuse(`signed header(s) missing from the request: ${missing.join(', ')}`);
  const token = headers['x-amz-security-token'];
  if ((credential.sessionToken ?? undefined) !== token) throw invalid;
  if (token !== undefined && !signed.includes('x-amz-security-token'))
    throw refuse('SignedHeaders must include x-amz-security-token');
  const declaredHash = headers['x-amz-content-sha256'];
  if (declaredHash !== undefined) {
    // The signer takes this header's word for the body; hold it to the bytes received.
    const actual = createHash('sha256').update(request.body).digest('hex');
    if (declaredHash !== actual) throw refuse('X-Amz-Content-Sha256 does not match the body');
  }

  const signer = new SignatureV4({
    service: SERVICE,
    region: options.region,
    credentials: {
      accessKeyId: credential.accessKeyId,
      secretAccessKey: credential.secretAccessKey,
      ...(credential.sessionToken !== undefined ? { sessionToken: credential.sessionToken } : {}),
    },
    sha256: Sha256,
    applyChecksum: false,
  });
  const host = headers['host']!;
  const expected = await signer.sign(
    {
      method: request.method,
      protocol: 'http:',
      hostname: host.replace(/:\d+$/, ''),
      path: request.rawPath,
      query: queryObject(request.rawQuery),
      headers: Object.fromEntries(signed.map((name) => [name, headers[name]!])),
      body: request.body,
    },
    { signingDate: new Date(signedAt), signableHeaders: new Set(signed) },
  );
  const computed = /Signature=([0-9a-f]{64})$/.exec(expected.headers['authorization'] ?? '')?.[1] ?? '';
  if (computed.length !== 64 || !timingSafeEqual(Buffer.from(computed), Buffer.from(signature!)))
    throw invalid;
  return credential;
};

/** SigV4's longest presigned URL: seven days. */
const MAX_PRESIGN_SECONDS = 604_800;

/**
 * A presigned request: the signature and its scope in the query (X-Amz-Algorithm, X-Amz-Credential,
 * X-Amz-Date, X-Amz-Expires, X-Amz-SignedHeaders, X-Amz-Security-Token, X-Amz-Signature). Valid from
 * X-Amz-Date (15 minutes of clock skew allowed) until X-Amz-Date + X-Amz-Expires.
 */
const verifyPresigned = async (request: SignedRequest, options: VerifyOptions): Promise<LocalCredential> => {
  if (request.headers['authorization'] !== undefined)
    throw refuse('sign either the Authorization header or the query, not both');
  const params = new URLSearchParams(request.rawQuery);
  const one = (name: string): string => {
    const values = params.getAll(name);
    if (values.length !== 1) throw refuse(`a presigned URL needs exactly one ${name}`);
    return values[0]!;
  };
  if (one('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256') throw refuse('X-Amz-Algorithm must be AWS4-HMAC-SHA256');
  const scope = /^([^/\s]+)\/(\d{8})\/([^/\s]+)\/([^/\s]+)\/aws4_request$/.exec(one('X-Amz-Credential'));
  if (!scope) throw refuse('X-Amz-Credential is not KEY/DATE/REGION/SERVICE/aws4_request');
  const [, accessKeyId, scopeDate, region, service] = scope as unknown as string[];
  const amzDate = one('X-Amz-Date');
  const signedAt = parseAmzDate(amzDate);
  const expires = Number(one('X-Amz-Expires'));
  if (!Number.isInteger(expires) || expires < 1 || expires > MAX_PRESIGN_SECONDS)
    throw refuse(`X-Amz-Expires must be 1 to ${MAX_PRESIGN_SECONDS} seconds`);
  if (signedAt - options.now > SIGNATURE_WINDOW_MS) throw refuse('X-Amz-Date is in the future');
  if (options.now > signedAt + expires * 1000) throw refuse('the presigned URL has expired (X-Amz-Expires)');
  if (scopeDate !== amzDate.slice(0, 8))
    throw refuse('the credential scope date is not the date of X-Amz-Date');
  if (region !== options.region) throw refuse(`the credential scope region must be ${options.region}`);
  if (service !== SERVICE) throw refuse(`the credential scope service must be ${SERVICE}`);
  const signed = one('X-Amz-SignedHeaders').split(';');
  if (!signed.includes('host')) throw refuse('X-Amz-SignedHeaders must include host');
  const missing = signed.filter((name) => request.headers[name] === undefined);
  if (missing.length > 0) throw refuse(`signed header(s) missing from the request: ${missing.join(', ')}`);
  const signature = one('X-Amz-Signature');
  const credential = options.credential(accessKeyId!);
  const invalid = refuse('the request signature does not match (check the access key and secret)');
  if (!credential) throw invalid;
  const token = params.getAll('X-Amz-Security-Token');
  if (token.length > 1 || (credential.sessionToken ?? undefined) !== token[0]) throw invalid;

  const signer = new SignatureV4({
    service: SERVICE,
    region: options.region,
    credentials: {
      accessKeyId: credential.accessKeyId,
      secretAccessKey: credential.secretAccessKey,
      ...(credential.sessionToken !== undefined ? { sessionToken: credential.sessionToken } : {}),
    },
    sha256: Sha256,
    applyChecksum: false,
  });
  // The query the signer saw: everything but the signature (it adds the X-Amz-* fields itself).
  const query = queryObject(
    request.rawQuery
      .split('&')
      .filter((p) => !p.toLowerCase().startsWith('x-amz-signature='))
      .join('&'),
  );
  const host = request.headers['host']!;
  const expected = await signer.presign(
    {
      method: request.method,
      protocol: 'http:',
      hostname: host.replace(/:\d+$/, ''),
      path: request.rawPath,
      query,
      headers: Object.fromEntries(signed.map((name) => [name, request.headers[name]!])),
      body: request.body,
    },
    { signingDate: new Date(signedAt), expiresIn: expires, signableHeaders: new Set(signed) },
  );
  const computed = String(expected.query?.['X-Amz-Signature'] ?? '');
  if (
    computed.length !== 64 ||
    !/^[0-9a-f]{64}$/.test(signature) ||
    !timingSafeEqual(Buffer.from(computed), Buffer.from(signature))
  )
    throw invalid;
  return credential;
};
