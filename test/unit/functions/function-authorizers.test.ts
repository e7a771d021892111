/**
 * Every deployed API function's handler (functions/<job>.ts), configured as the CDK app configures it
 * (SLUICE_AUTHORIZER=iam), asks IAM's policy simulator about a Kafka gateway's delegated request
 * before serving it, so a principal named in Sluice-On-Behalf-Of is checked whichever function the
 * route reaches; without the setting the handler refuses delegation outright. IAM is a local fake
 * here (AWS_ENDPOINT_URL_IAM) that records what it is asked and allows nothing.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ApiGatewayV2Event, ApiGatewayV2Result } from '../../../lib/http/apigw.js';
import type { Job } from '../../../functions/route-table.js';

const GATEWAY = 'arn:aws:iam::111122223333:user/kafka-gateway';
const ALICE = 'arn:aws:iam::111122223333:user/alice';

/** One signed route of each function. */
const ROUTE: Record<Job, [string, string, unknown?]> = {
  admin: ['GET', '/v1/topics'],
  produce: ['POST', '/v1/topics/orders/records', { records: [{ value: 'x' }] }],
  fetch: ['POST', '/v1/fetch', { partitions: [{ topic: 'orders', partition: 0, offset: 0 }] }],
  groups: ['GET', '/v1/groups'],
  connect: ['GET', '/v1/connect/connectors'],
};

const delegated = (job: Job): ApiGatewayV2Event => {
  const [method, path, body] = ROUTE[job];
  return {
    version: '2.0',
    routeKey: `${method} ${path}`,
    rawPath: path,
    rawQueryString: '',
    headers: {
      'sluice-on-behalf-of': ALICE,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    requestContext: {
      http: { method, path },
      requestId: 'r1',
      accountId: '111122223333',
      apiId: 'abc123',
      stage: '$default',
      authorizer: { iam: { userArn: GATEWAY, accessKey: 'AKID' } },
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    isBase64Encoded: false,
  };
};

const asked: string[] = [];
const iam = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk: Buffer) => (body += chunk.toString()));
  request.on('end', () => {
    asked.push(decodeURIComponent(body));
    response.writeHead(403, { 'content-type': 'text/xml' });
    response.end(
      '<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>no</Message></Error><RequestId>1</RequestId></ErrorResponse>',
    );
  });
});

const ENV: Record<string, string> = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
  SLUICE_TABLE_NAME: 'sluice-test',
  SLUICE_BUCKETS: 'sluice-test-s0',
  AWS_MAX_ATTEMPTS: '1',
  POWERTOOLS_LOG_LEVEL: 'ERROR',
};

beforeAll(async () => {
  await new Promise<void>((resolve) => iam.listen(0, '127.0.0.1', resolve));
  ENV['AWS_ENDPOINT_URL_IAM'] = `http://127.0.0.1:${(iam.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => iam.close(resolve));
});
beforeEach(() => {
  asked.length = 0;
  vi.resetModules();
  vi.unstubAllEnvs();
  for (const [name, value] of Object.entries(ENV)) vi.stubEnv(name, value);
});

const ROOTS: Record<Job, () => Promise<unknown>> = {
  admin: () => import('../../../functions/admin.js'),
  produce: () => import('../../../functions/produce.js'),
  fetch: () => import('../../../functions/fetch.js'),
  groups: () => import('../../../functions/groups.js'),
  connect: () => import('../../../functions/connect.js'),
};

const handlerOf = async (job: Job) => {
  // The lines the refusals log stay out of the test's output (the modules were just reset).
  const environment = await import('../../../functions/environment.js');
  environment.setTelemetrySink({ log: () => {}, emf: () => {} });
  const root = (await ROOTS[job]()) as {
    handler: (event: ApiGatewayV2Event) => Promise<ApiGatewayV2Result>;
  };
  return root.handler;
};

const errorCode = (result: ApiGatewayV2Result) =>
  (JSON.parse(result.body ?? '{}') as { error?: { code?: string } }).error?.code;

// Each case imports a whole function root afresh (the modules are reset): seconds on a loaded machine.
describe("every API function's handler checks a delegated caller", { timeout: 30_000 }, () => {
  it.each(Object.keys(ROUTE) as Job[])(
    '%s asks IAM whether the gateway may act for the principal (SLUICE_AUTHORIZER=iam)',
    async (job) => {
      vi.stubEnv('SLUICE_AUTHORIZER', 'iam');
      const result = await (await handlerOf(job))(delegated(job));
      expect(result.statusCode).not.toBe(200);
      expect(asked.length).toBeGreaterThan(0);
      expect(asked[0]).toContain('Action=SimulatePrincipalPolicy');
      expect(asked[0]).toContain(`PolicySourceArn=${GATEWAY}`);
      expect(asked[0]).toContain(`/v1/delegation/${encodeURIComponent(ALICE)}`);
    },
  );

  it.each(Object.keys(ROUTE) as Job[])(
    '%s refuses delegation without an authorizer, asking IAM nothing',
    async (job) => {
      const result = await (await handlerOf(job))(delegated(job));
      expect([result.statusCode, errorCode(result)]).toEqual([403, 'CLUSTER_AUTHORIZATION_FAILED']);
      expect(asked).toEqual([]);
    },
  );
});
