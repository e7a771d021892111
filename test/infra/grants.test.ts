/**
 * SluiceApi's grant methods, asserted on the synthesized template: the exact execute-api:Invoke
 * statements each grant attaches, and — evaluating those very statements with IAM's rules
 * (lib/auth/policy.ts) — which requests they allow, LITERAL and PREFIXED.
 */
import type { CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PolicyDocument } from '../../lib/auth/policy.js';
import { evaluatePolicies } from '../../lib/auth/policy.js';
import { ROUTE_TABLE } from '../../functions/route-table.js';
import { sluiceApp } from './app.js';
import { props, resourcesOfType } from './template.js';

const ACCOUNT = '123456789012';
const REGION = 'eu-west-1';
const API_ID = 'a1b2c3d4e5';

let documents: Record<string, PolicyDocument>;
let rawStatements: Record<string, unknown[]>;

/** The template's intrinsic functions, resolved as CloudFormation would in one account and region. */
const resolve = (value: unknown, apiLogicalId: string): unknown => {
  if (Array.isArray(value)) return value.map((v) => resolve(v, apiLogicalId));
  if (value === null || typeof value !== 'object') return value;
  const o = value as Record<string, unknown>;
  if ('Ref' in o) {
    const refs: Record<string, string> = {
      'AWS::Partition': 'aws',
      'AWS::Region': REGION,
      'AWS::AccountId': ACCOUNT,
      [apiLogicalId]: API_ID,
    };
    const ref = refs[o['Ref'] as string];
    if (ref === undefined) throw new Error(`unresolved Ref ${String(o['Ref'])}`);
    return ref;
  }
  if ('Fn::Join' in o) {
    const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
    return parts.map((p) => resolve(p, apiLogicalId)).join(sep);
  }
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, resolve(v, apiLogicalId)]));
};

beforeAll(() => {
  const { stack } = sluiceApp();
  const role = (id: string) => new iam.Role(stack, id, { assumedBy: new iam.AccountPrincipal(ACCOUNT) });
  const roles = {
    producer: role('OrdersProducer'),
    prefixedProducer: role('PrefixedProducer'),
    consumer: role('BillingConsumer'),
    prefixedConsumer: role('EtlConsumer'),
    admin: role('Operator'),
  };
  stack.api.grantProduce(roles.producer, 'orders');
  stack.api.grantProduce(roles.prefixedProducer, 'orders-*');
  stack.api.grantConsume(roles.consumer, 'orders', 'billing');
  stack.api.grantConsume(roles.prefixedConsumer, 'payments-*', 'etl-*');
  stack.api.grantAdmin(roles.admin);
  const template = Template.fromStack(stack);
  const apiLogicalId = stack.getLogicalId(stack.api.httpApi.node.defaultChild as CfnElement);
  documents = {};
  rawStatements = {};
  for (const [name, r] of Object.entries(roles)) {
    const roleId = stack.getLogicalId(r.node.defaultChild as CfnElement);
    const statements = resourcesOfType(template, 'AWS::IAM::Policy')
      .map(([, p]) => props(p))
      .filter((p) => JSON.stringify(p['Roles']) === JSON.stringify([{ Ref: roleId }]))
      .flatMap((p) => (p['PolicyDocument'] as { Statement: unknown[] }).Statement);
    rawStatements[name] = statements;
    documents[name] = resolve(
      { Version: '2012-10-17', Statement: statements },
      apiLogicalId,
    ) as PolicyDocument;
  }
});

const arn = (method: string, path: string) =>
  `arn:aws:execute-api:${REGION}:${ACCOUNT}:${API_ID}/$default/${method}${path}`;
const decide = (who: string, method: string, path: string) =>
  evaluatePolicies([documents[who]!], 'execute-api:Invoke', arn(method, path));

describe('grant statements', () => {
  it('grantProduce: Invoke on the topic’s produce routes, InitProducerId and describe, in this stage only', () => {
    expect(documents['producer']!.Statement).toEqual([
      {
        Effect: 'Allow',
        Action: 'execute-api:Invoke',
        // CDK sorts a statement's resources.
        Resource: [
          arn('POST', '/v1/topics/orders/records'),
          arn('POST', '/v1/topics/orders/partitions/*/batches'),
          arn('POST', '/v1/producers'),
          arn('GET', '/v1/whoami'),
          arn('GET', '/v1/topics/orders'),
        ].sort(),
      },
    ]);
  });

  it('grantConsume: fetch, offsets and describe of the topic; heartbeat, commit, fetch, reset, describe of the group', () => {
    expect(documents['consumer']!.Statement).toEqual([
      {
        Effect: 'Allow',
        Action: 'execute-api:Invoke',
        Resource: [
          arn('GET', '/v1/topics/orders/partitions/*/records'),
          arn('GET', '/v1/topics/orders/partitions/*/offsets'),
          arn('POST', '/v1/fetch'),
          arn('GET', '/v1/topics/orders'),
          arn('POST', '/v1/groups/billing/heartbeat'),
          arn('POST', '/v1/groups/billing/classic'),
          arn('POST', '/v1/groups/billing/offsets'),
          arn('GET', '/v1/groups/billing/offsets'),
          arn('POST', '/v1/groups/billing/offsets/reset'),
          arn('GET', '/v1/whoami'),
          arn('GET', '/v1/groups/billing'),
        ].sort(),
      },
    ]);
  });

  it('grantAdmin: every method on every /v1 route of the stage', () => {
    expect(documents['admin']!.Statement).toEqual([
      { Effect: 'Allow', Action: 'execute-api:Invoke', Resource: arn('*', '/v1/*') },
    ]);
  });

  it('builds every ARN from the API’s own id, region and account, never a literal "*" API', () => {
    for (const statements of Object.values(rawStatements)) {
      expect(JSON.stringify(statements)).toContain('"Ref":"AWS::AccountId"');
      expect(JSON.stringify(statements)).toContain('"Ref":"AWS::Region"');
      expect(JSON.stringify(statements)).not.toContain(':*:*:');
    }
  });

  it('refuses a name that is neither a name nor a prefix', () => {
    const { stack } = sluiceApp();
    const r = new iam.Role(stack, 'R', { assumedBy: new iam.AccountPrincipal(ACCOUNT) });
    for (const bad of ['or*ders', 'a/b', '', '..', 'x?'])
      expect(() => stack.api.grantProduce(r, bad), bad).toThrow(/PREFIXED/);
    expect(() => stack.api.grantConsume(r, 'orders', 'bil*ling')).toThrow(/PREFIXED/);
  });
});

describe('prefixed wildcards', () => {
  it('match, below a topic’s or group’s path, only GET routes a consumer is granted anyway', () => {
    const consumerGets = new Set([
      '/v1/topics/{topic}',
      '/v1/topics/{topic}/partitions/{partition}/records',
      '/v1/topics/{topic}/partitions/{partition}/offsets',
      // DESCRIBE on the topic, as GET /v1/topics/{topic} is: a consumer may describe its topics.
      '/v1/topics/{topic}/segments',
      '/v1/groups/{group}',
      '/v1/groups/{group}/offsets',
    ]);
    const under = ROUTE_TABLE.filter(
      (r) => r.method === 'GET' && /^\/v1\/(topics\/\{topic\}|groups\/\{group\})/.test(r.pattern),
    ).map((r) => r.pattern);
    expect(under.filter((p) => !consumerGets.has(p))).toEqual([]);
  });
});

describe('what the synthesized grants allow (IAM evaluation)', () => {
  it.each([
    ['producer', 'POST', '/v1/topics/orders/records', 'allow'],
    ['producer', 'POST', '/v1/topics/orders/partitions/7/batches', 'allow'],
    ['producer', 'POST', '/v1/producers', 'allow'],
    ['producer', 'GET', '/v1/topics/orders', 'allow'],
    ['producer', 'POST', '/v1/topics/orders-eu/records', 'implicitDeny'],
    ['producer', 'GET', '/v1/topics/orders/partitions/0/records', 'implicitDeny'],
    ['producer', 'DELETE', '/v1/topics/orders', 'implicitDeny'],
    ['prefixedProducer', 'POST', '/v1/topics/orders-eu/records', 'allow'],
    ['prefixedProducer', 'POST', '/v1/topics/orders-/records', 'allow'],
    ['prefixedProducer', 'POST', '/v1/topics/orders/records', 'implicitDeny'],
    ['prefixedProducer', 'GET', '/v1/topics/orders-eu', 'implicitDeny'],
    ['prefixedProducer', 'GET', '/v1/topics/orders-eu/partitions/0/records', 'implicitDeny'],
    ['consumer', 'GET', '/v1/topics/orders/partitions/2/records', 'allow'],
    ['consumer', 'GET', '/v1/topics/orders/partitions/*/records', 'allow'],
    ['consumer', 'POST', '/v1/groups/billing/heartbeat', 'allow'],
    ['consumer', 'POST', '/v1/groups/billing/offsets/reset', 'allow'],
    ['consumer', 'POST', '/v1/topics/orders/records', 'implicitDeny'],
    ['consumer', 'DELETE', '/v1/groups/billing', 'implicitDeny'],
    ['consumer', 'POST', '/v1/groups/billing-2/heartbeat', 'implicitDeny'],
    ['consumer', 'GET', '/v1/groups', 'implicitDeny'],
    ['prefixedConsumer', 'GET', '/v1/topics/payments-eu/partitions/0/records', 'allow'],
    ['prefixedConsumer', 'POST', '/v1/groups/etl-7/heartbeat', 'allow'],
    ['prefixedConsumer', 'GET', '/v1/topics/payments/partitions/0/records', 'implicitDeny'],
    ['prefixedConsumer', 'POST', '/v1/groups/etl/heartbeat', 'implicitDeny'],
    ['prefixedConsumer', 'GET', '/v1/topics/payments-eu', 'allow'],
    ['prefixedConsumer', 'GET', '/v1/groups/etl-7', 'allow'],
    ['prefixedConsumer', 'POST', '/v1/topics/payments-eu/records', 'implicitDeny'],
    ['prefixedConsumer', 'PATCH', '/v1/topics/payments-eu', 'implicitDeny'],
    ['prefixedConsumer', 'DELETE', '/v1/groups/etl-7', 'implicitDeny'],
    ['admin', 'DELETE', '/v1/topics/orders', 'allow'],
    ['admin', 'POST', '/v1/topics', 'allow'],
    ['admin', 'GET', '/v1/groups', 'allow'],
  ])('%s %s %s → %s', (who, method, path, decision) => {
    expect(decide(who, method, path)).toBe(decision);
  });
});
