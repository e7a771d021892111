/** The AWS Authorizer (lib/adapters/aws/iam-authorizer.ts) against a scripted IAM client. */
import { describe, expect, it } from 'vitest';
import { IamSimulationAuthorizer } from '../../../lib/adapters/aws/iam-authorizer.js';
import type { IamPolicyApi } from '../../../lib/adapters/aws/iam-query.js';
import { topicDescribe, topicRead } from '../../../lib/auth/acl.js';
import { SluiceError } from '../../../protocol/errors.js';

const API = { accountId: '123456789012', apiId: 'abc', stage: '$default' };
const ARN = (path: string, method = 'GET') =>
  `arn:aws:execute-api:eu-west-1:123456789012:abc/$default/${method}${path}`;

/** An IAM that allows fetching `orders` for every principal and counts its calls. */
const fakeIam = (options: { pageSize?: number; fail?: unknown } = {}) => {
  const calls: string[] = [];
  const client: IamPolicyApi = {
    getRoleArn: async (roleName) => {
      if (options.fail) throw options.fail;
      calls.push(`GetRole ${roleName}`);
      return `arn:aws:iam::123456789012:role/service/${roleName}`;
    },
    simulatePrincipalPolicy: async (input) => {
      if (options.fail) throw options.fail;
      calls.push(
        `Simulate ${input.PolicySourceArn} ${input.ResourceArns.length}${input.Marker ? ` from ${input.Marker}` : ''}`,
      );
      const start = Number(input.Marker ?? 0);
      const size = options.pageSize ?? 100;
      const names = input.ResourceArns.slice(start, start + size);
      return {
        EvaluationResults: [
          {
            EvalDecision: 'implicitDeny',
            ResourceSpecificResults: names.map((name) => ({
              EvalResourceName: name,
              EvalResourceDecision: name.includes('/topics/orders/') ? 'allowed' : 'implicitDeny',
            })),
          },
        ],
        IsTruncated: start + size < input.ResourceArns.length,
        ...(start + size < input.ResourceArns.length ? { Marker: String(start + size) } : {}),
      };
    },
  };
  return { client, calls };
};

const clockAt = (t: { now: number }) => ({ now: () => t.now, sleep: async () => {} });

describe('IamSimulationAuthorizer', () => {
  it('simulates a user as itself and answers per check, in order', async () => {
    const { client, calls } = fakeIam();
    const authorizer = new IamSimulationAuthorizer({
      iam: client,
      region: 'eu-west-1',
      clock: clockAt({ now: 0 }),
    });
    const caller = { principalArn: 'arn:aws:iam::123456789012:user/alice', ...API };
    expect(
      await authorizer.allowed(caller, [topicRead('secret'), topicRead('orders'), topicDescribe('orders')]),
    ).toEqual([false, true, false]);
    expect(calls).toEqual(['Simulate arn:aws:iam::123456789012:user/alice 3']);
  });

  it('simulates an assumed-role session as its role, found with GetRole, and caches both for the TTL', async () => {
    const { client, calls } = fakeIam();
    const time = { now: 1_000 };
    const authorizer = new IamSimulationAuthorizer({
      iam: client,
      region: 'eu-west-1',
      clock: clockAt(time),
      cacheTtlMs: 60_000,
    });
    const caller = { principalArn: 'arn:aws:sts::123456789012:assumed-role/consumer/i-0abc', ...API };
    expect(await authorizer.allowed(caller, [topicRead('orders')])).toEqual([true]);
    time.now += 59_000;
    expect(await authorizer.allowed(caller, [topicRead('orders')])).toEqual([true]);
    expect(calls).toEqual(['GetRole consumer', 'Simulate arn:aws:iam::123456789012:role/service/consumer 1']);
    time.now += 2_000;
    expect(await authorizer.allowed(caller, [topicRead('orders'), topicRead('secret')])).toEqual([
      true,
      false,
    ]);
    expect(calls.slice(2)).toEqual([
      'GetRole consumer',
      'Simulate arn:aws:iam::123456789012:role/service/consumer 2',
    ]);
  });

  it('follows truncated simulation results to the end', async () => {
    const { client, calls } = fakeIam({ pageSize: 2 });
    const authorizer = new IamSimulationAuthorizer({
      iam: client,
      region: 'eu-west-1',
      clock: clockAt({ now: 0 }),
    });
    const caller = { principalArn: 'arn:aws:iam::123456789012:user/bob', ...API };
    const checks = ['a', 'b', 'orders', 'c', 'd'].map(topicRead);
    expect(await authorizer.allowed(caller, checks)).toEqual([false, false, true, false, false]);
    expect(calls).toEqual([
      'Simulate arn:aws:iam::123456789012:user/bob 5',
      'Simulate arn:aws:iam::123456789012:user/bob 5 from 2',
      'Simulate arn:aws:iam::123456789012:user/bob 5 from 4',
    ]);
  });

  it('refuses principals IAM cannot simulate (root, federated users) without calling IAM', async () => {
    const { client, calls } = fakeIam();
    const authorizer = new IamSimulationAuthorizer({
      iam: client,
      region: 'eu-west-1',
      clock: clockAt({ now: 0 }),
    });
    for (const principalArn of [
      'arn:aws:iam::123456789012:root',
      'arn:aws:sts::123456789012:federated-user/x',
    ])
      expect(await authorizer.allowed({ principalArn, ...API }, [topicRead('orders')])).toEqual([false]);
    expect(calls).toEqual([]);
  });

  it('builds the implied ARN from the region and the API the request reached', async () => {
    const { client } = fakeIam();
    const seen: string[] = [];
    const spy: IamPolicyApi = {
      getRoleArn: (name) => client.getRoleArn(name),
      simulatePrincipalPolicy: (input) => {
        seen.push(...input.ResourceArns);
        return client.simulatePrincipalPolicy(input);
      },
    };
    const authorizer = new IamSimulationAuthorizer({
      iam: spy,
      region: 'eu-west-1',
      clock: clockAt({ now: 0 }),
    });
    await authorizer.allowed({ principalArn: 'arn:aws:iam::123456789012:user/a', ...API }, [
      topicRead('orders'),
      topicDescribe('x'),
    ]);
    expect(seen).toEqual([ARN('/v1/topics/orders/partitions/*/records'), ARN('/v1/topics/x')]);
  });

  it.each([
    [{ name: 'Throttling', $metadata: { httpStatusCode: 400 } }, 'THROTTLING_QUOTA_EXCEEDED', true],
    [{ name: 'ServiceFailure', $metadata: { httpStatusCode: 500 } }, 'COORDINATOR_NOT_AVAILABLE', true],
    [{ name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }, 'UNKNOWN_SERVER_ERROR', false],
  ])('turns IAM failure %o into %s, with no AWS name in the message', async (fail, code, retriable) => {
    const { client } = fakeIam({ fail: Object.assign(new Error('aws says no'), fail) });
    const authorizer = new IamSimulationAuthorizer({
      iam: client,
      region: 'eu-west-1',
      clock: clockAt({ now: 0 }),
    });
    const error = await authorizer
      .allowed({ principalArn: 'arn:aws:iam::123456789012:user/a', ...API }, [topicRead('orders')])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SluiceError);
    expect([(error as SluiceError).code, (error as SluiceError).retriable]).toEqual([code, retriable]);
    expect((error as SluiceError).message).not.toMatch(/Throttling|ServiceFailure|AccessDenied|aws says no/);
  });
});
