/** IAM's evaluation of identity policies for execute-api:Invoke (lib/auth/policy.ts). */
import { describe, expect, it } from 'vitest';
import type { PolicyDocument } from '../../../lib/auth/policy.js';
import { evaluatePolicies, parsePolicyDocument, wildcardMatch } from '../../../lib/auth/policy.js';
import { codeOf } from '../../support/sluice-error.js';

const API = 'arn:aws:execute-api:us-east-1:000000000000:sluice-local/$default';
const INVOKE = 'execute-api:Invoke';
const allow = (...resources: string[]): PolicyDocument => ({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Action: INVOKE, Resource: resources }],
});
const deny = (...resources: string[]): PolicyDocument => ({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Deny', Action: INVOKE, Resource: resources }],
});

describe('wildcards', () => {
  it('* matches any run of characters, slashes included; ? exactly one', () => {
    expect(wildcardMatch('a*', 'a')).toBe(true);
    expect(wildcardMatch('a*', 'a/b/c')).toBe(true);
    expect(wildcardMatch('a?c', 'abc')).toBe(true);
    expect(wildcardMatch('a?c', 'ac')).toBe(false);
    expect(wildcardMatch('a?c', 'abbc')).toBe(false);
    expect(wildcardMatch('*/POST/v1/topics/orders-*/records', '/POST/v1/topics/orders-eu/records')).toBe(
      true,
    );
    expect(wildcardMatch('*/POST/v1/topics/orders-*/records', '/POST/v1/topics/ordersx/records')).toBe(false);
  });

  it('treats regular-expression characters literally', () => {
    expect(wildcardMatch('a.b', 'axb')).toBe(false);
    expect(wildcardMatch('a.b', 'a.b')).toBe(true);
    expect(wildcardMatch('$default(x)+[y]', '$default(x)+[y]')).toBe(true);
    expect(wildcardMatch('a\\*', 'a\\bc')).toBe(true);
  });

  it('matches resources case-sensitively and actions case-insensitively', () => {
    const doc = {
      Statement: {
        Effect: 'Allow' as const,
        Action: 'EXECUTE-API:invoke',
        Resource: `${API}/GET/v1/topics/Orders`,
      },
    };
    expect(evaluatePolicies([doc], INVOKE, `${API}/GET/v1/topics/Orders`)).toBe('allow');
    expect(evaluatePolicies([doc], INVOKE, `${API}/GET/v1/topics/orders`)).toBe('implicitDeny');
  });
});

describe('evaluation', () => {
  const resource = `${API}/POST/v1/topics/orders/records`;

  it('denies by default, with no policies and with policies that do not match', () => {
    expect(evaluatePolicies([], INVOKE, resource)).toBe('implicitDeny');
    expect(evaluatePolicies([allow(`${API}/GET/v1/topics/orders`)], INVOKE, resource)).toBe('implicitDeny');
    expect(
      evaluatePolicies(
        [{ Statement: { Effect: 'Allow', Action: 'execute-api:ManageConnections', Resource: '*' } }],
        INVOKE,
        resource,
      ),
    ).toBe('implicitDeny');
  });

  it('allows what an Allow matches', () => {
    expect(evaluatePolicies([allow(resource)], INVOKE, resource)).toBe('allow');
    expect(evaluatePolicies([allow('*')], INVOKE, resource)).toBe('allow');
    expect(evaluatePolicies([allow(`${API}/*/v1/topics/orders/*`)], INVOKE, resource)).toBe('allow');
  });

  it('lets an explicit Deny win over any Allow, in any policy and in any order', () => {
    expect(evaluatePolicies([allow('*'), deny(resource)], INVOKE, resource)).toBe('explicitDeny');
    expect(evaluatePolicies([deny(resource), allow('*')], INVOKE, resource)).toBe('explicitDeny');
    expect(
      evaluatePolicies(
        [
          {
            Statement: [
              { Effect: 'Allow', Action: '*', Resource: '*' },
              { Effect: 'Deny', Action: 'execute-api:*', Resource: `${API}/POST/*` },
            ],
          },
        ],
        INVOKE,
        resource,
      ),
    ).toBe('explicitDeny');
    expect(evaluatePolicies([allow('*'), deny(`${API}/GET/*`)], INVOKE, resource)).toBe('allow');
  });

  it('applies NotAction and NotResource as IAM does', () => {
    const notResource: PolicyDocument = {
      Statement: { Effect: 'Allow', Action: INVOKE, NotResource: `${API}/DELETE/*` },
    };
    expect(evaluatePolicies([notResource], INVOKE, resource)).toBe('allow');
    expect(evaluatePolicies([notResource], INVOKE, `${API}/DELETE/v1/topics/orders`)).toBe('implicitDeny');
    const notAction: PolicyDocument = { Statement: { Effect: 'Deny', NotAction: 's3:*', Resource: '*' } };
    expect(evaluatePolicies([allow('*'), notAction], INVOKE, resource)).toBe('explicitDeny');
  });
});

describe('parsing', () => {
  it('accepts a single statement object or a list', () => {
    expect(
      parsePolicyDocument({
        Version: '2012-10-17',
        Statement: { Effect: 'Allow', Action: INVOKE, Resource: '*' },
      }),
    ).toEqual({
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Action: INVOKE, Resource: '*' }],
    });
  });

  it.each([
    ['not an object', []],
    ['no statements', { Statement: [] }],
    ['a bad effect', { Statement: { Effect: 'allow', Action: INVOKE, Resource: '*' } }],
    [
      'Action and NotAction',
      { Statement: { Effect: 'Allow', Action: INVOKE, NotAction: 'x', Resource: '*' } },
    ],
    ['no resource', { Statement: { Effect: 'Allow', Action: INVOKE } }],
    ['an empty resource list', { Statement: { Effect: 'Allow', Action: INVOKE, Resource: [] } }],
    ['a non-string resource', { Statement: { Effect: 'Allow', Action: INVOKE, Resource: [1] } }],
    [
      'a Condition it cannot evaluate',
      { Statement: { Effect: 'Deny', Action: INVOKE, Resource: '*', Condition: {} } },
    ],
    [
      'an unknown version',
      { Version: '2020-01-01', Statement: { Effect: 'Allow', Action: INVOKE, Resource: '*' } },
    ],
  ])('refuses %s', (_, doc) => {
    expect(codeOf(() => parsePolicyDocument(doc))).toBe('INVALID_REQUEST');
  });
});
