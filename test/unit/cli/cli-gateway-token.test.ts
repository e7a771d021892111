/** `sluice gateway token`: a presigned GET /v1/whoami for the --url, base64url, or a usage error. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_USAGE } from '../../../cli/main.js';
import { cli, fakeApi } from '../../support/cli-fake.js';

const saved = { ...process.env };
beforeEach(() => {
  process.env['AWS_ACCESS_KEY_ID'] = 'AKIDTOKENTEST';
  process.env['AWS_SECRET_ACCESS_KEY'] = 'secret';
  delete process.env['AWS_SESSION_TOKEN'];
  delete process.env['AWS_PROFILE'];
});
afterEach(() => {
  process.env = { ...saved };
});

describe('sluice gateway token', () => {
  it('prints a presigned whoami of the --url, signed by the default chain, and sends nothing', async () => {
    const api = fakeApi(() => [500]);
    const { code, stdout } = await cli(
      [
        'gateway',
        'token',
        '--url',
        'http://127.0.0.1:8787',
        '--region',
        'eu-west-1',
        '--expires-in',
        '60',
        '--json',
      ],
      api.fetch,
    );
    expect(code).toBe(EXIT_OK);
    expect(api.requests).toEqual([]);
    const { token, expiresAt } = JSON.parse(stdout) as { token: string; expiresAt: number };
    const url = new URL(Buffer.from(token, 'base64url').toString());
    expect(`${url.origin}${url.pathname}`).toBe('http://127.0.0.1:8787/v1/whoami');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('60');
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(
      /^AKIDTOKENTEST\/\d{8}\/eu-west-1\/execute-api\/aws4_request$/,
    );
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(expiresAt).toBeGreaterThan(Date.now() + 50_000);
  });

  it.each([
    [['gateway', 'token', '--url', 'http://127.0.0.1:8787'], /pass --region/],
    [['gateway', 'token', '--region', 'us-east-1', '--expires-in', '901'], /--expires-in must be 1 to 900/],
    [['gateway', 'token', '--region', 'us-east-1', '--expires-in', '1.5'], /--expires-in must be 1 to 900/],
  ])('refuses %j', async (argv, message) => {
    const { code, stderr } = await cli(argv, fakeApi(() => [500]).fetch);
    expect(code).toBe(EXIT_USAGE);
    expect(stderr).toMatch(message);
  });
});
