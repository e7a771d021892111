/**
 * Starts the local stack in this test worker against the emulators of the global setup, with a table
 * and bucket of its own, and gives tests a small HTTP client that speaks the API over real sockets.
 */
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import type { LocalStack, LocalStackOptions } from '../../local/stack.js';
import { startLocalStack } from '../../local/stack.js';

export interface TestStack {
  stack: LocalStack;
  url: string;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
}

export interface Reply {
  status: number;
  headers: Headers;
  // Tests read fields of many shapes; the assertions are what check them.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  bytes: Uint8Array;
}

export const startTestStack = async (
  options: Pick<LocalStackOptions, 'telemetryLog'> = {},
): Promise<TestStack> => {
  const suffix = randomUUID().slice(0, 8);
  const stack = await startLocalStack({
    ...options,
    port: 0,
    maintenanceIntervalMs: 0,
    env: {
      ...process.env,
      AWS_ENDPOINT_URL_S3: inject('s3Endpoint'),
      AWS_ENDPOINT_URL_DYNAMODB: inject('dynamodbEndpoint'),
      SLUICE_TABLE_NAME: `it-${suffix}`,
      SLUICE_BUCKETS: `it-${suffix}`,
      SLUICE_SEGMENT_BUCKET: `it-${suffix}-segments`,
    },
  });
  return {
    stack,
    url: stack.url,
    call: (method, path, body, headers) => call(stack.url, method, path, body, headers),
  };
};

export const call = async (
  url: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> => {
  const raw =
    body instanceof Uint8Array
      ? body
      : typeof body === 'string'
        ? body
        : body === undefined
          ? undefined
          : JSON.stringify(body);
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { ...(typeof raw === 'string' ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(raw === undefined ? {} : { body: raw }),
  });
  const bytes = new Uint8Array(await response.arrayBuffer());
  const type = response.headers.get('content-type') ?? '';
  const json =
    type.includes('json') && bytes.length > 0 ? JSON.parse(Buffer.from(bytes).toString('utf8')) : undefined;
  return { status: response.status, headers: response.headers, json, bytes };
};
