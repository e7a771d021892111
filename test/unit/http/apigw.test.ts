/**
 * The API Gateway HTTP API (payload 2.0) adapter: what Lambda hands the handlers and what it sends
 * back. The local gateway produces the same events, so these shapes are also what integration tests
 * exercise; here each rule is pinned on its own.
 */
import { describe, expect, it } from 'vitest';
import type { ApiGatewayV2Event } from '../../../lib/http/apigw.js';
import { RAW_BODY, attachRawBody, requestFromEvent, resultFromResponse } from '../../../lib/http/apigw.js';

const event = (over: Partial<ApiGatewayV2Event>): ApiGatewayV2Event => ({
  version: '2.0',
  routeKey: 'POST /v1/topics/{topic}/records',
  rawPath: '/v1/topics/orders/records',
  rawQueryString: '',
  headers: {},
  requestContext: { http: { method: 'post', path: '/v1/topics/orders/records' }, requestId: 'r1' },
  isBase64Encoded: false,
  ...over,
});

describe('requestFromEvent', () => {
  it('decodes a base64 body to the exact bytes', () => {
    const bytes = Uint8Array.from({ length: 300 }, (_, i) => (i * 7) & 0xff);
    const r = requestFromEvent(event({ body: Buffer.from(bytes).toString('base64'), isBase64Encoded: true }));
    expect(r.body).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(r.body).equals(Buffer.from(bytes))).toBe(true);
  });

  it('takes a text body as UTF-8 and an absent body as empty', () => {
    expect(Buffer.from(requestFromEvent(event({ body: '{"a":"é"}' })).body).toString('utf8')).toBe(
      '{"a":"é"}',
    );
    expect(requestFromEvent(event({})).body).toHaveLength(0);
  });

  it('lower-cases header names, upper-cases the method and keeps the first of repeated query values', () => {
    const r = requestFromEvent(
      event({
        headers: { 'Content-Type': 'application/json', 'X-Empty': undefined },
        rawQueryString: 'offset=5&offset=9&maxWaitMs=100&name=a%20b',
      }),
    );
    expect(r.method).toBe('POST');
    expect(r.path).toBe('/v1/topics/orders/records');
    expect(r.headers).toEqual({ 'content-type': 'application/json' });
    expect(r.query).toEqual({ offset: '5', maxWaitMs: '100', name: 'a b' });
  });
});

describe('resultFromResponse', () => {
  it('sends bytes base64 with an octet-stream type unless the handler set one', () => {
    const bytes = new Uint8Array([0, 255, 1, 254]);
    const out = resultFromResponse({ status: 200, body: bytes });
    expect(out).toMatchObject({ statusCode: 200, isBase64Encoded: true });
    expect(out.headers!['content-type']).toBe('application/octet-stream');
    expect(Buffer.from(out.body!, 'base64').equals(Buffer.from(bytes))).toBe(true);
    const typed = resultFromResponse({
      status: 200,
      body: bytes.subarray(1, 3),
      headers: { 'content-type': 'application/vnd.kafka.record-batch' },
    });
    expect(typed.headers!['content-type']).toBe('application/vnd.kafka.record-batch');
    expect([...Buffer.from(typed.body!, 'base64')]).toEqual([255, 1]);
  });

  it('serializes JSON bodies and leaves an empty answer empty', () => {
    const out = resultFromResponse({ status: 201, body: { offsets: [{ partition: 0, offset: 7 }] } });
    expect(out).toMatchObject({ statusCode: 201, isBase64Encoded: false });
    expect(out.headers!['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(out.body!)).toEqual({ offsets: [{ partition: 0, offset: 7 }] });
    expect(resultFromResponse({ status: 204 })).toEqual({ statusCode: 204, headers: {} });
  });
});

describe('bodies handed over in process (RAW_BODY)', () => {
  it('give the handler the very bytes, and still read as a faithful event', () => {
    const bytes = Uint8Array.from({ length: 1000 }, (_, i) => (i * 13) & 0xff);
    const e = attachRawBody(event({ isBase64Encoded: true }), bytes);
    expect(requestFromEvent(e).body).toBe(bytes);
    expect(e.body).toBe(Buffer.from(bytes).toString('base64'));
    expect(JSON.parse(JSON.stringify(e)).body).toBe(Buffer.from(bytes).toString('base64'));
    const text = attachRawBody(event({}), Buffer.from('{"records":[]}'), 'utf8');
    expect(JSON.parse(JSON.stringify(text)).body).toBe('{"records":[]}');
  });

  it('come back from binary answers, whose JSON form (what Lambda sends) still holds the base64', () => {
    const bytes = new Uint8Array([9, 8, 7]);
    const out = resultFromResponse({ status: 200, body: bytes });
    expect(out[RAW_BODY]).toBe(bytes);
    expect(JSON.parse(JSON.stringify(out))).toEqual({
      statusCode: 200,
      headers: { 'content-type': 'application/octet-stream' },
      isBase64Encoded: true,
      body: Buffer.from(bytes).toString('base64'),
    });
  });
});
