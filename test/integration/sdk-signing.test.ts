/**
 * The SDK's and the CLI's SigV4 signing against the local gateway's verification (SLUICE_AUTH=iam, the
 * same checks API Gateway makes): signed requests of an allowed principal pass, the same client with a
 * wrong secret or without a region is refused with 401 SASL_AUTHENTICATION_FAILED, and a principal
 * whose policy does not cover a route gets 403.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_API_ERROR, EXIT_OK, run } from '../../cli/main.js';
import { SluiceClient } from '../../sdk/client.js';
import type { SluiceError } from '../../sdk/errors.js';
import type { AuthStack } from './auth-stack.js';
import { API_ARN, arn, invokePolicy, startAuthStack } from './auth-stack.js';

let t: AuthStack;
beforeAll(async () => {
  t = await startAuthStack([
    { name: 'admin', policies: [invokePolicy([`${API_ARN}/*`])] },
    { name: 'reader', policies: [invokePolicy([arn('GET', '/v1/topics')])] },
  ]);
}, 120_000);
afterAll(async () => {
  await t?.stop();
});

const errorOf = (promise: Promise<unknown>): Promise<SluiceError> =>
  promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e as SluiceError,
  );

describe('SigV4 from the SDK against the local gateway in SLUICE_AUTH=iam', () => {
  it('passes every request of an allowed principal: admin, idempotent binary produce, fetch', async () => {
    const client = new SluiceClient({ url: t.stack.url, region: 'us-east-1', credentials: t.keys['admin']! });
    await client.admin().createTopic({ name: 'signed-orders', partitions: 2 });
    const written = await client
      .producer()
      .sendBatch('signed-orders', 1, [{ key: 'k', value: 'signed', headers: { h: 'v' } }]);
    expect(written.baseOffset).toBe(0);
    const sent = await client
      .producer()
      .send({ topic: 'signed-orders', messages: [{ value: 'json', partition: 0 }] });
    expect(sent).toMatchObject([{ partition: 0, offset: 0 }]);
    const batch = await client.consumer().fetch('signed-orders', 1, 0);
    expect(batch.records.map((r) => new TextDecoder().decode(r.value!))).toEqual(['signed']);
    expect((await client.admin().listTopics()).map((topic) => topic.name)).toContain('signed-orders');
  });

  it('is refused with 401 when unsigned or signed with a wrong secret, and 403 outside the policy', async () => {
    const unsigned = await errorOf(new SluiceClient({ url: t.stack.url }).admin().listTopics());
    expect([unsigned.status, unsigned.code]).toEqual([401, 'SASL_AUTHENTICATION_FAILED']);
    const wrong = await errorOf(
      new SluiceClient({
        url: t.stack.url,
        region: 'us-east-1',
        credentials: { ...t.keys['admin']!, secretAccessKey: 'not-the-secret' },
      })
        .admin()
        .listTopics(),
    );
    expect([wrong.status, wrong.code]).toEqual([401, 'SASL_AUTHENTICATION_FAILED']);
    const reader = new SluiceClient({
      url: t.stack.url,
      region: 'us-east-1',
      credentials: t.keys['reader']!,
    });
    expect((await reader.admin().listTopics()).length).toBeGreaterThanOrEqual(1);
    const outside = await errorOf(reader.admin().describeTopic('signed-orders'));
    expect([outside.status, outside.code]).toEqual([403, 'TOPIC_AUTHORIZATION_FAILED']);
  });

  it('signs from the CLI with --region and the credentials in the environment', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: t.keys['admin']!.accessKeyId,
      AWS_SECRET_ACCESS_KEY: t.keys['admin']!.secretAccessKey,
    });
    delete process.env['AWS_SESSION_TOKEN'];
    delete process.env['AWS_PROFILE'];
    try {
      const out = { stdout: '', stderr: '' };
      const io = {
        stdout: { write: (s: string) => void (out.stdout += s) },
        stderr: { write: (s: string) => void (out.stderr += s) },
        env: {},
      };
      expect(await run(['topics', 'list', '--url', t.stack.url, '--region', 'us-east-1'], io)).toBe(EXIT_OK);
      expect(out.stdout).toContain('signed-orders');
      out.stderr = '';
      expect(await run(['topics', 'list', '--url', t.stack.url], io)).toBe(EXIT_API_ERROR);
      expect(out.stderr).toMatch(/^error: SASL_AUTHENTICATION_FAILED \(HTTP 401\)/);
    } finally {
      for (const k of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE']) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    }
  });
});
