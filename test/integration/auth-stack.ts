/**
 * The local stack in SLUICE_AUTH=iam mode for the authorization tests: a credentials file and a policy
 * file in a temp dir, signed calls (the AWS SDK's signer), and a snapshot of everything stored (every
 * table item, every object key, the storage meters and handler invocations) to prove that a refused
 * request wrote nothing and looked nothing up.
 */
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { inject } from 'vitest';
import { createAwsClients } from '../../lib/adapters/aws/clients.js';
import type { PolicyDocument } from '../../lib/auth/policy.js';
import type { RouteGrant } from '../../lib/auth/grants.js';
import { invocations, meters } from '../../local/runtime.js';
import type { LocalStack } from '../../local/stack.js';
import { startLocalStack } from '../../local/stack.js';
import type { TestKey } from '../support/sigv4.js';
import { signHeaders } from '../support/sigv4.js';
import type { Reply } from './stack.js';

export const API_ARN = 'arn:aws:execute-api:us-east-1:000000000000:sluice-local/$default';

export const invokePolicy = (allow: readonly string[], deny: readonly string[] = []): PolicyDocument => ({
  Version: '2012-10-17',
  Statement: [
    ...(allow.length > 0
      ? [{ Effect: 'Allow' as const, Action: 'execute-api:Invoke', Resource: [...allow] }]
      : []),
    ...(deny.length > 0
      ? [{ Effect: 'Deny' as const, Action: 'execute-api:Invoke', Resource: [...deny] }]
      : []),
  ],
});

/** `METHOD /path` → its ARN under the local API. */
export const arn = (method: string, path: string): string => `${API_ARN}/${method}${path}`;
export const grantArns = (grants: readonly RouteGrant[]): string[] =>
  grants.map((g) => arn(g.method, g.path));

export interface Principal {
  name: string;
  policies: PolicyDocument[];
}

export interface AuthStack {
  stack: LocalStack;
  keys: Record<string, TestKey>;
  /** A signed call as `principal`; `tamper` changes the request after signing. */
  call(principal: string | undefined, method: string, path: string, options?: CallOptions): Promise<Reply>;
  snapshot(): Promise<Snapshot>;
  stop(): Promise<void>;
}

export interface CallOptions {
  body?: unknown;
  /** More headers, signed with the rest. */
  headers?: Record<string, string>;
  contentType?: string;
  /** Sign at this time instead of now. */
  signedAt?: Date;
  tamper?: (request: Tamperable) => Tamperable;
  /**
   * Send the path byte for byte over node:http and sign that very path: fetch's URL parser would
   * resolve `.`/`..` and `\\` before the gateway ever saw them.
   */
  raw?: boolean;
}

/** What a signed request looks like on the wire, for a test to change after signing. */
export interface Tamperable {
  path: string;
  body: Uint8Array | undefined;
  headers: Record<string, string>;
}

export interface Snapshot {
  items: string[];
  objects: string[];
  metadataWrites: number;
  metadataReads: number;
  objectPuts: number;
  objectGets: number;
  invocations: number;
}

/** One request with its target sent exactly as given (no URL normalisation). */
const rawCall = (base: string, method: string, sent: Tamperable): Promise<Reply> =>
  new Promise<Reply>((resolve, reject) => {
    const { hostname, port } = new URL(base);
    const req = httpRequest(
      { host: hostname, port: Number(port), method, path: sent.path, headers: sent.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const bytes = new Uint8Array(Buffer.concat(chunks));
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
          const json =
            (res.headers['content-type'] ?? '').includes('json') && bytes.length > 0
              ? JSON.parse(Buffer.from(bytes).toString('utf8'))
              : undefined;
          resolve({ status: res.statusCode ?? 0, headers, json, bytes });
        });
      },
    );
    req.on('error', reject);
    req.end(sent.body ? Buffer.from(sent.body) : undefined);
  });

export const startAuthStack = async (
  principals: readonly Principal[],
  options: { kafkaPort?: number } = {},
): Promise<AuthStack> => {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-auth-'));
  const keys: Record<string, TestKey> = {};
  const credentials = principals.map((p, i) => {
    keys[p.name] = { accessKeyId: `AKIDTEST${i}${p.name.toUpperCase()}`, secretAccessKey: randomUUID() };
    return { ...keys[p.name], principalArn: `arn:aws:iam::111122223333:user/${p.name}` };
  });
  await writeFile(join(dir, 'keys.json'), JSON.stringify({ credentials }));
  await writeFile(
    join(dir, 'policy.json'),
    JSON.stringify({
      principals: Object.fromEntries(
        principals.map((p) => [`arn:aws:iam::111122223333:user/${p.name}`, p.policies]),
      ),
    }),
  );
  const suffix = randomUUID().slice(0, 8);
  const stack = await startLocalStack({
    port: 0,
    maintenanceIntervalMs: 0,
    ...(options.kafkaPort !== undefined ? { kafkaPort: options.kafkaPort } : {}),
    env: {
      ...process.env,
      AWS_ENDPOINT_URL_S3: inject('s3Endpoint'),
      AWS_ENDPOINT_URL_DYNAMODB: inject('dynamodbEndpoint'),
      SLUICE_TABLE_NAME: `auth-${suffix}`,
      SLUICE_BUCKETS: `auth-${suffix}`,
      SLUICE_AUTH: 'iam',
      SLUICE_AUTH_KEYS: join(dir, 'keys.json'),
      SLUICE_AUTH_POLICY: join(dir, 'policy.json'),
      AWS_REGION: 'us-east-1',
    },
  });
  const clients = createAwsClients({ endpoints: stack.endpoints });

  const call: AuthStack['call'] = async (principal, method, path, options = {}) => {
    const raw =
      options.body === undefined
        ? undefined
        : options.body instanceof Uint8Array
          ? options.body
          : Buffer.from(JSON.stringify(options.body));
    const type =
      options.contentType ?? (raw && !(options.body instanceof Uint8Array) ? 'application/json' : undefined);
    const headers: Record<string, string> = {
      ...(type ? { 'content-type': type } : {}),
      ...options.headers,
    };
    const signed =
      principal === undefined
        ? headers
        : await signHeaders({
            method,
            url: `${stack.url}${path}`,
            headers,
            ...(raw ? { body: raw } : {}),
            key: keys[principal]!,
            ...(options.signedAt ? { signingDate: options.signedAt } : {}),
            ...(options.raw ? { rawPath: path.split('?')[0]! } : {}),
          });
    const wire = {
      path,
      body: raw,
      headers: Object.fromEntries(Object.entries(signed).map(([k, v]) => [k.toLowerCase(), v])),
    };
    const sent = options.tamper ? options.tamper(wire) : wire;
    if (options.raw) return rawCall(stack.url, method, sent);
    const response = await fetch(`${stack.url}${sent.path}`, {
      method,
      headers: Object.fromEntries(Object.entries(sent.headers).filter(([name]) => name !== 'host')),
      ...(sent.body ? { body: sent.body } : {}),
    });
    const bytes = new Uint8Array(await response.arrayBuffer());
    const json =
      (response.headers.get('content-type') ?? '').includes('json') && bytes.length > 0
        ? JSON.parse(Buffer.from(bytes).toString('utf8'))
        : undefined;
    return { status: response.status, headers: response.headers, json, bytes };
  };

  const snapshot = async (): Promise<Snapshot> => {
    const items: string[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await clients.dynamodb.send(
        new ScanCommand({
          TableName: stack.tableName,
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start as never } : {}),
        }),
      );
      items.push(...(page.Items ?? []).map((item) => JSON.stringify(item)));
      start = page.LastEvaluatedKey;
    } while (start);
    const objects: string[] = [];
    let token: string | undefined;
    do {
      const page = await clients.s3.send(
        new ListObjectsV2Command({
          Bucket: stack.buckets[0]!,
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      objects.push(...(page.Contents ?? []).map((o) => `${o.Key}:${o.Size}`));
      token = page.NextContinuationToken;
    } while (token);
    const m = meters.metadata.read();
    const o = meters.objects.read();
    return {
      items: items.sort(),
      objects: objects.sort(),
      metadataWrites: m.metadataWrites,
      metadataReads: m.metadataReads,
      objectPuts: o.objectPuts,
      objectGets: o.objectGets,
      invocations: Object.values(invocations).reduce((a, b) => a + b, 0),
    };
  };

  return {
    stack,
    keys,
    call,
    snapshot,
    stop: async () => {
      clients.s3.destroy();
      clients.dynamodb.destroy();
      await stack.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
};
