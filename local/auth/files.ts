/**
 * The local stand-ins for IAM: a credentials file (access keys and the principal each belongs to) and
 * a policy file (each principal's identity policies, IAM JSON). Both are read once at start; a file
 * that does not parse stops `npm start` with the reason, never opens the gateway.
 */
import { readFile } from 'node:fs/promises';
import type { PolicyDocument } from '../../lib/auth/policy.js';
import { parsePolicyDocument } from '../../lib/auth/policy.js';

export interface LocalCredential {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** The IAM principal the key belongs to, e.g. `arn:aws:iam::111122223333:user/alice`. */
  principalArn: string;
}

const PRINCIPAL = /^arn:aws:(iam|sts)::\d{12}:(user|role|assumed-role)\/[\w+=,.@/-]+$/;

const fail = (file: string, message: string): Error => new Error(`${file}: ${message}`);

const readJsonFile = async (file: string): Promise<unknown> => {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw fail(file, `cannot read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw fail(file, `is not JSON: ${(error as Error).message}`);
  }
};

/** `{"credentials": [{"accessKeyId", "secretAccessKey", "sessionToken"?, "principalArn"}]}` */
export const loadCredentials = async (file: string): Promise<Map<string, LocalCredential>> => {
  const doc = (await readJsonFile(file)) as { credentials?: unknown };
  if (!Array.isArray(doc?.credentials)) throw fail(file, 'needs a "credentials" array');
  const keys = new Map<string, LocalCredential>();
  for (const [i, raw] of (doc.credentials as unknown[]).entries()) {
    const c = (raw ?? {}) as Record<string, unknown>;
    const where = `credentials[${i}]`;
    for (const field of ['accessKeyId', 'secretAccessKey', 'principalArn'])
      if (typeof c[field] !== 'string' || c[field] === '')
        throw fail(file, `${where}.${field} must be a string`);
    if (c['sessionToken'] !== undefined && typeof c['sessionToken'] !== 'string')
      throw fail(file, `${where}.sessionToken must be a string`);
    if (!PRINCIPAL.test(c['principalArn'] as string))
      throw fail(file, `${where}.principalArn must be an IAM user or role ARN`);
    if (keys.has(c['accessKeyId'] as string)) throw fail(file, `${where}.accessKeyId is listed twice`);
    keys.set(c['accessKeyId'] as string, {
      accessKeyId: c['accessKeyId'] as string,
      secretAccessKey: c['secretAccessKey'] as string,
      principalArn: c['principalArn'] as string,
      ...(typeof c['sessionToken'] === 'string' ? { sessionToken: c['sessionToken'] } : {}),
    });
  }
  return keys;
};

/** `{"principals": {"<principal ARN>": <policy document> | [<policy document>, …]}}` */
export const loadPolicies = async (file: string): Promise<Map<string, PolicyDocument[]>> => {
  const doc = (await readJsonFile(file)) as { principals?: unknown };
  const principals = doc?.principals;
  if (principals === null || typeof principals !== 'object' || Array.isArray(principals))
    throw fail(file, 'needs a "principals" object: principal ARN → policy document(s)');
  const policies = new Map<string, PolicyDocument[]>();
  for (const [arn, value] of Object.entries(principals as Record<string, unknown>)) {
    if (!PRINCIPAL.test(arn)) throw fail(file, `principal ${arn} is not an IAM user or role ARN`);
    const docs = Array.isArray(value) ? value : [value];
    try {
      policies.set(
        arn,
        docs.map((d, i) => parsePolicyDocument(d, `principals["${arn}"][${i}]`)),
      );
    } catch (error) {
      throw fail(file, (error as Error).message);
    }
  }
  return policies;
};
