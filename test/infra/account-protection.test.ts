/**
 * Account-level protection: safe defaults (no reserved concurrency, which a new account could not
 * deploy; the stage's throttle; no table maximum), every setting configurable by context or props and
 * asserted in the template, and bad settings refused at synth.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { sluiceApp } from './app.js';
import { props, resourcesOfType } from './template.js';

const template = (context: Record<string, unknown> = {}, protection?: Record<string, unknown>) =>
  Template.fromStack(sluiceApp({ context, ...(protection ? { stackProps: { protection } } : {}) }).stack);

const functionsOf = (t: Template) => resourcesOfType(t, 'AWS::Lambda::Function').map(([, r]) => props(r));
const stageOf = (t: Template) => props(resourcesOfType(t, 'AWS::ApiGatewayV2::Stage')[0]![1]);
const tableOf = (t: Template) => props(resourcesOfType(t, 'AWS::DynamoDB::Table')[0]![1]);

describe('account-level protection', () => {
  it('defaults: no reserved concurrency, the stage throttled at 1000 rps / 2000 burst, no table maximum', () => {
    const t = template();
    expect(functionsOf(t).length).toBeGreaterThan(4);
    for (const fn of functionsOf(t)) expect(fn['ReservedConcurrentExecutions']).toBeUndefined();
    expect(stageOf(t)['DefaultRouteSettings']).toEqual({
      ThrottlingRateLimit: 1000,
      ThrottlingBurstLimit: 2000,
    });
    expect(stageOf(t)['RouteSettings']).toBeUndefined();
    expect(tableOf(t)['OnDemandThroughput']).toBeUndefined();
  });

  it('takes every setting from context (strings, as `cdk synth -c` passes them)', () => {
    const t = template({
      'sluice:apiThrottleRateLimit': '250',
      'sluice:apiThrottleBurstLimit': '500',
      'sluice:routeThrottles': JSON.stringify({
        'POST /v1/topics/{topic}/records': { rateLimit: 100, burstLimit: 200 },
      }),
      'sluice:reservedConcurrency': JSON.stringify({ produce: 50, fetch: 50, groups: 10 }),
      'sluice:tableMaxReadRequestUnits': '4000',
      'sluice:tableMaxWriteRequestUnits': '2000',
    });
    expect(stageOf(t)['DefaultRouteSettings']).toEqual({
      ThrottlingRateLimit: 250,
      ThrottlingBurstLimit: 500,
    });
    expect(stageOf(t)['RouteSettings']).toEqual({
      'POST /v1/topics/{topic}/records': { ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 },
    });
    const reserved = functionsOf(t)
      .map((fn) => fn['ReservedConcurrentExecutions'])
      .filter((n) => n !== undefined)
      .sort((a, b) => Number(a) - Number(b));
    expect(reserved).toEqual([10, 50, 50]);
    expect(tableOf(t)['OnDemandThroughput']).toEqual({
      MaxReadRequestUnits: 4000,
      MaxWriteRequestUnits: 2000,
    });
  });

  it('lets stack props win over context', () => {
    const t = template(
      { 'sluice:apiThrottleRateLimit': '250' },
      { apiThrottleRateLimit: 40, reservedConcurrency: { admin: 5 } },
    );
    expect(stageOf(t)['DefaultRouteSettings']).toMatchObject({ ThrottlingRateLimit: 40 });
    expect(functionsOf(t).filter((fn) => fn['ReservedConcurrentExecutions'] === 5)).toHaveLength(1);
  });

  it.each([
    [{ 'sluice:reservedConcurrency': JSON.stringify({ produce: 600, fetch: 301 }) }, /keep 100 unreserved/],
    [{ 'sluice:reservedConcurrency': JSON.stringify({ brokers: 1 }) }, /no function brokers/],
    [{ 'sluice:reservedConcurrency': JSON.stringify({ produce: -1 }) }, /integer ≥ 0/],
    [{ 'sluice:reservedConcurrency': '[1]' }, /JSON object/],
    [
      { 'sluice:routeThrottles': JSON.stringify({ 'POST /v1/nowhere': { rateLimit: 1, burstLimit: 1 } }) },
      /no route/,
    ],
    [
      { 'sluice:routeThrottles': JSON.stringify({ 'POST /v1/topics': { rateLimit: 0, burstLimit: 1 } }) },
      /positive/,
    ],
    [{ 'sluice:apiThrottleRateLimit': 'fast' }, /positive number/],
    [{ 'sluice:tableMaxWriteRequestUnits': '1.5' }, /positive integer/],
  ])('refuses %j at synth', (context, message) => {
    expect(() => template(context)).toThrow(message);
  });

  it('allows reservations up to the account limit less the unreserved minimum, when the account is larger', () => {
    const t = template({
      'sluice:reservedConcurrency': JSON.stringify({ produce: 1500 }),
      'sluice:accountConcurrency': '3000',
    });
    expect(functionsOf(t).some((fn) => fn['ReservedConcurrentExecutions'] === 1500)).toBe(true);
  });
});
