/**
 * What the bundles leave out of the SDK (infra/bundling.ts) rests on facts about the pinned SDK; each
 * is checked here against the installed packages, so an SDK upgrade that changes one fails this test
 * rather than a deployed function.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SDK_OPERATIONS, declaredErrors, registerOnly } from '../../infra/bundling.js';

const require = createRequire(import.meta.url);
/** A client package's directory (its package.json's). */
const clientDir = (client: string) => path.dirname(require.resolve(`@aws-sdk/${client}/package.json`));
const CLIENTS = [
  'client-s3',
  'client-dynamodb',
  'client-dynamodb-streams',
  'client-lambda',
  'client-apigatewaymanagementapi',
];

/** Every ES module file of a client, as text. */
const sources = (client: string): string[] => {
  const root = path.join(clientDir(client), 'dist-es');
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.js'))
    .map((f) => readFileSync(path.join(root, f), 'utf8'));
};

describe('what the bundles leave out of the SDK', () => {
  it('keeps the registrations of the declared errors and the base exception only', () => {
    const source = [
      '_s_registry.registerError(DynamoDBServiceException$, DynamoDBServiceException);',
      'n0_registry.registerError(BackupInUseException$, BackupInUseException);',
      'n0_registry.registerError(ConditionalCheckFailedException$, ConditionalCheckFailedException);',
    ].join('\n');
    expect(registerOnly(source, new Set(['ConditionalCheckFailedException'])).split('\n')).toEqual([
      '_s_registry.registerError(DynamoDBServiceException$, DynamoDBServiceException);',
      '',
      'n0_registry.registerError(ConditionalCheckFailedException$, ConditionalCheckFailedException);',
    ]);
  });

  it('reads the errors an operation declares from its command', async () => {
    const errors = await declaredErrors(clientDir('client-dynamodb'), ['PutItem', 'TransactWriteItems']);
    for (const e of [
      'ConditionalCheckFailedException',
      'TransactionCanceledException',
      'ThrottlingException',
    ])
      expect([e, errors.has(e)]).toEqual([e, true]);
    expect(errors.has('BackupInUseException')).toBe(false);
    await expect(declaredErrors(clientDir('client-dynamodb'), ['NoSuchOperation'])).rejects.toThrow();
  });

  it('registers every error lib/adapters/aws reads by its class or fields', async () => {
    const dynamodb = await declaredErrors(clientDir('client-dynamodb'), SDK_OPERATIONS['client-dynamodb']!);
    const s3 = await declaredErrors(clientDir('client-s3'), SDK_OPERATIONS['client-s3']!);
    for (const e of ['ConditionalCheckFailedException', 'TransactionCanceledException'])
      expect([e, dynamodb.has(e)]).toEqual([e, true]);
    for (const e of ['NoSuchKey', 'NotFound']) expect([e, s3.has(e)]).toEqual([e, true]);
  });

  it('no client reads the endpoint-discovery cache (functions/endpoint-cache-absent.ts)', () => {
    for (const client of CLIENTS) {
      const readers = sources(client).filter((s) => /getEndpointDiscoveryPlugin|\.endpointCache\b/.test(s));
      expect([client, readers.length]).toEqual([client, 0]);
    }
  });

  it("the clients read only their package.json's version", () => {
    for (const client of CLIENTS) {
      const fields = sources(client).flatMap((s) =>
        [...s.matchAll(/\bpackageInfo\.(\w+)/g)].map((m) => m[1]),
      );
      expect([client, [...new Set(fields)]]).toEqual([client, ['version']]);
    }
  });

  it('node:crypto has every hash whose JavaScript fallback is left out (functions/hash-fallbacks-absent.ts)', () => {
    for (const algorithm of ['sha256', 'sha1', 'md5'])
      expect(createHash(algorithm).update('x').digest('hex').length).toBeGreaterThan(0);
  });
});
