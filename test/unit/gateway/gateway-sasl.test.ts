/**
 * The gateway's SASL/OAUTHBEARER pieces (gateway/sasl.ts): RFC 7628 parsing under hostile input, and
 * the token check that never sends a token anywhere but the gateway's own Sluice, unsigned, and
 * never accepts a long-lived one.
 */
import { describe, expect, it } from 'vitest';
import { MAX_TOKEN_SECONDS, SaslFailure, parseOAuthBearer, presignedWhoami } from '../../../gateway/sasl.js';
import { kafkaToken } from '../../../sdk/kafka-token.js';

const SOH = '\u0001';
const bytes = (text: string) => Buffer.from(text, 'utf8');

describe('parseOAuthBearer', () => {
  it("reads kafkajs's and librdkafka's client responses, with and without extensions and authzid", () => {
    expect(parseOAuthBearer(bytes(`n,,${SOH}auth=Bearer abc-_.~+/==${SOH}${SOH}`))).toEqual({
      token: 'abc-_.~+/==',
      authzid: null,
    });
    expect(parseOAuthBearer(bytes(`n,,${SOH}auth=Bearer t${SOH}traceId=1${SOH}${SOH}`)).token).toBe('t');
    expect(parseOAuthBearer(bytes(`n,a=arn:x,${SOH}auth=Bearer t${SOH}${SOH}`)).authzid).toBe('arn:x');
  });

  it.each([
    ['PLAIN bytes', '\u0000alice\u0000secret'],
    ['no terminator', `n,,${SOH}auth=Bearer t${SOH}`],
    ['a channel-binding header', `p=tls-unique,,${SOH}auth=Bearer t${SOH}${SOH}`],
    ['no auth', `n,,${SOH}k=v${SOH}${SOH}`],
    ['two auths', `n,,${SOH}auth=Bearer a${SOH}auth=Bearer b${SOH}${SOH}`],
    ['another scheme', `n,,${SOH}auth=Basic YTpi${SOH}${SOH}`],
    ['a token with spaces', `n,,${SOH}auth=Bearer a b${SOH}${SOH}`],
    ['an empty key', `n,,${SOH}=x${SOH}auth=Bearer t${SOH}${SOH}`],
    ['over 16 KiB', `n,,${SOH}auth=Bearer ${'a'.repeat(17_000)}${SOH}${SOH}`],
  ])('refuses %s', (_, text) => {
    expect(() => parseOAuthBearer(bytes(text))).toThrow(SaslFailure);
  });
});

describe('presignedWhoami', () => {
  const SLUICE = 'http://127.0.0.1:8805';
  const key = { accessKeyId: 'AKIDALICE', secretAccessKey: 's' };
  const calls: { url: string; init: RequestInit }[] = [];
  const verifier = (status = 200, body: unknown = { principal: 'arn:aws:iam::111122223333:user/alice' }) =>
    presignedWhoami({
      url: SLUICE,
      fetch: async (url, init) => {
        calls.push({ url, init });
        return new Response(JSON.stringify(body), {
          status,
          headers: { 'content-type': 'application/json' },
        });
      },
    });

  it('calls the presigned whoami on its own Sluice, unsigned, and returns the principal and expiry', async () => {
    calls.length = 0;
    const token = await kafkaToken({
      url: SLUICE,
      region: 'us-east-1',
      credentials: key,
      expiresInSeconds: 600,
    });
    const session = await verifier().verify(token.value);
    expect(session).toEqual({
      principal: 'arn:aws:iam::111122223333:user/alice',
      expiresAt: token.expiresAt,
    });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.url).toBe(Buffer.from(token.value, 'base64url').toString());
    expect(JSON.stringify(calls[0]!.init.headers)).not.toMatch(/authorization/i);
  });

  it('refuses without calling anything: another origin, another path, extra parameters, a long life, expiry', async () => {
    calls.length = 0;
    const at = (url: string, expiresInSeconds?: number) =>
      kafkaToken({
        url,
        region: 'us-east-1',
        credentials: key,
        ...(expiresInSeconds ? { expiresInSeconds } : {}),
      });
    const good = Buffer.from((await at(SLUICE)).value, 'base64url').toString();
    const enc = (s: string) => Buffer.from(s).toString('base64url');
    const tokens = [
      (await at('http://169.254.169.254')).value,
      (await at(`${SLUICE}/other`)).value,
      enc(good.replace('/v1/whoami', '/v1/topics')),
      enc(good.replace('/v1/whoami?', '/v1/whoami?topic=x&')),
      enc(good.replace(/X-Amz-Expires=\d+/, `X-Amz-Expires=${MAX_TOKEN_SECONDS + 1}`)),
      enc(good.replace(/X-Amz-Date=\d{8}/, 'X-Amz-Date=20200101')),
      enc(good.replace('http://', 'http://user:pw@')),
      enc('file:///etc/passwd'),
      'not base64 at all!',
    ];
    for (const token of tokens) await expect(verifier().verify(token)).rejects.toThrow(SaslFailure);
    expect(calls).toEqual([]);
  });

  it('refuses what Sluice refuses, or an answer without a principal', async () => {
    const token = (await kafkaToken({ url: SLUICE, region: 'us-east-1', credentials: key })).value;
    await expect(
      verifier(401, { error: { code: 'SASL_AUTHENTICATION_FAILED' } }).verify(token),
    ).rejects.toThrow(/SASL_AUTHENTICATION_FAILED/);
    await expect(verifier(200, { principal: 7 }).verify(token)).rejects.toThrow(SaslFailure);
  });
});
