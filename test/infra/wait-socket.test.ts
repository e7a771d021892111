/**
 * The wait socket in the template: a WebSocket API selecting routes on the message's action, `$connect`
 * behind the IAM authorizer and `$disconnect`, `wait`, `$default` into the wait function; a stage with
 * access logs; the notifier mapped from the metadata table's stream, filtered to partition state
 * items; each of the two functions allowed to post to that stage's connections and nothing else; the
 * admin function told the socket's URL (GET /v1/cluster's waitUrl).
 */
import type { CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SluiceStack } from '../../infra/sluice-stack.js';
import { sluiceApp } from './app.js';
import { props, referencedId, resourcesOfType, roleStatements } from './template.js';
import type { PolicyStatement } from './template.js';

let stack: SluiceStack;
let template: Template;
let apiId: string;
const idOf = (element: unknown) => stack.getLogicalId(element as CfnElement);

beforeAll(() => {
  stack = sluiceApp().stack;
  template = Template.fromStack(stack);
  apiId = idOf(stack.waitSocket.api.node.defaultChild);
}, 120_000);

const roleOf = (job: 'wait' | 'wait-notifier' | 'fetch' | 'produce' | 'admin') =>
  idOf(stack.functions.functions[job].role!.node.defaultChild);

const manageConnections = (statements: PolicyStatement[]) =>
  statements.filter((s) => [s.Action].flat().includes('execute-api:ManageConnections'));

describe('the wait socket', () => {
  it('is a WebSocket API selecting routes on the action, its $connect behind the IAM authorizer', () => {
    const [[, api]] = resourcesOfType(template, 'AWS::ApiGatewayV2::Api').filter(([id]) => id === apiId) as [
      [string, unknown],
    ];
    expect(props(api as never)).toMatchObject({
      ProtocolType: 'WEBSOCKET',
      RouteSelectionExpression: '$request.body.action',
    });
    const routes = resourcesOfType(template, 'AWS::ApiGatewayV2::Route')
      .map(([, r]) => props(r))
      .filter((r) => referencedId(r.ApiId) === apiId);
    const byKey = Object.fromEntries(
      routes.map((r) => [r.RouteKey as string, r.AuthorizationType ?? 'NONE']),
    );
    expect(byKey).toEqual({
      $connect: 'AWS_IAM',
      $disconnect: 'NONE',
      $default: 'NONE',
      wait: 'NONE',
      hello: 'NONE',
    });
  });

  it('sends every route to the wait function, and logs the stage', () => {
    const waitId = idOf(stack.functions.functions.wait.node.defaultChild);
    const integrations = resourcesOfType(template, 'AWS::ApiGatewayV2::Integration')
      .map(([, r]) => props(r))
      .filter((r) => referencedId(r.ApiId) === apiId);
    expect(integrations).toHaveLength(5);
    for (const i of integrations) expect(JSON.stringify(i.IntegrationUri)).toContain(waitId);
    const stage = resourcesOfType(template, 'AWS::ApiGatewayV2::Stage')
      .map(([, r]) => props(r))
      .find((r) => referencedId(r.ApiId) === apiId);
    expect(stage).toMatchObject({ StageName: 'live', AutoDeploy: true });
    expect(stage?.AccessLogSettings).toBeDefined();
  });

  it('maps the metadata stream into the notifier, filtered to partition state items, without a batching window', () => {
    const notifierId = idOf(stack.functions.functions['wait-notifier'].node.defaultChild);
    const mapping = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')
      .map(([, r]) => props(r))
      .find((r) => referencedId(r.FunctionName) === notifierId);
    expect(mapping).toMatchObject({ StartingPosition: 'LATEST', MaximumRetryAttempts: 2 });
    expect(mapping?.MaximumBatchingWindowInSeconds).toBeUndefined();
    const filters = (mapping?.FilterCriteria as { Filters: { Pattern: string }[] }).Filters;
    expect(filters.map((f) => JSON.parse(f.Pattern) as unknown)).toEqual([
      {
        eventName: ['INSERT', 'MODIFY'],
        dynamodb: { Keys: { pk: { S: [{ prefix: 'P#' }] }, sk: { S: ['STATE'] } } },
      },
    ]);
  });

  it('lets the wait function and the notifier post to this stage only, and no other function', () => {
    for (const job of ['wait', 'wait-notifier'] as const) {
      const grants = manageConnections(roleStatements(template, roleOf(job)));
      expect(grants).toHaveLength(1);
      const resource = JSON.stringify(grants[0]!.Resource);
      expect(resource).toContain(apiId);
      expect(resource).toContain('/live/*/@connections/*');
    }
    for (const job of ['fetch', 'produce', 'admin'] as const)
      expect(manageConnections(roleStatements(template, roleOf(job)))).toEqual([]);
  });

  it('lets the fetch function write wait registrations (W# keys) and nothing else in the table', () => {
    const writes = roleStatements(template, roleOf('fetch')).filter((st) =>
      [st.Action].flat().some((a) => /^dynamodb:(Put|Update|Delete|BatchWrite)/.test(String(a))),
    );
    expect(writes).toHaveLength(1);
    expect([writes[0]!.Action].flat().sort()).toEqual(['dynamodb:BatchWriteItem', 'dynamodb:PutItem']);
    expect(writes[0]!.Condition).toEqual({
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['W#*'] },
    });
  });

  it('names the socket to the admin function (waitUrl) and checks registrations against the HTTP API', () => {
    const env = (job: 'admin' | 'wait') =>
      (
        props(template.toJSON().Resources[idOf(stack.functions.functions[job].node.defaultChild)])
          .Environment as {
          Variables: Record<string, unknown>;
        }
      ).Variables;
    expect(JSON.stringify(env('admin').SLUICE_WAIT_URL)).toContain(apiId);
    expect(JSON.stringify(env('wait').SLUICE_HTTP_API_ID)).toContain(
      idOf(stack.api.httpApi.node.defaultChild),
    );
    expect(env('wait').SLUICE_AUTHORIZER).toBe('iam');
  });
});
