/**
 * The SDK's SigV4 signing against vectors of AWS's published Signature Version 4 test suite
 * (aws-sig-v4-test-suite, "get-vanilla", "get-vanilla-query-order-key-case", "post-vanilla",
 * "post-vanilla-query", "post-header-key-case", "post-x-www-form-urlencoded": credentials AKIDEXAMPLE,
 * region us-east-1, service `service`, 2015-08-30T12:36:00Z). Each request goes through `sigV4Fetch`
 * exactly as the SDK sends it, and the Authorization header must equal the suite's.
 */
import { describe, expect, it } from 'vitest';
import { SluiceClient } from '../../../sdk/client.js';
import type { AwsCredentials } from '../../../sdk/sigv4.js';
import { sigV4Fetch } from '../../../sdk/sigv4.js';

const SUITE: AwsCredentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};
const DATE = new Date('2015-08-30T12:36:00Z');
const SCOPE = 'Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request';

interface Sent {
  url: string;
  headers: Record<string, string>;
}

const capture = (): { sent: Sent[]; fetch: (url: string, init: RequestInit) => Promise<Response> } => {
  const sent: Sent[] = [];
  return {
    sent,
    fetch: (url, init) => {
      sent.push({ url, headers: init.headers as Record<string, string> });
      return Promise.resolve(new Response('{"status":"ok"}', { status: 200 }));
    },
  };
};

const VECTORS: {
  name: string;
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  authorization: string;
}[] = [
  {
    name: 'get-vanilla',
    method: 'GET',
    url: 'https://example.amazonaws.com/',
    authorization: `AWS4-HMAC-SHA256 ${SCOPE}, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31`,
  },
  {
    name: 'get-vanilla-query-order-key-case',
    method: 'GET',
    url: 'https://example.amazonaws.com/?Param2=value2&Param1=value1',
    authorization: `AWS4-HMAC-SHA256 ${SCOPE}, SignedHeaders=host;x-amz-date, Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500`,
  },
  {
    name: 'post-vanilla',
    method: 'POST',
    url: 'https://example.amazonaws.com/',
    authorization: `AWS4-HMAC-SHA256 ${SCOPE}, SignedHeaders=host;x-amz-date, Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b`,
  },
  {
    name: 'post-vanilla-query',
    method: 'POST',
    url: 'https://example.amazonaws.com/?Param1=value1',
    authorization: `AWS4-HMAC-SHA256 ${SCOPE}, SignedHeaders=host;x-amz-date, Signature=28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11`,
  },
  {
    name: 'post-header-key-case',
    method: 'POST',
    url: 'https://example.amazonaws.com/',
    headers: { 'My-Header1': 'value1' },
    authorization: `AWS4-HMAC-SHA256 ${SCOPE}, SignedHeaders=host;my-header1;x-amz-date, Signature=c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c`,
  },
  {
    name: 'post-x-www-form-urlencoded',
    method: 'POST',
    url: 'https://example.amazonaws.com/',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'Param1=value1',
    authorization: `AWS4-HMAC-SHA256 ${SCOPE}, SignedHeaders=content-type;host;x-amz-date, Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a`,
  },
];

describe('sigV4Fetch against the SigV4 test suite', () => {
  for (const v of VECTORS) {
    it(v.name, async () => {
      const { sent, fetch } = capture();
      const signed = sigV4Fetch({
        region: 'us-east-1',
        service: 'service',
        credentials: SUITE,
        fetch,
        now: () => DATE,
      });
      await signed(v.url, {
        method: v.method,
        ...(v.headers ? { headers: v.headers } : {}),
        ...(v.body === undefined ? {} : { body: v.body }),
      });
      expect(sent).toHaveLength(1);
      expect(sent[0]!.url).toBe(v.url);
      expect(sent[0]!.headers['authorization']).toBe(v.authorization);
      expect(sent[0]!.headers['x-amz-date']).toBe('20150830T123600Z');
      // Host is signed but left to fetch, which sets the same value from the URL.
      expect(sent[0]!.headers['host']).toBeUndefined();
    });
  }

  it('a body changes the signature, so a tampered body would fail verification', async () => {
    const { sent, fetch } = capture();
    const signed = sigV4Fetch({
      region: 'us-east-1',
      service: 'service',
      credentials: SUITE,
      fetch,
      now: () => DATE,
    });
    const init = { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } };
    await signed('https://example.amazonaws.com/', { ...init, body: 'Param1=value1' });
    await signed('https://example.amazonaws.com/', { ...init, body: 'Param1=value2' });
    expect(sent[0]!.headers['authorization']).not.toBe(sent[1]!.headers['authorization']);
  });

  it('temporary credentials send and sign their session token', async () => {
    const { sent, fetch } = capture();
    const signed = sigV4Fetch({
      region: 'us-east-1',
      service: 'service',
      credentials: async () => ({ ...SUITE, sessionToken: 'TOKEN-1' }),
      fetch,
      now: () => DATE,
    });
    await signed('https://example.amazonaws.com/', { method: 'GET' });
    expect(sent[0]!.headers['x-amz-security-token']).toBe('TOKEN-1');
    expect(sent[0]!.headers['authorization']).toContain(
      'SignedHeaders=host;x-amz-date;x-amz-security-token,',
    );
  });
});

describe('SluiceClient with a region', () => {
  it('signs every request for execute-api in that region, over the fetch it is given', async () => {
    const { sent, fetch } = capture();
    const client = new SluiceClient({
      url: 'https://abc123.execute-api.eu-west-1.amazonaws.com',
      fetch,
      region: 'eu-west-1',
      credentials: SUITE,
    });
    await client.admin().cluster();
    await client.admin().createTopic({ name: 'orders' });
    expect(sent.map((s) => s.url)).toEqual([
      'https://abc123.execute-api.eu-west-1.amazonaws.com/v1/cluster',
      'https://abc123.execute-api.eu-west-1.amazonaws.com/v1/topics',
    ]);
    for (const s of sent) {
      expect(s.headers['authorization']).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/execute-api\/aws4_request, SignedHeaders=[a-z0-9;-]*host;x-amz-date, Signature=[0-9a-f]{64}$/,
      );
    }
    expect(sent[1]!.headers['authorization']).toContain('SignedHeaders=content-type;host;x-amz-date,');
  });

  it('without credentials it takes them from the default chain (here the environment)', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: 'AKIDFROMENV',
      AWS_SECRET_ACCESS_KEY: 'secret-from-env',
      AWS_SESSION_TOKEN: 'token-from-env',
    });
    try {
      const { sent, fetch } = capture();
      await new SluiceClient({ url: 'https://api.example.com', fetch, region: 'us-west-2' })
        .admin()
        .cluster();
      expect(sent[0]!.headers['authorization']).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDFROMENV\/\d{8}\/us-west-2\/execute-api\/aws4_request, /,
      );
      expect(sent[0]!.headers['x-amz-security-token']).toBe('token-from-env');
    } finally {
      for (const k of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN']) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    }
  });

  it('without a region it sends requests unsigned', async () => {
    const { sent, fetch } = capture();
    await new SluiceClient({ url: 'http://127.0.0.1:8787', fetch }).admin().cluster();
    expect(sent[0]!.headers['authorization']).toBeUndefined();
  });
});
