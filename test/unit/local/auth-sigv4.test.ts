/**
 * The local gateway's AWS_IAM stand-in (local/auth): SigV4 verification against signatures made by
 * the AWS SDK's signer, the 15-minute window on a controlled clock, and the route's policy decision.
 */
import { describe, expect, it } from 'vitest';
import type { GatewayAuthResult, GatewayRequest } from '../../../local/auth/gateway-auth.js';
import { createGatewayAuth } from '../../../local/auth/gateway-auth.js';
import { matchRoute } from '../../../functions/route-table.js';
import type { PolicyDocument } from '../../../lib/auth/policy.js';
import type { TestKey } from '../../support/sigv4.js';
import { signHeaders } from '../../support/sigv4.js';
import { kafkaToken } from '../../../sdk/kafka-token.js';

const T0 = Date.UTC(2026, 11, 1, 9, 0, 0);
const ALICE: TestKey = { accessKeyId: 'AKIDALICE', secretAccessKey: 'alice-secret' };
const TEMP: TestKey = { accessKeyId: 'ASIATEMP', secretAccessKey: 'temp-secret', sessionToken: 'tok-1' };
const ALICE_ARN = 'arn:aws:iam::111122223333:user/alice';
const ROLE_ARN = 'arn:aws:sts::111122223333:assumed-role/app/session';
const ORDERS_WRITE: PolicyDocument = {
  Statement: [
    {
      Effect: 'Allow',
      Action: 'execute-api:Invoke',
      Resource:
        'arn:aws:execute-api:us-east-1:000000000000:sluice-local/$default/POST/v1/topics/orders/records',
    },
  ],
};

const WHOAMI: PolicyDocument = {
  Statement: [
    {
      Effect: 'Allow',
      Action: 'execute-api:Invoke',
      Resource: 'arn:aws:execute-api:us-east-1:000000000000:sluice-local/$default/GET/v1/whoami',
    },
  ],
};

let clock = T0;
const auth = createGatewayAuth({
  region: 'us-east-1',
  now: () => clock,
  credentials: new Map([
    [ALICE.accessKeyId, { ...ALICE, principalArn: ALICE_ARN }],
    [TEMP.accessKeyId, { ...TEMP, sessionToken: 'tok-1', principalArn: ROLE_ARN }],
  ]),
  policies: new Map([
    [ALICE_ARN, [ORDERS_WRITE, WHOAMI]],
    [ROLE_ARN, [ORDERS_WRITE]],
  ]),
});

const BODY = Buffer.from('{"records":[{"value":"v"}]}');
const HOST = '127.0.0.1:8805';

interface Sent {
  method: string;
  target: string;
  headers: Record<string, string>;
  body: Uint8Array;
}

const sign = async (
  overrides: {
    method?: string;
    target?: string;
    key?: TestKey;
    region?: string;
    at?: number;
    body?: Uint8Array;
    headers?: Record<string, string>;
  } = {},
): Promise<Sent> => {
  const method = overrides.method ?? 'POST';
  const target = overrides.target ?? '/v1/topics/orders/records';
  const body = overrides.body ?? BODY;
  const headers = await signHeaders({
    method,
    url: `http://${HOST}${target}`,
    headers: { 'content-type': 'application/json', ...(overrides.headers ?? {}) },
    body,
    key: overrides.key ?? ALICE,
    region: overrides.region ?? 'us-east-1',
    signingDate: new Date(overrides.at ?? T0),
  });
  return {
    method,
    target,
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
    body,
  };
};

const check = (sent: Sent): Promise<GatewayAuthResult> => {
  const [rawPath, rawQuery = ''] = sent.target.split('?') as [string, string?];
  const path = new URL(sent.target, 'http://x').pathname;
  const route = matchRoute(sent.method, path);
  if (!route) throw new Error(`no route for ${sent.target}`);
  const request: GatewayRequest = {
    method: sent.method,
    route,
    path,
    rawPath,
    rawQuery,
    headers: sent.headers,
    body: sent.body,
  };
  return auth.check(request);
};

const refusal = async (sent: Sent): Promise<[string, string]> => {
  const result = await check(sent);
  if (!('refusal' in result)) throw new Error('expected a refusal');
  return [result.refusal.code, result.refusal.message];
};

describe('SigV4 verification', () => {
  it('accepts a request signed by the SDK signer and passes the IAM identity to the handler', async () => {
    clock = T0;
    expect(await check(await sign())).toEqual({
      context: {
        accountId: '000000000000',
        apiId: 'sluice-local',
        authorizer: {
          iam: {
            accessKey: 'AKIDALICE',
            accountId: '111122223333',
            callerId: 'AKIDALICE',
            userArn: ALICE_ARN,
          },
        },
      },
    });
  });

  it('accepts temporary credentials only with their session token', async () => {
    clock = T0;
    const ok = await check(await sign({ key: TEMP }));
    expect('context' in ok && (ok.context['authorizer'] as { iam: { userArn: string } }).iam.userArn).toBe(
      ROLE_ARN,
    );
    const wrongToken = await sign({ key: { ...TEMP, sessionToken: 'tok-2' } });
    expect((await refusal(wrongToken))[0]).toBe('SASL_AUTHENTICATION_FAILED');
    const noToken = await sign({
      key: { accessKeyId: TEMP.accessKeyId, secretAccessKey: TEMP.secretAccessKey },
    });
    expect((await refusal(noToken))[0]).toBe('SASL_AUTHENTICATION_FAILED');
  });

  it('accepts a replay inside the 15-minute window and refuses it outside, in both directions', async () => {
    const sent = await sign();
    for (const [at, ok] of [
      [T0 + 60_000, true],
      [T0 + 15 * 60_000, true],
      [T0 + 15 * 60_000 + 1000, false],
      [T0 - 15 * 60_000, true],
      [T0 - 15 * 60_000 - 1000, false],
    ] as const) {
      clock = at;
      const result = await check(sent);
      expect('context' in result, `at T0${(at - T0) / 1000 >= 0 ? '+' : ''}${(at - T0) / 1000}s`).toBe(ok);
      if (!ok)
        expect(await refusal(sent)).toEqual([
          'SASL_AUTHENTICATION_FAILED',
          'signature expired: X-Amz-Date is more than 15 minutes from the server time',
        ]);
    }
  });

  it('refuses every kind of tampering after signing', async () => {
    clock = T0;
    const sent = await sign({ target: '/v1/topics/orders/records?acks=all' });
    const variants: [string, Sent][] = [
      ['body byte', { ...sent, body: Buffer.from(BODY.toString().replace('"v"', '"w"')) }],
      ['body appended', { ...sent, body: Buffer.concat([BODY, Buffer.from(' ')]) }],
      ['path', { ...sent, target: '/v1/topics/orderz/records?acks=all' }],
      ['query value', { ...sent, target: '/v1/topics/orders/records?acks=1' }],
      ['query added', { ...sent, target: '/v1/topics/orders/records?acks=all&x=1' }],
      ['method', { ...sent, method: 'GET', target: '/v1/topics/orders' }],
      ['signed header', { ...sent, headers: { ...sent.headers, 'content-type': 'text/plain' } }],
      ['date', { ...sent, headers: { ...sent.headers, 'x-amz-date': '20261201T090001Z' } }],
      [
        'signature',
        {
          ...sent,
          headers: {
            ...sent.headers,
            authorization: sent.headers['authorization']!.replace(/.$/, (c) => (c === '0' ? '1' : '0')),
          },
        },
      ],
    ];
    for (const [what, variant] of variants) {
      expect(await refusal(variant), what).toEqual([
        'SASL_AUTHENTICATION_FAILED',
        'the request signature does not match (check the access key and secret)',
      ]);
    }
  });

  it('holds X-Amz-Content-Sha256 to the body it came with', async () => {
    clock = T0;
    const sent = await sign({ headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } });
    expect(await refusal(sent)).toEqual([
      'SASL_AUTHENTICATION_FAILED',
      'X-Amz-Content-Sha256 does not match the body',
    ]);
  });

  it('gives an unknown key the same answer as a wrong secret', async () => {
    clock = T0;
    const unknown = await refusal(await sign({ key: { accessKeyId: 'AKIDNOBODY', secretAccessKey: 'x' } }));
    const wrong = await refusal(await sign({ key: { ...ALICE, secretAccessKey: 'guess' } }));
    expect(unknown).toEqual(wrong);
  });

  it.each([
    [
      'no Authorization header',
      (s: Sent) => ({ ...s, headers: { host: HOST } }),
      'the request is not signed: no Authorization header (SigV4)',
    ],
    [
      'another scheme',
      (s: Sent) => ({ ...s, headers: { ...s.headers, authorization: 'Bearer abc' } }),
      'the Authorization header is not a SigV4 (AWS4-HMAC-SHA256) signature',
    ],
    [
      'no X-Amz-Date',
      (s: Sent) => ({
        ...s,
        headers: Object.fromEntries(Object.entries(s.headers).filter(([k]) => k !== 'x-amz-date')),
      }),
      'X-Amz-Date is missing or not in the form YYYYMMDDTHHMMSSZ',
    ],
    [
      'a signature in both the header and the query',
      (s: Sent) => ({ ...s, target: `${s.target}?X-Amz-Signature=00` }),
      'sign either the Authorization header or the query, not both',
    ],
  ])('refuses %s', async (_, mutate, message) => {
    clock = T0;
    expect(await refusal(mutate(await sign()))).toEqual(['SASL_AUTHENTICATION_FAILED', message]);
  });

  it('refuses a scope for another region or service, and a scope date that is not the request date', async () => {
    clock = T0;
    expect(await refusal(await sign({ region: 'eu-west-1' }))).toEqual([
      'SASL_AUTHENTICATION_FAILED',
      'the credential scope region must be us-east-1',
    ]);
    const sent = await sign();
    const s3 = {
      ...sent,
      headers: {
        ...sent.headers,
        authorization: sent.headers['authorization']!.replace('/execute-api/', '/s3/'),
      },
    };
    expect(await refusal(s3)).toEqual([
      'SASL_AUTHENTICATION_FAILED',
      'the credential scope service must be execute-api',
    ]);
    const otherDay = {
      ...sent,
      headers: {
        ...sent.headers,
        authorization: sent.headers['authorization']!.replace('/20261201/', '/20261130/'),
      },
    };
    expect(await refusal(otherDay)).toEqual([
      'SASL_AUTHENTICATION_FAILED',
      'the credential scope date is not the date of X-Amz-Date',
    ]);
  });
});

describe('route policy', () => {
  it('answers a signed caller without an Allow for the route with the Kafka code of its resource', async () => {
    clock = T0;
    expect(await refusal(await sign({ target: '/v1/topics/payments/records' }))).toEqual([
      'TOPIC_AUTHORIZATION_FAILED',
      'not authorized to WRITE topic payments',
    ]);
    expect(
      await refusal(await sign({ method: 'DELETE', target: '/v1/groups/billing', body: new Uint8Array(0) })),
    ).toEqual(['GROUP_AUTHORIZATION_FAILED', 'not authorized to DELETE group billing']);
    expect(await refusal(await sign({ method: 'POST', target: '/v1/topics' }))).toEqual([
      'CLUSTER_AUTHORIZATION_FAILED',
      'not authorized to CREATE the cluster',
    ]);
  });

  it('tells the operator which principal, decision and ARN, beside the answer', async () => {
    clock = T0;
    const result = await check(await sign({ target: '/v1/topics/payments/records' }));
    expect('reason' in result && result.reason).toBe(
      `implicitDeny of execute-api:Invoke for ${ALICE_ARN} on arn:aws:execute-api:us-east-1:000000000000:sluice-local/$default/POST/v1/topics/payments/records`,
    );
  });

  it('evaluates no policy on a path that is not canonical: an over-encoded name is refused, never renamed', async () => {
    clock = T0;
    const result = await check(await sign({ target: '/v1/topics/%6Frders/records' }));
    expect('refusal' in result && result.refusal.code).toBe('NOT_FOUND');
    expect('reason' in result && result.reason).toBe(
      'non-canonical path: has a segment not percent-encoded in canonical form (encodeURIComponent)',
    );
    expect('context' in (await check(await sign({ target: '/v1/topics/orders/records' })))).toBe(true);
  });

  it('lets the health probe through unsigned', async () => {
    expect(
      await check({ method: 'GET', target: '/v1/health', headers: { host: HOST }, body: new Uint8Array(0) }),
    ).toEqual({ context: {} });
  });
});

describe("presigned URLs (the Kafka gateway's OAUTHBEARER token)", () => {
  const presigned = async (
    options: { key?: TestKey; at?: number; expiresInSeconds?: number } = {},
  ): Promise<Sent> => {
    const token = await kafkaToken({
      url: `http://${HOST}`,
      region: 'us-east-1',
      credentials: options.key ?? ALICE,
      now: () => new Date(options.at ?? T0),
      ...(options.expiresInSeconds ? { expiresInSeconds: options.expiresInSeconds } : {}),
    });
    const url = new URL(Buffer.from(token.value, 'base64url').toString());
    return {
      method: 'GET',
      target: `${url.pathname}${url.search}`,
      headers: { host: HOST },
      body: new Uint8Array(0),
    };
  };
  const withQuery = (sent: Sent, edit: (q: URLSearchParams) => void): Sent => {
    const [path, query] = sent.target.split('?') as [string, string];
    const q = new URLSearchParams(query);
    edit(q);
    return { ...sent, target: `${path}?${q.toString()}` };
  };

  it("accepts the SDK's presigned whoami until it expires, and names its signer", async () => {
    clock = T0 + 899_000;
    const result = await check(await presigned());
    expect(result).toMatchObject({ context: { authorizer: { iam: { userArn: ALICE_ARN } } } });
    clock = T0 + 901_000;
    expect(await refusal(await presigned())).toEqual([
      'SASL_AUTHENTICATION_FAILED',
      'the presigned URL has expired (X-Amz-Expires)',
    ]);
  });

  it.each([
    [
      'a changed signature',
      (q: URLSearchParams) => q.set('X-Amz-Signature', '0'.repeat(64)),
      /does not match/,
    ],
    ['a longer life than signed', (q: URLSearchParams) => q.set('X-Amz-Expires', '901'), /does not match/],
    [
      'a life over seven days',
      (q: URLSearchParams) => q.set('X-Amz-Expires', '604801'),
      /X-Amz-Expires must be/,
    ],
    [
      'another algorithm',
      (q: URLSearchParams) => q.set('X-Amz-Algorithm', 'AWS4-HMAC-SHA1'),
      /X-Amz-Algorithm/,
    ],
    [
      'two signatures',
      (q: URLSearchParams) => q.append('X-Amz-Signature', 'ab'),
      /exactly one X-Amz-Signature/,
    ],
    [
      'a session token it was not issued with',
      (q: URLSearchParams) => q.set('X-Amz-Security-Token', 'x'),
      /does not match/,
    ],
    ['an unsigned extra parameter', (q: URLSearchParams) => q.set('topic', 'orders'), /does not match/],
  ])('refuses %s', async (_, edit, message) => {
    clock = T0;
    const [code, text] = await refusal(withQuery(await presigned(), edit));
    expect(code).toBe('SASL_AUTHENTICATION_FAILED');
    expect(text).toMatch(message);
  });

  it('refuses a URL signed more than 15 minutes in the future, and one presigned for another host', async () => {
    clock = T0;
    expect((await refusal(await presigned({ at: T0 + 16 * 60_000 })))[1]).toBe('X-Amz-Date is in the future');
    const elsewhere = await presigned();
    expect((await refusal({ ...elsewhere, headers: { host: '127.0.0.1:9' } }))[1]).toMatch(/does not match/);
  });
});
