/**
 * SLUICE_AUTH=iam's files and start-up: a bad credentials or policy file, or an unknown mode, stops the
 * local stack with the reason before anything is started or listens; and a route without an ACL row
 * is still checked on its path.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusal, routeCheck } from '../../../lib/auth/acl.js';
import { loadCredentials, loadPolicies } from '../../../local/auth/files.js';
import { startLocalStack } from '../../../local/stack.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-auth-files-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const file = async (name: string, content: unknown): Promise<string> => {
  const path = join(dir, name);
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
};

const KEY = { accessKeyId: 'AKID1', secretAccessKey: 's', principalArn: 'arn:aws:iam::111122223333:user/a' };

describe('credentials file', () => {
  it('maps each access key to its credential', async () => {
    const keys = await loadCredentials(
      await file('ok-keys.json', { credentials: [KEY, { ...KEY, accessKeyId: 'ASIA2', sessionToken: 't' }] }),
    );
    expect([...keys.entries()]).toEqual([
      ['AKID1', KEY],
      ['ASIA2', { ...KEY, accessKeyId: 'ASIA2', sessionToken: 't' }],
    ]);
  });

  it.each([
    ['not JSON', '{', /is not JSON/],
    ['no credentials array', { keys: [] }, /needs a "credentials" array/],
    [
      'a missing secret',
      { credentials: [{ ...KEY, secretAccessKey: '' }] },
      /credentials\[0\]\.secretAccessKey/,
    ],
    [
      'a principal that is not an ARN',
      { credentials: [{ ...KEY, principalArn: 'alice' }] },
      /principalArn must be/,
    ],
    ['a key listed twice', { credentials: [KEY, KEY] }, /listed twice/],
  ])('refuses %s', async (name, content, message) => {
    await expect(loadCredentials(await file(`${name}.json`, content))).rejects.toThrow(message);
  });

  it('names the file it cannot read', async () => {
    await expect(loadCredentials(join(dir, 'absent.json'))).rejects.toThrow(
      /absent\.json: cannot read \(ENOENT\)/,
    );
  });
});

describe('policy file', () => {
  it('takes one document or a list per principal', async () => {
    const doc = {
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: '*' }],
    };
    const policies = await loadPolicies(
      await file('ok-policy.json', {
        principals: {
          'arn:aws:iam::111122223333:user/a': doc,
          'arn:aws:iam::111122223333:role/r': [doc, doc],
        },
      }),
    );
    expect(policies.get('arn:aws:iam::111122223333:user/a')).toEqual([doc]);
    expect(policies.get('arn:aws:iam::111122223333:role/r')).toHaveLength(2);
  });

  it('refuses a document IAM would read differently, naming where', async () => {
    const path = await file('cond.json', {
      principals: {
        'arn:aws:iam::111122223333:user/a': {
          Statement: [
            {
              Effect: 'Deny',
              Action: '*',
              Resource: '*',
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            },
          ],
        },
      },
    });
    await expect(loadPolicies(path)).rejects.toThrow(
      'principals["arn:aws:iam::111122223333:user/a"][0].Statement[0] has unsupported key(s): Condition',
    );
  });
});

describe('local stack start-up', () => {
  it('refuses an unknown SLUICE_AUTH and a bad file before starting anything', async () => {
    await expect(startLocalStack({ port: 0, env: { SLUICE_AUTH: 'yes' } })).rejects.toThrow(
      'SLUICE_AUTH must be "open" or "iam", not "yes"',
    );
    await expect(startLocalStack({ port: 0, env: { SLUICE_AUTH: 'iam' } })).rejects.toThrow(
      'SLUICE_AUTH=iam needs SLUICE_AUTH_KEYS (or a data directory holding credentials.json)',
    );
    const keys = await file('start-keys.json', { credentials: [KEY] });
    await expect(
      startLocalStack({
        port: 0,
        env: {
          SLUICE_AUTH: 'iam',
          SLUICE_AUTH_KEYS: keys,
          SLUICE_AUTH_POLICY: join(dir, 'missing-policy.json'),
        },
      }),
    ).rejects.toThrow(/missing-policy\.json: cannot read/);
  });
});

describe('a route without an ACL row', () => {
  it('is checked on its path and refused as the cluster, naming only the request', () => {
    const check = routeCheck({ method: 'PUT' }, '/v1/connect/connectors/s3/config', {
      name: 's3',
    });
    expect(check).toEqual({
      operation: 'ALL',
      resourceType: 'CLUSTER',
      resource: 'kafka-cluster',
      method: 'PUT',
      path: '/v1/connect/connectors/s3/config',
    });
    expect([refusal(check).code, refusal(check).message]).toEqual([
      'CLUSTER_AUTHORIZATION_FAILED',
      'not authorized to call PUT /v1/connect/connectors/s3/config',
    ]);
  });
});
