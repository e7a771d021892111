/**
 * `SLUICE_AUTH=iam` for the local gateway: what API Gateway's AWS_IAM authorizer does before a Lambda
 * runs. It verifies the SigV4 signature (401 SASL_AUTHENTICATION_FAILED), evaluates the signer's
 * identity policies for `execute-api:Invoke` on the route's ARN (403 with the Kafka code of the
 * route's resource), and hands the handler the same `requestContext.authorizer.iam` identity AWS
 * does, so the handler's checks of body-named resources see the same caller.
 */
import { refusal, routeCheck } from '../../lib/auth/acl.js';
import { randomBytes } from 'node:crypto';
import { INVOKE_ACTION, PolicyAuthorizer, executeApiArn } from '../../lib/auth/authorizer.js';
import { kafkaGatewayGrants } from '../../lib/auth/grants.js';
import type { PolicyDocument } from '../../lib/auth/policy.js';
import { SluiceError, isSluiceError } from '../../protocol/errors.js';
import type { RouteSpec } from '../../functions/route-table.js';
import { canonicalRequestPath } from '../../lib/http/request-path.js';
import type { LocalCredential } from './files.js';
import { loadCredentials, loadPolicies } from './files.js';
import { verifySigV4 } from './sigv4.js';

/** The local API's identity in execute-api ARNs: arn:aws:execute-api:{region}:000000000000:sluice-local/$default/… */
export const LOCAL_API = { accountId: '000000000000', apiId: 'sluice-local', stage: '$default' } as const;

export interface GatewayRequest {
  method: string;
  route: RouteSpec;
  /** The canonical path the route matched (lib/http/request-path.ts): the ARN's path. */
  path: string;
  /** The request target's path as sent, for the signature. */
  rawPath: string;
  rawQuery: string;
  headers: Readonly<Record<string, string>>;
  body: Uint8Array;
}

/** Either the event's extra `requestContext` fields, or the refusal to answer with. */
export type GatewayAuthResult =
  | { context: Record<string, unknown> }
  /** `reason` is for the operator's log, never for the answer. */
  | { refusal: SluiceError; reason: string };

export interface GatewayAuth {
  check(request: GatewayRequest): Promise<GatewayAuthResult>;
  /** Decides the handler's body-named checks with the same policies. */
  authorizer: PolicyAuthorizer;
}

export interface LocalAuthOptions {
  credentials: ReadonlyMap<string, LocalCredential>;
  policies: ReadonlyMap<string, readonly PolicyDocument[]>;
  region: string;
  now?: () => number;
}

const paramsOf = (pattern: string, path: string): Record<string, string> => {
  const names = [...pattern.matchAll(/\{([a-zA-Z]+)\}/g)].map((m) => m[1]!);
  const m = new RegExp(`^${pattern.replace(/\{[a-zA-Z]+\}/g, '([^/]+)')}$`).exec(path);
  const params: Record<string, string> = {};
  names.forEach((name, i) => (params[name] = decodeURIComponent(m?.[i + 1] ?? '')));
  return params;
};

export const createGatewayAuth = (options: LocalAuthOptions): GatewayAuth => {
  const authorizer = new PolicyAuthorizer({
    region: options.region,
    policiesFor: (arn) => options.policies.get(arn) ?? [],
  });
  const now = options.now ?? Date.now;
  const check = async (request: GatewayRequest): Promise<GatewayAuthResult> => {
    if (request.route.public) return { context: {} };
    let credential: LocalCredential;
    try {
      credential = await verifySigV4(request, {
        region: options.region,
        now: now(),
        credential: (id) => options.credentials.get(id),
      });
    } catch (error) {
      if (isSluiceError(error)) return { refusal: error, reason: error.message };
      throw error;
    }
    // Only a canonical path gets here: the ARN names exactly the path that is routed.
    const canonical = canonicalRequestPath(request.path);
    if ('reason' in canonical)
      return {
        refusal: new SluiceError('NOT_FOUND', `no route on this path: the path ${canonical.reason}`),
        reason: `non-canonical path: ${canonical.reason}`,
      };
    const path = canonical.path;
    const accessCheck = routeCheck(request.route, path, paramsOf(request.route.pattern, path));
    const caller = { principalArn: credential.principalArn, ...LOCAL_API };
    const decision = authorizer.decide(caller, accessCheck);
    if (decision !== 'allow')
      return {
        refusal: refusal(accessCheck),
        reason: `${decision} of execute-api:Invoke for ${credential.principalArn} on ${executeApiArn(options.region, caller, accessCheck)}`,
      };
    return {
      context: {
        accountId: LOCAL_API.accountId,
        apiId: LOCAL_API.apiId,
        authorizer: {
          iam: {
            accessKey: credential.accessKeyId,
            accountId: /::(\d{12}):/.exec(credential.principalArn)?.[1] ?? '',
            callerId: credential.accessKeyId,
            userArn: credential.principalArn,
          },
        },
      },
    };
  };
  return { check, authorizer };
};

/** Builds the gateway's auth from the credentials and policy files (paths already resolved). */
export const loadGatewayAuth = async (
  files: { credentials: string; policy: string; region: string },
  /** One more principal beside the files' (the local Kafka gateway's own identity). */
  also?: { credential: LocalCredential; policies: PolicyDocument[] },
): Promise<GatewayAuth> => {
  const credentials = await loadCredentials(files.credentials);
  const policies = await loadPolicies(files.policy);
  if (also) {
    credentials.set(also.credential.accessKeyId, also.credential);
    policies.set(also.credential.principalArn, also.policies);
  }
  return createGatewayAuth({ credentials, policies, region: files.region });
};

/** The local stack's Kafka gateway principal: a fresh key each start, granted as a gateway role. */
export const KAFKA_GATEWAY_PRINCIPAL = `arn:aws:iam::${LOCAL_API.accountId}:role/sluice-kafka-gateway`;

export const localKafkaGatewayIdentity = (
  region: string,
): { credential: LocalCredential; policies: PolicyDocument[] } => ({
  credential: {
    accessKeyId: `SLUICEKAFKAGW${randomBytes(8).toString('hex').toUpperCase()}`,
    secretAccessKey: randomBytes(30).toString('base64'),
    principalArn: KAFKA_GATEWAY_PRINCIPAL,
  },
  policies: [
    {
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Action: INVOKE_ACTION,
          Resource: kafkaGatewayGrants().map(
            (g) =>
              `arn:aws:execute-api:${region}:${LOCAL_API.accountId}:${LOCAL_API.apiId}/${LOCAL_API.stage}/${g.method}${g.path}`,
          ),
        },
      ],
    },
  ],
});
