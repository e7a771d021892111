import { describe, expect, it } from 'vitest';
import { SluiceError, errorFromFailure, errorFromResponse } from '../../../sdk/errors.js';
import { Transport } from '../../../sdk/transport.js';

describe('errorFromResponse', () => {
  it('reads code, message, retriable and the extra fields of the envelope', () => {
    const body = JSON.stringify({
      error: { code: 'OFFSET_OUT_OF_RANGE', message: 'offset 9 is outside', retriable: false },
      logStartOffset: 2,
      highWatermark: 5,
    });
    const error = errorFromResponse(416, body);
    expect(error).toBeInstanceOf(SluiceError);
    expect(error.code).toBe('OFFSET_OUT_OF_RANGE');
    expect(error.message).toBe('offset 9 is outside');
    expect(error.retriable).toBe(false);
    expect(error.status).toBe(416);
    expect(error.details).toEqual({ logStartOffset: 2, highWatermark: 5 });
    expect(error.ambiguous).toBe(false);
  });

  it('keeps the server’s retriable flag', () => {
    const error = errorFromResponse(
      503,
      JSON.stringify({ error: { code: 'NOT_ENOUGH_REPLICAS', message: 'x', retriable: true } }),
    );
    expect(error.retriable).toBe(true);
    expect(error.ambiguous).toBe(true);
  });

  it.each([
    [429, 'THROTTLING_QUOTA_EXCEEDED', true],
    [502, 'UNKNOWN_SERVER_ERROR', true],
    [504, 'REQUEST_TIMED_OUT', true],
    [500, 'UNKNOWN_SERVER_ERROR', false],
    [403, 'SASL_AUTHENTICATION_FAILED', false],
    [401, 'SASL_AUTHENTICATION_FAILED', false],
  ])('maps a %i without an envelope to %s (retriable %s)', (status, code, retriable) => {
    const error = errorFromResponse(status, '<html>Bad gateway</html>');
    expect(error.code).toBe(code);
    expect(error.retriable).toBe(retriable);
    expect(error.message).toContain(`HTTP ${status}`);
  });
});

describe('errorFromFailure', () => {
  it('is a retriable NETWORK_EXCEPTION without status, which may have taken effect', () => {
    const error = errorFromFailure(
      new TypeError('fetch failed', { cause: new Error('ECONNREFUSED') }),
      false,
    );
    expect(error.code).toBe('NETWORK_EXCEPTION');
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.retriable).toBe(true);
    expect(error.status).toBe(0);
    expect(error.ambiguous).toBe(true);
  });

  it('is REQUEST_TIMED_OUT when our timeout aborted it', () => {
    expect(errorFromFailure(new Error('aborted'), true).code).toBe('REQUEST_TIMED_OUT');
  });
});

describe('Transport', () => {
  it('throws the envelope’s error for a non-2xx answer', async () => {
    const transport = new Transport({
      url: 'http://sluice.test/',
      fetch: async () =>
        new Response(
          JSON.stringify({ error: { code: 'TOPIC_ALREADY_EXISTS', message: 'exists', retriable: false } }),
          { status: 409 },
        ),
    });
    await expect(transport.json({ method: 'POST', path: '/v1/topics', json: {} })).rejects.toMatchObject({
      code: 'TOPIC_ALREADY_EXISTS',
      status: 409,
    });
  });

  it('turns a failed fetch into NETWORK_EXCEPTION and a cancelled one into ABORTED', async () => {
    const transport = new Transport({
      url: 'http://sluice.test',
      fetch: async () => Promise.reject(new TypeError('fetch failed')),
    });
    await expect(transport.send({ method: 'GET', path: '/v1/health' })).rejects.toMatchObject({
      code: 'NETWORK_EXCEPTION',
    });
    const controller = new AbortController();
    controller.abort();
    await expect(
      transport.send({ method: 'GET', path: '/v1/health', signal: controller.signal }),
    ).rejects.toMatchObject({
      code: 'ABORTED',
      retriable: false,
    });
  });

  it('joins the base URL, encoded path and query, and sends JSON with its content type', async () => {
    const seen: { url: string; init: RequestInit }[] = [];
    const transport = new Transport({
      url: 'http://sluice.test/',
      headers: { authorization: 'Bearer t' },
      fetch: async (url, init) => (seen.push({ url, init }), new Response('{"ok":true}', { status: 200 })),
    });
    const out = await transport.json({
      method: 'POST',
      path: '/v1/x',
      query: { a: 'b c', skip: undefined, n: 3 },
      json: { k: 1 },
    });
    expect(out).toEqual({ ok: true });
    expect(seen[0]!.url).toBe('http://sluice.test/v1/x?a=b%20c&n=3');
    expect(seen[0]!.init.body).toBe('{"k":1}');
    expect(seen[0]!.init.headers).toMatchObject({
      authorization: 'Bearer t',
      'content-type': 'application/json; charset=utf-8',
    });
  });
});
