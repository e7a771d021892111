/**
 * IAM identity-policy evaluation for `execute-api:Invoke`, as IAM decides it: an explicit Deny wins,
 * then an Allow, else the implicit deny. Wildcards `*` (any run of characters, `/` included) and `?`
 * (one character) match in actions (case-insensitively, as IAM compares actions) and resources
 * (case-sensitively). The local gateway and the in-handler checks of body-named resources both use it,
 * so the rules tested off AWS are the rules IAM applies to the same documents.
 */
import { invalidRequest } from '../../protocol/errors.js';

export type Effect = 'Allow' | 'Deny';

export interface PolicyStatement {
  Sid?: string;
  Effect: Effect;
  Action?: string | string[];
  NotAction?: string | string[];
  Resource?: string | string[];
  NotResource?: string | string[];
}

export interface PolicyDocument {
  Version?: string;
  Statement: PolicyStatement | PolicyStatement[];
}

export type Decision = 'allow' | 'explicitDeny' | 'implicitDeny';

const STATEMENT_KEYS = new Set(['Sid', 'Effect', 'Action', 'NotAction', 'Resource', 'NotResource']);

/**
 * Checks a document's shape. Keys IAM has but this evaluator does not (Condition, Principal) are
 * refused rather than ignored: a Deny with a Condition silently dropped would allow what IAM denies.
 */
export const parsePolicyDocument = (value: unknown, where = 'policy'): PolicyDocument => {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw invalidRequest(`${where} must be a JSON object with a Statement`);
  const doc = value as Record<string, unknown>;
  if (doc['Version'] !== undefined && doc['Version'] !== '2012-10-17' && doc['Version'] !== '2008-10-17')
    throw invalidRequest(`${where}.Version must be "2012-10-17"`);
  const raw = doc['Statement'];
  const statements = Array.isArray(raw) ? raw : [raw];
  if (statements.length === 0) throw invalidRequest(`${where}.Statement is empty`);
  statements.forEach((s, i) => checkStatement(s, `${where}.Statement[${i}]`));
  return {
    ...(typeof doc['Version'] === 'string' ? { Version: doc['Version'] } : {}),
    Statement: statements,
  };
};

const checkStatement = (value: unknown, where: string): void => {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw invalidRequest(`${where} must be an object`);
  const s = value as Record<string, unknown>;
  const unknown = Object.keys(s).filter((k) => !STATEMENT_KEYS.has(k));
  if (unknown.length > 0) throw invalidRequest(`${where} has unsupported key(s): ${unknown.join(', ')}`);
  if (s['Effect'] !== 'Allow' && s['Effect'] !== 'Deny')
    throw invalidRequest(`${where}.Effect must be "Allow" or "Deny"`);
  exactlyOne(s, 'Action', 'NotAction', where);
  exactlyOne(s, 'Resource', 'NotResource', where);
};

const exactlyOne = (s: Record<string, unknown>, a: string, b: string, where: string): void => {
  if ((s[a] === undefined) === (s[b] === undefined))
    throw invalidRequest(`${where} needs exactly one of ${a} and ${b}`);
  const list = s[a] ?? s[b];
  const values = Array.isArray(list) ? list : [list];
  if (values.length === 0 || values.some((v) => typeof v !== 'string' || v.length === 0))
    throw invalidRequest(`${where}.${s[a] === undefined ? b : a} must be a string or a list of strings`);
};

const patternCache = new Map<string, RegExp>();

/** IAM's wildcard match: `*` any run of characters, `?` exactly one; everything else literal. */
export const wildcardMatch = (pattern: string, value: string, ignoreCase = false): boolean => {
  const key = `${ignoreCase ? 'i' : 's'}${pattern}`;
  let regex = patternCache.get(key);
  if (!regex) {
    const source = pattern
      .split('')
      .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
      .join('');
    regex = new RegExp(`^${source}$`, ignoreCase ? 'si' : 's');
    if (patternCache.size > 10_000) patternCache.clear();
    patternCache.set(key, regex);
  }
  return regex.test(value);
};

const list = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

const statementApplies = (s: PolicyStatement, action: string, resource: string): boolean => {
  const actionHit =
    s.Action !== undefined
      ? list(s.Action).some((p) => wildcardMatch(p, action, true))
      : !list(s.NotAction).some((p) => wildcardMatch(p, action, true));
  if (!actionHit) return false;
  return s.Resource !== undefined
    ? list(s.Resource).some((p) => wildcardMatch(p, resource))
    : !list(s.NotResource).some((p) => wildcardMatch(p, resource));
};

/** IAM's decision for one action on one resource under a principal's identity policies. */
export const evaluatePolicies = (
  policies: readonly PolicyDocument[],
  action: string,
  resource: string,
): Decision => {
  let allowed = false;
  for (const policy of policies) {
    const statements = Array.isArray(policy.Statement) ? policy.Statement : [policy.Statement];
    for (const s of statements) {
      if (!statementApplies(s, action, resource)) continue;
      if (s.Effect === 'Deny') return 'explicitDeny';
      allowed = true;
    }
  }
  return allowed ? 'allow' : 'implicitDeny';
};
