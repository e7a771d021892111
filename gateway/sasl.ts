/**
 * SASL/OAUTHBEARER for the Kafka gateway (docs/kafka-groups-and-auth.md): the bearer token is a
 * presigned SigV4 `GET /v1/whoami` on this gateway's own Sluice (sdk/kafka-token.ts makes one). The
 * gateway proves it by calling it: Sluice's edge (API Gateway's IAM authorizer, or the local stack's
 * SigV4 check) verifies the signature and answers the signer's principal. A token is never sent
 * anywhere but the gateway's own Sluice URL and path, never with the gateway's credentials, and proves
 * a principal only until it expires (at most MAX_TOKEN_SECONDS).
 */
import type { FetchLike } from '../sdk/transport.js';
import type { ConnectionContext, GatewayContext, SaslAuthenticator, SaslSession } from './api.js';

export const OAUTHBEARER = 'OAUTHBEARER';

/** The longest token lifetime accepted: a stolen token is worth no more than EKS's (15 minutes). */
export const MAX_TOKEN_SECONDS = 900;

/** A failed authentication: its message goes back to the client in SaslAuthenticate's errorMessage. */
export class SaslFailure extends Error {}

const SOH = '\u0001';

/**
 * RFC 7628's client initial response: `n,[a=authzid],` SOH `auth=Bearer <token>` (SOH key=value)* SOH
 * SOH. Returns the token and the authorization identity (null when empty), or throws SaslFailure.
 */
export const parseOAuthBearer = (bytes: Uint8Array): { token: string; authzid: string | null } => {
  if (bytes.length > 16_384) throw new SaslFailure('the OAUTHBEARER message is over 16 KiB');
  const text = Buffer.from(bytes).toString('utf8');
  const first = text.indexOf(SOH);
  if (first < 0 || !text.endsWith(SOH + SOH))
    throw new SaslFailure('not an OAUTHBEARER client response (RFC 7628)');
  const gs2 = /^n,(?:"?a=([^,]*))?,$/.exec(text.slice(0, first));
  if (!gs2) throw new SaslFailure('the OAUTHBEARER GS2 header must be "n,," or "n,a=<authzid>,"');
  const pairs = text.slice(first + 1, -2).split(SOH);
  let token: string | undefined;
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new SaslFailure('an OAUTHBEARER key/value pair has no key');
    if (pair.slice(0, eq) !== 'auth') continue; // extensions: none is used
    if (token !== undefined) throw new SaslFailure('the OAUTHBEARER message has two auth values');
    const m = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/.exec(pair.slice(eq + 1));
    if (!m) throw new SaslFailure('auth must be "Bearer <token>"');
    token = m[1]!;
  }
  if (token === undefined) throw new SaslFailure('the OAUTHBEARER message has no auth=Bearer token');
  return { token, authzid: gs2[1] ? gs2[1] : null };
};

/**
 * Verifies tokens by calling them on `url` (the Sluice the gateway serves): the token, base64url,
 * must be a URL on that very origin and path prefix, of `GET /v1/whoami`, presigned (X-Amz-* query
 * fields only), unexpired and living at most MAX_TOKEN_SECONDS. `fetch` must NOT sign: the
 * presigned query is the request's only credential.
 */
export const presignedWhoami = (options: {
  url: string;
  fetch: FetchLike;
  now?: () => number;
}): SaslAuthenticator => {
  const base = new URL(options.url);
  const whoamiPath = `${base.pathname.replace(/\/+$/, '')}/v1/whoami`;
  const now = options.now ?? Date.now;
  return {
    async verify(token) {
      let url: URL;
      try {
        const text = Buffer.from(token, 'base64url').toString('utf8');
        if (!/^https?:\/\//.test(text)) throw new Error('not a URL');
        url = new URL(text);
      } catch {
        throw new SaslFailure('the token is not a presigned Sluice URL, base64url-encoded');
      }
      if (url.origin !== base.origin || url.pathname !== whoamiPath || url.username || url.password)
        throw new SaslFailure(
          `the token must presign GET ${base.origin}${whoamiPath} (this gateway's Sluice)`,
        );
      const names = [...url.searchParams.keys()];
      if (names.some((n) => !n.startsWith('X-Amz-')) || new Set(names).size !== names.length)
        throw new SaslFailure(
          'the token may carry only the X-Amz-* fields of a SigV4 presigned URL, once each',
        );
      const date = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(
        url.searchParams.get('X-Amz-Date') ?? '',
      );
      const expires = Number(url.searchParams.get('X-Amz-Expires'));
      if (!date || !url.searchParams.has('X-Amz-Signature') || !Number.isInteger(expires))
        throw new SaslFailure(
          'the token is not a SigV4 presigned URL (X-Amz-Date, X-Amz-Expires, X-Amz-Signature)',
        );
      if (expires < 1 || expires > MAX_TOKEN_SECONDS)
        throw new SaslFailure(`the token's X-Amz-Expires must be 1 to ${MAX_TOKEN_SECONDS} seconds`);
      const signedAt = Date.UTC(+date[1]!, +date[2]! - 1, +date[3]!, +date[4]!, +date[5]!, +date[6]!);
      const expiresAt = signedAt + expires * 1000;
      if (expiresAt <= now()) throw new SaslFailure('the token has expired; make a new one');
      let answer: Response;
      try {
        answer = await options.fetch(`${base.origin}${whoamiPath}${url.search}`, {
          method: 'GET',
          headers: { accept: 'application/json' },
        });
      } catch {
        throw new SaslFailure('the gateway could not reach Sluice to verify the token');
      }
      const body = (await answer.json().catch(() => undefined)) as
        { principal?: unknown; error?: { code?: unknown } } | undefined;
      if (answer.status !== 200 || typeof body?.principal !== 'string') {
        const code = typeof body?.error?.code === 'string' ? body.error.code : `HTTP ${answer.status}`;
        throw new SaslFailure(`Sluice did not accept the token (${code})`);
      }
      return { principal: body.principal, expiresAt };
    },
  };
};

/** A connection's SASL state, kept in its attributes under this key. */
export const SASL_STATE = 'sasl';

export interface SaslState {
  /** The mechanism SaslHandshake chose; SaslAuthenticate is legal only after it. */
  mechanism?: string;
  session?: SaslSession;
  /** Everything this connection does, it does as `session.principal`: the context handlers get. */
  gateway?: GatewayContext;
  /** Authentication failed: the connection closes at its next request, as Kafka closes it. */
  failed?: boolean;
}

export const saslState = (connection: ConnectionContext): SaslState => {
  let state = connection.attributes.get(SASL_STATE) as SaslState | undefined;
  if (!state) {
    state = {};
    connection.attributes.set(SASL_STATE, state);
  }
  return state;
};

/**
 * The context a request of this connection is served in: the authenticated principal's (Sluice
 * authorizes every call as that principal), the gateway's own where SASL is not required and the
 * client did not authenticate (the loopback sidecar), or none: `unauthenticated` (answer
 * SASL_AUTHENTICATION_FAILED) or a reason to close the connection.
 */
export const servingContext = (
  gateway: GatewayContext,
  connection: ConnectionContext,
  now: number,
): GatewayContext | { unauthenticated: true } | { close: string } => {
  const state = connection.attributes.get(SASL_STATE) as SaslState | undefined;
  if (state?.failed) return { close: 'SASL authentication failed' };
  if (state?.session && state.gateway) {
    if (now >= state.session.expiresAt)
      return { close: 'the SASL session expired (KIP-368: re-authenticate before session_lifetime_ms)' };
    return state.gateway;
  }
  if (state?.mechanism) return { close: 'a request between SaslHandshake and SaslAuthenticate' };
  return gateway.sasl?.required ? { unauthenticated: true } : gateway;
};
