/**
 * SaslHandshake and SaslAuthenticate: OAUTHBEARER with a presigned Sluice request as the token
 * (gateway/sasl.ts). A connection that authenticates is served as its principal from then on: every
 * call to Sluice names it in `Sluice-On-Behalf-Of`, and Sluice authorizes the call as that principal
 * (lib/auth/delegation.ts). Re-authentication (KIP-368) must prove the same principal.
 */
import { ERROR } from '../../protocol/kafka/error-codes.js';
import { SaslAuthenticate, SaslHandshake } from '../../protocol/kafka/messages/sasl.js';
import type { ApiHandler } from '../api.js';
import { OAUTHBEARER, SaslFailure, parseOAuthBearer, saslState } from '../sasl.js';

export const saslHandshake: ApiHandler = {
  schema: SaslHandshake,
  // librdkafka enables SASL only if v0 is advertised (its feature check, as for Produce v0); but v0
  // sends the SASL bytes unframed after the handshake, which this gateway does not read: a v0
  // handshake is answered UNSUPPORTED_VERSION, and clients use v1 with SaslAuthenticate.
  minVersion: 0,
  maxVersion: 1,
  async handle(request, ctx) {
    const mechanisms = ctx.gateway.sasl ? [OAUTHBEARER] : [];
    if (ctx.version === 0) return { errorCode: ERROR.UNSUPPORTED_VERSION, mechanisms };
    const state = saslState(ctx.connection);
    if (request['mechanism'] !== OAUTHBEARER || !ctx.gateway.sasl)
      return { errorCode: ERROR.UNSUPPORTED_SASL_MECHANISM, mechanisms };
    if (state.mechanism !== undefined) return { errorCode: ERROR.ILLEGAL_SASL_STATE, mechanisms };
    state.mechanism = OAUTHBEARER;
    return { errorCode: ERROR.NONE, mechanisms };
  },
};

export const saslAuthenticate: ApiHandler = {
  schema: SaslAuthenticate,
  minVersion: 0,
  maxVersion: 2,
  async handle(request, ctx) {
    const state = saslState(ctx.connection);
    const refuse = (errorCode: number, errorMessage: string) => {
      state.failed = true;
      delete state.mechanism;
      return { errorCode, errorMessage, authBytes: new Uint8Array(0), sessionLifetimeMs: 0 };
    };
    const sasl = ctx.gateway.sasl;
    if (!sasl || state.mechanism !== OAUTHBEARER)
      return refuse(ERROR.ILLEGAL_SASL_STATE, 'SaslAuthenticate needs a SaslHandshake for OAUTHBEARER first');
    try {
      const { token, authzid } = parseOAuthBearer(request['authBytes'] as Uint8Array);
      const session = await sasl.authenticator.verify(token);
      if (authzid !== null && authzid !== session.principal)
        throw new SaslFailure(`${session.principal} may not act as ${authzid.slice(0, 300)}`);
      if (state.session && state.session.principal !== session.principal)
        throw new SaslFailure('re-authentication must prove the principal the connection has');
      state.session = session;
      state.gateway = { ...ctx.gateway, sluice: ctx.gateway.sluice.onBehalfOf(session.principal) };
      delete state.mechanism;
      return {
        errorCode: ERROR.NONE,
        errorMessage: null,
        authBytes: new Uint8Array(0),
        sessionLifetimeMs: Math.max(1, session.expiresAt - Date.now()),
      };
    } catch (error) {
      if (error instanceof SaslFailure) return refuse(ERROR.SASL_AUTHENTICATION_FAILED, error.message);
      throw error;
    }
  },
};
