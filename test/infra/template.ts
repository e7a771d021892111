import type { Template } from 'aws-cdk-lib/assertions';

/** A CloudFormation resource as the template holds it. */
export interface CfnResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly DeletionPolicy?: string;
  readonly UpdateReplacePolicy?: string;
}

export interface PolicyStatement {
  readonly Effect: 'Allow' | 'Deny';
  readonly Action?: string | string[];
  readonly Resource?: unknown;
  readonly Principal?: unknown;
  readonly Condition?: Record<string, Record<string, unknown>>;
}

export function resources(template: Template): Record<string, CfnResource> {
  return (template.toJSON() as { Resources: Record<string, CfnResource> }).Resources;
}

export function resourcesOfType(template: Template, type: string): [string, CfnResource][] {
  return Object.entries(resources(template)).filter(([, r]) => r.Type === type);
}

export function props(resource: CfnResource | undefined): Record<string, unknown> {
  if (!resource?.Properties) throw new Error('resource has no Properties');
  return resource.Properties;
}

/** Every statement of every AWS::IAM::Policy attached to the role, plus the role's inline policies. */
export function roleStatements(template: Template, roleLogicalId: string): PolicyStatement[] {
  const statements: PolicyStatement[] = [];
  for (const [, policy] of resourcesOfType(template, 'AWS::IAM::Policy')) {
    const p = props(policy);
    const roles = (p.Roles ?? []) as unknown[];
    if (!roles.some((r) => JSON.stringify(r) === JSON.stringify({ Ref: roleLogicalId }))) continue;
    statements.push(...(p.PolicyDocument as { Statement: PolicyStatement[] }).Statement);
  }
  const role = resources(template)[roleLogicalId];
  for (const inline of (props(role).Policies ?? []) as {
    PolicyDocument: { Statement: PolicyStatement[] };
  }[]) {
    statements.push(...inline.PolicyDocument.Statement);
  }
  return statements;
}

function asArray<T>(x: T | T[] | undefined): T[] {
  return x === undefined ? [] : Array.isArray(x) ? x : [x];
}

/** IAM action matching: case-insensitive, `*` and `?` wildcards. */
export function actionMatches(pattern: string, action: string): boolean {
  const re = new RegExp(
    '^' +
      pattern
        .split('')
        .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
        .join('') +
      '$',
    'i',
  );
  return re.test(action);
}

/**
 * Whether some Allow statement grants the action, on any resource whose JSON mentions
 * `resourceMention` (a logical id) when given.
 */
export function allows(statements: PolicyStatement[], action: string, resourceMention?: string): boolean {
  return statements.some(
    (s) =>
      s.Effect === 'Allow' &&
      asArray(s.Action).some((a) => actionMatches(a, action)) &&
      (resourceMention === undefined || JSON.stringify(s.Resource).includes(resourceMention)),
  );
}

/** Logical id from `{ Ref: id }` or `{ "Fn::GetAtt": [id, attr] }`. */
export function referencedId(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as { Ref?: unknown; 'Fn::GetAtt'?: unknown };
  if (typeof v.Ref === 'string') return v.Ref;
  const getAtt = v['Fn::GetAtt'];
  if (Array.isArray(getAtt) && typeof getAtt[0] === 'string') return getAtt[0];
  return undefined;
}
