import type { CfnElement } from 'aws-cdk-lib';
import { deployment } from '../../bench/cost-model.js';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SluiceStack } from '../../infra/sluice-stack.js';
import { sluiceApp } from './app.js';
import {
  actionMatches,
  allows,
  props,
  referencedId,
  resources,
  resourcesOfType,
  roleStatements,
} from './template.js';
import type { CfnResource, PolicyStatement } from './template.js';

type Job =
  | 'admin'
  | 'produce'
  | 'fetch'
  | 'groups'
  | 'connect'
  | 'connect-worker'
  | 'maintenance'
  | 'wait'
  | 'wait-notifier';
const JOBS: Job[] = [
  'admin',
  'produce',
  'fetch',
  'groups',
  'connect',
  'connect-worker',
  'maintenance',
  'wait',
  'wait-notifier',
];

// API.md, written out independently of infra/constructs/sluice-api.ts: route key → serving function.
const API_MD_ROUTES: Record<string, Job> = {
  'GET /v1/health': 'admin',
  'GET /v1/cluster': 'admin',
  'GET /v1/whoami': 'admin',
  'POST /v1/topics': 'admin',
  'POST /v1/topics/{topic}/elect-leaders': 'admin',
  'GET /v1/topics': 'admin',
  'GET /v1/topics/{topic}': 'admin',
  'PATCH /v1/topics/{topic}': 'admin',
  'DELETE /v1/topics/{topic}': 'admin',
  'POST /v1/topics/{topic}/records': 'produce',
  'POST /v1/topics/{topic}/partitions/{partition}/batches': 'produce',
  'POST /v1/producers': 'produce',
  'POST /v1/transactions/{transactionalId}/producer': 'groups',
  'POST /v1/transactions/{transactionalId}/partitions': 'groups',
  'POST /v1/transactions/{transactionalId}/groups': 'groups',
  'POST /v1/transactions/{transactionalId}/offsets': 'groups',
  'POST /v1/transactions/{transactionalId}/end': 'groups',
  'GET /v1/transactions': 'admin',
  'GET /v1/transactions/{transactionalId}': 'admin',
  'GET /v1/topics/{topic}/partitions/{partition}/records': 'fetch',
  'POST /v1/fetch': 'fetch',
  'GET /v1/topics/{topic}/partitions/{partition}/offsets': 'fetch',
  'GET /v1/streams/{app}/stores/{store}/keys/{key}': 'fetch',
  'GET /v1/streams/{app}/stores/{store}/keys': 'fetch',
  'POST /v1/groups/{group}/heartbeat': 'groups',
  'POST /v1/groups/{group}/classic': 'groups',
  'POST /v1/groups/{group}/offsets': 'groups',
  'GET /v1/groups/{group}/offsets': 'groups',
  'DELETE /v1/groups/{group}/offsets': 'groups',
  'POST /v1/groups/{group}/offsets/reset': 'groups',
  'GET /v1/groups': 'groups',
  'GET /v1/groups/{group}': 'groups',
  'DELETE /v1/groups/{group}': 'groups',
  'GET /v1/connect/connectors': 'connect',
  'POST /v1/connect/connectors': 'connect',
  'GET /v1/connect/connectors/{connector}': 'connect',
  'DELETE /v1/connect/connectors/{connector}': 'connect',
  'GET /v1/connect/connectors/{connector}/config': 'connect',
  'PUT /v1/connect/connectors/{connector}/config': 'connect',
  'GET /v1/connect/connectors/{connector}/status': 'connect',
  'GET /v1/connect/connectors/{connector}/tasks': 'connect',
  'GET /v1/connect/connectors/{connector}/tasks/{task}/status': 'connect',
  'POST /v1/connect/connectors/{connector}/tasks/{task}/restart': 'connect',
  'PUT /v1/connect/connectors/{connector}/pause': 'connect',
  'PUT /v1/connect/connectors/{connector}/resume': 'connect',
  'PUT /v1/connect/connectors/{connector}/stop': 'connect',
  'POST /v1/connect/connectors/{connector}/restart': 'connect',
  'GET /v1/connect/connectors/{connector}/offsets': 'connect',
  'PATCH /v1/connect/connectors/{connector}/offsets': 'connect',
  'DELETE /v1/connect/connectors/{connector}/offsets': 'connect',
  'GET /v1/connect/connector-plugins': 'connect',
  'PUT /v1/connect/connector-plugins/{plugin}/config/validate': 'connect',
  'GET /v1/client-quotas': 'admin',
  'GET /v1/topics/{topic}/segments': 'admin',
  'GET /v1/streams': 'groups',
  'GET /v1/streams/{app}': 'groups',
  'POST /v1/client-quotas': 'admin',
};

const SIZING: Record<Job, { memory: number; timeoutSeconds: number }> = {
  admin: { memory: 256, timeoutSeconds: 30 },
  produce: { memory: 512, timeoutSeconds: 30 },
  fetch: { memory: 256, timeoutSeconds: 30 },
  groups: { memory: 256, timeoutSeconds: 30 },
  connect: { memory: 256, timeoutSeconds: 15 },
  'connect-worker': { memory: 1024, timeoutSeconds: 90 },
  maintenance: { memory: 1024, timeoutSeconds: 300 },
  wait: { memory: 128, timeoutSeconds: 10 },
  'wait-notifier': { memory: 128, timeoutSeconds: 30 },
};

const TABLE_WRITES = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
];

let stack: SluiceStack;
let template: Template;
let functionIds: Record<Job, string>;
let roleIds: Record<Job, string>;
let statements: Record<Job, PolicyStatement[]>;
// A second deployment configured through context the way `cdk deploy -c key=value` passes it (strings).
let configured: Template;
let configuredStack: SluiceStack;

beforeAll(() => {
  stack = sluiceApp().stack;
  template = Template.fromStack(stack);
  functionIds = {} as Record<Job, string>;
  roleIds = {} as Record<Job, string>;
  statements = {} as Record<Job, PolicyStatement[]>;
  for (const job of JOBS) {
    functionIds[job] = stack.getLogicalId(stack.functions.functions[job].node.defaultChild as CfnElement);
    const roleId = referencedId(props(resources(template)[functionIds[job]]).Role);
    if (!roleId) throw new Error(`${job} has no role`);
    roleIds[job] = roleId;
    statements[job] = roleStatements(template, roleId);
  }

  configuredStack = sluiceApp({
    context: {
      'sluice:deletionProtection': 'false',
      'sluice:storeCount': '2',
      'sluice:clusterId': 'test-cluster',
      'sluice:maxRequestBytes': '1048576',
    },
  }).stack;
  configured = Template.fromStack(configuredStack);
});

function fn(job: Job): Record<string, unknown> {
  return props(resources(template)[functionIds[job]]);
}

describe('HTTP API', () => {
  function routes(): { key: string; auth: unknown; target: Job | undefined }[] {
    const all = resources(template);
    const jobByFunctionId = new Map(JOBS.map((j) => [functionIds[j], j]));
    // The HTTP API's routes (the wait socket's WebSocket API is test/infra/wait-socket.test.ts's).
    const httpApiId = stack.getLogicalId(stack.api.httpApi.node.defaultChild as CfnElement);
    return resourcesOfType(template, 'AWS::ApiGatewayV2::Route')
      .filter(([, route]) => referencedId(props(route).ApiId) === httpApiId)
      .map(([, route]) => {
        const p = props(route);
        const integrationId = JSON.stringify(p.Target).match(/"Ref":"([A-Za-z0-9]+)"/)?.[1] ?? '';
        const integration: CfnResource | undefined = all[integrationId];
        const functionId = integration ? referencedId(props(integration).IntegrationUri) : undefined;
        return {
          key: String(p.RouteKey),
          auth: p.AuthorizationType,
          target: jobByFunctionId.get(functionId ?? ''),
        };
      });
  }

  it('has exactly the routes of API.md', () => {
    expect(
      routes()
        .map((r) => r.key)
        .sort(),
    ).toEqual(Object.keys(API_MD_ROUTES).sort());
  });

  it('sends each route to its function', () => {
    const actual = Object.fromEntries(routes().map((r) => [r.key, r.target]));
    expect(actual).toEqual(API_MD_ROUTES);
  });

  it('requires AWS_IAM on every route except health, which is open', () => {
    const auth = Object.fromEntries(routes().map((r) => [r.key, r.auth]));
    for (const key of Object.keys(API_MD_ROUTES)) {
      expect([key, auth[key]]).toEqual([key, key === 'GET /v1/health' ? 'NONE' : 'AWS_IAM']);
    }
    expect(resourcesOfType(template, 'AWS::ApiGatewayV2::Authorizer')).toHaveLength(0);
  });

  it('has an auto-deployed $default stage with throttling and JSON access logs to a log group', () => {
    // Two stages: this one and the wait socket's (test/infra/wait-socket.test.ts).
    template.resourceCountIs('AWS::ApiGatewayV2::Stage', 2);
    const [[, stage]] = resourcesOfType(template, 'AWS::ApiGatewayV2::Stage').filter(
      ([, st]) => props(st).StageName === '$default',
    ) as [[string, CfnResource]];
    const p = props(stage);
    expect(p.StageName).toBe('$default');
    expect(p.AutoDeploy).toBe(true);
    expect(p.DefaultRouteSettings).toEqual({ ThrottlingBurstLimit: 2000, ThrottlingRateLimit: 1000 });
    const logs = p.AccessLogSettings as { DestinationArn: unknown; Format: string };
    expect(resources(template)[referencedId(logs.DestinationArn) ?? '']?.Type).toBe('AWS::Logs::LogGroup');
    expect(JSON.parse(logs.Format)).toMatchObject({
      requestId: '$context.requestId',
      status: '$context.status',
    });
  });

  it('only lets API Gateway invoke the routed functions, and only from this API', () => {
    for (const job of ['admin', 'produce', 'fetch', 'groups'] as const) {
      template.hasResourceProperties('AWS::Lambda::Permission', {
        Action: 'lambda:InvokeFunction',
        FunctionName: { 'Fn::GetAtt': [functionIds[job], 'Arn'] },
        Principal: 'apigateway.amazonaws.com',
        SourceArn: Match.anyValue(),
      });
    }
    for (const [, permission] of resourcesOfType(template, 'AWS::Lambda::Permission')) {
      expect(props(permission).SourceArn).toBeDefined();
    }
  });
});

describe('stateful resources', () => {
  it('keep pinned logical ids, so refactoring constructs never replaces data', () => {
    const all = resources(template);
    expect([all.StorageStore0?.Type, all.StorageAccessLogs?.Type, all.MetadataTable?.Type]).toEqual([
      'AWS::S3::Bucket',
      'AWS::S3::Bucket',
      'AWS::DynamoDB::Table',
    ]);
  });
});

describe('log storage', () => {
  const storeBuckets = (t: Template) =>
    resourcesOfType(t, 'AWS::S3::Bucket').filter(([id]) => /^StorageStore\d+$/.test(id));

  it('has one store bucket by default and storeCount when configured, plus an access log bucket', () => {
    expect(storeBuckets(template).map(([id]) => id)).toEqual(['StorageStore0']);
    expect(storeBuckets(configured).map(([id]) => id)).toEqual(['StorageStore0', 'StorageStore1']);
    expect(resources(template).StorageAccessLogs?.Type).toBe('AWS::S3::Bucket');
  });

  it('blocks all public access, encrypts with SSE-S3, keeps no versions, and is retained', () => {
    const buckets = resourcesOfType(template, 'AWS::S3::Bucket');
    expect(buckets.map(([id]) => id).sort()).toEqual(['Segments', 'StorageAccessLogs', 'StorageStore0']);
    for (const [id, bucket] of buckets) {
      const p = props(bucket);
      expect([id, p.PublicAccessBlockConfiguration]).toEqual([
        id,
        {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
      ]);
      expect(p.BucketEncryption).toEqual({
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      });
      expect(p.VersioningConfiguration).toBeUndefined();
      expect([bucket.DeletionPolicy, bucket.UpdateReplacePolicy]).toEqual(['Retain', 'Retain']);
    }
  });

  it('denies every request without TLS, on the bucket and its objects', () => {
    for (const [id] of resourcesOfType(template, 'AWS::S3::Bucket')) {
      template.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: id },
        PolicyDocument: {
          Statement: Match.arrayWith([
            {
              Effect: 'Deny',
              Action: 's3:*',
              Principal: { AWS: '*' },
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
              Resource: [
                { 'Fn::GetAtt': [id, 'Arn'] },
                { 'Fn::Join': ['', [{ 'Fn::GetAtt': [id, 'Arn'] }, '/*']] },
              ],
            },
          ]),
        },
      });
    }
  });

  it('aborts incomplete multipart uploads after a day and expires tmp/', () => {
    for (const [, bucket] of storeBuckets(configured)) {
      const rules = (props(bucket).LifecycleConfiguration as { Rules: Record<string, unknown>[] }).Rules;
      expect(rules).toContainEqual(
        expect.objectContaining({
          AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
          Status: 'Enabled',
        }),
      );
      expect(rules).toContainEqual(
        expect.objectContaining({ Prefix: 'tmp/', ExpirationInDays: 1, Status: 'Enabled' }),
      );
      // Nothing outside tmp/ expires: record data lives until Sluice's own retention deletes it.
      for (const rule of rules) {
        if (rule.ExpirationInDays !== undefined) expect(rule.Prefix).toBe('tmp/');
      }
    }
  });

  it('has one segment bucket whatever the store count, logged under segments/, expiring nothing', () => {
    for (const t of [template, configured]) {
      const segments = resourcesOfType(t, 'AWS::S3::Bucket').filter(([id]) => id === 'Segments');
      expect(segments).toHaveLength(1);
      const p = props(segments[0]![1]);
      expect(p.LoggingConfiguration).toEqual({
        DestinationBucketName: { Ref: 'StorageAccessLogs' },
        LogFilePrefix: 'segments/',
      });
      const rules = (p.LifecycleConfiguration as { Rules: Record<string, unknown>[] }).Rules;
      // Segments are deleted by Sluice's retention, compaction and collector only.
      expect(rules.filter((r) => r.ExpirationInDays !== undefined)).toEqual([]);
    }
  });

  it('sends server access logs of each store to the log bucket under its store id', () => {
    expect(storeBuckets(configured).map(([, b]) => props(b).LoggingConfiguration)).toEqual([
      { DestinationBucketName: { Ref: 'StorageAccessLogs' }, LogFilePrefix: 's0/' },
      { DestinationBucketName: { Ref: 'StorageAccessLogs' }, LogFilePrefix: 's1/' },
    ]);
  });
});

describe('metadata table', () => {
  it('is pk/sk strings, on demand, with PITR, TTL on expiresAt, AWS-managed encryption, retained', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      Properties: {
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
        SSESpecification: { SSEEnabled: true },
        GlobalSecondaryIndexes: Match.absent(),
      },
    });
  });

  it('has deletion protection by default and not when configured off', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', { DeletionProtectionEnabled: true });
    configured.hasResourceProperties('AWS::DynamoDB::Table', { DeletionProtectionEnabled: false });
  });
});

describe('functions', () => {
  // The cost model prices the functions at the sizes infra deploys (bench/cost-model.ts deployment()).
  it('deploys the memory sizes the cost model prices', () => {
    for (const d of [deployment(1, 'standard'), deployment(3, 'express')]) {
      expect(d.architecture).toBe('arm64');
      expect(d.memoryMb).toEqual({
        produce: SIZING.produce.memory,
        fetch: SIZING.fetch.memory,
        groups: SIZING.groups.memory,
        maintenance: SIZING.maintenance.memory,
      });
    }
  });

  it.each(JOBS)('%s runs nodejs22.x on arm64 with its memory and timeout', (job) => {
    const p = fn(job);
    expect([p.Runtime, p.Architectures]).toEqual(['nodejs22.x', ['arm64']]);
    expect([p.MemorySize, p.Timeout]).toEqual([SIZING[job].memory, SIZING[job].timeoutSeconds]);
    expect(p.ReservedConcurrentExecutions).toBeUndefined();
  });

  it.each(JOBS)('%s gets the Sluice environment', (job) => {
    expect((fn(job).Environment as { Variables: unknown }).Variables).toEqual({
      SLUICE_TABLE_NAME: { Ref: 'MetadataTable' },
      SLUICE_BUCKETS: { Ref: 'StorageStore0' },
      SLUICE_CLUSTER_ID: { 'Fn::Select': [2, { 'Fn::Split': ['/', { Ref: 'AWS::StackId' }] }] },
      SLUICE_MAX_REQUEST_BYTES: '4194304',
      SLUICE_SEGMENT_BUCKET: { Ref: 'Segments' },
      NODE_OPTIONS: '--enable-source-maps',
      // API functions check body-named resources and delegated (Kafka gateway) callers.
      ...(['admin', 'produce', 'fetch', 'groups', 'connect', 'wait'].includes(job)
        ? { SLUICE_AUTHORIZER: 'iam' }
        : {}),
      // The wait socket: where its functions post, what admin reports as waitUrl, the HTTP API the
      // wait function checks registrations against (test/infra/wait-socket.test.ts).
      ...(job === 'admin' ? { SLUICE_WAIT_URL: expect.anything() as unknown } : {}),
      ...(job === 'wait' || job === 'wait-notifier'
        ? { SLUICE_WAIT_ENDPOINT: expect.anything() as unknown }
        : {}),
      ...(job === 'wait' ? { SLUICE_HTTP_API_ID: expect.anything() as unknown } : {}),
    });
  });

  it('takes the cluster id, request limit and bucket list from context', () => {
    const id = configuredStack.getLogicalId(
      configuredStack.functions.functions.produce.node.defaultChild as CfnElement,
    );
    expect((props(resources(configured)[id]).Environment as { Variables: unknown }).Variables).toMatchObject({
      SLUICE_BUCKETS: { 'Fn::Join': [',', [{ Ref: 'StorageStore0' }, { Ref: 'StorageStore1' }]] },
      SLUICE_CLUSTER_ID: 'test-cluster',
      SLUICE_MAX_REQUEST_BYTES: '1048576',
    });
  });

  it('logs each function to its own log group, and every log group expires after a month', () => {
    const logGroupIds = JOBS.map((job) =>
      referencedId((fn(job).LoggingConfig as { LogGroup: unknown }).LogGroup),
    );
    expect(new Set(logGroupIds).size).toBe(JOBS.length);
    const groups = resourcesOfType(template, 'AWS::Logs::LogGroup');
    expect(groups).toHaveLength(JOBS.length + 2); // + the HTTP API's and the wait socket's access logs
    for (const id of logGroupIds) expect(groups.map(([g]) => g)).toContain(id);
    for (const [, group] of groups) expect(props(group).RetentionInDays).toBe(30);
  });
});

describe('IAM', () => {
  it('uses no managed policies and no Resource "*" on any function role but X-Ray\'s segment writes', () => {
    for (const job of JOBS) {
      expect(props(resources(template)[roleIds[job]]).ManagedPolicyArns).toBeUndefined();
      // X-Ray's PutTraceSegments/PutTelemetryRecords have no resource-level permissions (infra/monitoring.ts).
      for (const s of statements[job].filter((s) => s.Resource === '*'))
        expect([job, s.Action]).toEqual([job, ['xray:PutTelemetryRecords', 'xray:PutTraceSegments']]);
    }
  });

  it('lets each function write only its own logs', () => {
    for (const job of JOBS) {
      const logGroupId = referencedId((fn(job).LoggingConfig as { LogGroup: unknown }).LogGroup) ?? '';
      const logStatements = statements[job].filter((s) =>
        [s.Action].flat().some((a) => String(a).startsWith('logs:')),
      );
      expect(logStatements).toEqual([
        {
          Effect: 'Allow',
          Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          Resource: { 'Fn::GetAtt': [logGroupId, 'Arn'] },
        },
      ]);
    }
  });

  it('fetch reads the table and objects, writes only wait registrations, and cannot put objects', () => {
    const s = statements.fetch;
    expect(allows(s, 'dynamodb:GetItem', 'MetadataTable')).toBe(true);
    expect(allows(s, 'dynamodb:Query', 'MetadataTable')).toBe(true);
    expect(allows(s, 's3:GetObject', 'StorageStore0')).toBe(true);
    // A fetch naming its wait connection registers there (test/infra/wait-socket.test.ts: W# keys only).
    const unconditioned = s.filter((st) => st.Condition === undefined);
    for (const action of [...TABLE_WRITES, 's3:PutObject', 's3:DeleteObject']) {
      expect([action, allows(unconditioned, action)]).toEqual([action, false]);
    }
    for (const action of TABLE_WRITES.filter(
      (a) => a !== 'dynamodb:PutItem' && a !== 'dynamodb:BatchWriteItem',
    ))
      expect([action, allows(s, action)]).toEqual([action, false]);
  });

  it('produce writes the table, puts and reads objects (to catch followers up) but cannot delete them', () => {
    const s = statements.produce;
    expect(allows(s, 'dynamodb:UpdateItem', 'MetadataTable')).toBe(true);
    expect(allows(s, 's3:PutObject', 'StorageStore0')).toBe(true);
    expect(allows(s, 's3:GetObject', 'StorageStore0')).toBe(true);
    expect(allows(s, 's3:DeleteObject')).toBe(false);
  });

  // The transaction coordinator is the groups function's: its markers are log appends (an object on
  // every in-sync store, a lagging follower caught up from the leader first), as a produce's are.
  it('groups writes the table, puts and reads objects (transaction markers) but cannot delete them', () => {
    const s = statements.groups;
    expect(allows(s, 'dynamodb:UpdateItem', 'MetadataTable')).toBe(true);
    expect(allows(s, 's3:PutObject', 'StorageStore0')).toBe(true);
    expect(allows(s, 's3:GetObject', 'StorageStore0')).toBe(true);
    expect(allows(s, 's3:DeleteObject')).toBe(false);
  });

  it.each(['admin', 'produce', 'fetch', 'groups', 'connect', 'wait'] as const)(
    '%s may simulate this account’s users’ and roles’ policies and read roles, and no other IAM action',
    (api) => {
      const iamStatements = statements[api].filter((s) =>
        [s.Action].flat().some((a) => String(a).startsWith('iam:')),
      );
      const arn = (kind: string) => ({
        'Fn::Join': [
          '',
          ['arn:', { Ref: 'AWS::Partition' }, ':iam::', { Ref: 'AWS::AccountId' }, `:${kind}/*`],
        ],
      });
      expect(iamStatements).toEqual([
        { Effect: 'Allow', Action: 'iam:SimulatePrincipalPolicy', Resource: [arn('role'), arn('user')] },
        { Effect: 'Allow', Action: 'iam:GetRole', Resource: arn('role') },
      ]);
      for (const job of JOBS.filter(
        (j) => !['admin', 'produce', 'fetch', 'groups', 'connect', 'wait'].includes(j),
      ))
        expect(statements[job].some((s) => [s.Action].flat().some((a) => String(a).startsWith('iam:')))).toBe(
          false,
        );
    },
  );

  it('admin reads and deletes objects but never puts them', () => {
    const s = statements.admin;
    expect(allows(s, 'dynamodb:PutItem', 'MetadataTable')).toBe(true);
    expect(allows(s, 's3:GetObject', 'StorageStore0')).toBe(true);
    expect(allows(s, 's3:DeleteObject', 'StorageStore0')).toBe(true);
    expect(allows(s, 's3:PutObject')).toBe(false);
  });

  it('maintenance reads, writes and deletes objects and writes the table', () => {
    const s = statements.maintenance;
    for (const action of ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:ListBucket']) {
      expect([action, allows(s, action, 'StorageStore0')]).toEqual([action, true]);
    }
    expect(allows(s, 'dynamodb:UpdateItem', 'MetadataTable')).toBe(true);
  });

  it('gives the segment store to fetch (read), maintenance (read, write, delete) and admin (delete) only', () => {
    expect(allows(statements.fetch, 's3:GetObject', 'Segments')).toBe(true);
    expect(allows(statements.fetch, 's3:PutObject', 'Segments')).toBe(false);
    expect(allows(statements.fetch, 's3:DeleteObject', 'Segments')).toBe(false);
    for (const action of ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:ListBucket'])
      expect([action, allows(statements.maintenance, action, 'Segments')]).toEqual([action, true]);
    expect(allows(statements.admin, 's3:DeleteObject', 'Segments')).toBe(true);
    expect(allows(statements.admin, 's3:PutObject', 'Segments')).toBe(false);
    expect(allows(statements.produce, 's3:GetObject', 'Segments')).toBe(false);
    expect(allows(statements.produce, 's3:PutObject', 'Segments')).toBe(false);
    expect(allows(statements.groups, 's3:GetObject', 'Segments')).toBe(false);
  });

  it('grants object access on every store when there are several', () => {
    const id = configuredStack.getLogicalId(
      configuredStack.functions.functions.fetch.node.defaultChild as CfnElement,
    );
    const roleId = referencedId(props(resources(configured)[id]).Role) ?? '';
    const s = roleStatements(configured, roleId);
    expect(allows(s, 's3:GetObject', 'StorageStore0')).toBe(true);
    expect(allows(s, 's3:GetObject', 'StorageStore1')).toBe(true);
  });

  it('matches IAM wildcards the way IAM does', () => {
    expect(actionMatches('s3:Put*', 's3:PutObject')).toBe(true);
    expect(actionMatches('dynamodb:*', 'dynamodb:PutItem')).toBe(true);
    expect(actionMatches('s3:GetObject*', 's3:PutObject')).toBe(false);
  });
});

describe('connect runtime', () => {
  it('runs the connect-worker function every minute without retries', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      Description: 'Runs Sluice Connect tasks',
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [functionIds['connect-worker'], 'Arn'] },
          RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 },
        }),
      ],
    });
  });

  it('the REST function touches the table only; the runtime also reads and puts log objects', () => {
    expect(allows(statements.connect, 'dynamodb:UpdateItem', 'MetadataTable')).toBe(true);
    expect(statements.connect.some((s) => [s.Action].flat().some((a) => String(a).startsWith('s3:')))).toBe(
      false,
    );
    const w = statements['connect-worker'];
    expect(allows(w, 'dynamodb:UpdateItem', 'MetadataTable')).toBe(true);
    expect(allows(w, 's3:GetObject', 'StorageStore0')).toBe(true);
    expect(allows(w, 's3:PutObject', 'StorageStore0')).toBe(true);
    expect(allows(w, 's3:DeleteObject')).toBe(false);
  });
});

describe('maintenance schedule', () => {
  it('runs maintenance every minute without retrying missed runs', () => {
    template.resourceCountIs('AWS::Events::Rule', 2);
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [functionIds.maintenance, 'Arn'] },
          RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 },
        }),
      ],
    });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      FunctionName: { 'Fn::GetAtt': [functionIds.maintenance, 'Arn'] },
      Principal: 'events.amazonaws.com',
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: functionIds.maintenance },
      MaximumRetryAttempts: 0,
    });
  });
});

describe('outputs', () => {
  it('exports the API URL, table name and bucket names', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(Object.keys(outputs).sort()).toEqual([
      'AlarmTopic',
      'ApiUrl',
      'BucketNames',
      'SegmentBucket',
      'TableName',
      'WaitUrl',
    ]);
    expect(outputs.TableName?.Value).toEqual({ Ref: 'MetadataTable' });
    expect(JSON.stringify(outputs.ApiUrl?.Value)).toContain('execute-api');
    expect((configured.toJSON().Outputs as Record<string, { Value: unknown }>).BucketNames?.Value).toEqual({
      'Fn::Join': [',', [{ Ref: 'StorageStore0' }, { Ref: 'StorageStore1' }]],
    });
  });
});
