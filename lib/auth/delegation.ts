/**
 * Requests made on behalf of another principal: the Kafka gateway authenticates each connection to an
 * IAM principal (SASL/OAUTHBEARER, docs/kafka-groups-and-auth.md) and forwards that connection's
 * requests signed with its own credentials and naming the principal in `Sluice-On-Behalf-Of`. The
 * router's guard (lib/auth/authorizer.ts) then authorizes the request as the named principal, and
 * only when the signer itself may delegate: Kafka's CLUSTER_ACTION (the operation a broker's own
 * principal holds), checked as `execute-api:Invoke` on `POST /v1/delegation/{principal}`. That path is
 * no route: it exists only as an IAM resource, so a policy can also say which principals a gateway may
 * act for (`…/POST/v1/delegation/arn%3Aaws%3Aiam%3A%3A111122223333%3Arole%2Fapp-*`).
 */
import { SluiceError } from '../../protocol/errors.js';
import type { CallerContext } from '../http/types.js';
import type { AccessCheck, Authorizer } from './acl.js';
import { CLUSTER_RESOURCE } from './acl.js';

/** The header naming the principal a request is made for (lower case, as the router sees headers). */
export const ON_BEHALF_OF_HEADER = 'sluice-on-behalf-of';

/** An IAM user or role, or an assumed role's session: what API Gateway's IAM authorizer names. */
const PRINCIPAL_ARN = /^arn:aws[a-z-]*:(iam|sts)::\d{12}:(user|role|assumed-role)\/[\w+=,.@/-]{1,512}$/;

/** The permission to act for `principalArn` (the Kafka gateway's grant, lib/auth/grants.ts). */
export const delegationCheck = (principalArn: string): AccessCheck => ({
  operation: 'CLUSTER_ACTION',
  resourceType: 'CLUSTER',
  resource: CLUSTER_RESOURCE,
  method: 'POST',
  path: `/v1/delegation/${encodeURIComponent(principalArn)}`,
});

/**
 * The caller a request is authorized as: the signer, or the principal it names in
 * `Sluice-On-Behalf-Of` once the signer is found allowed to delegate for it. Throws
 * CLUSTER_AUTHORIZATION_FAILED when it may not (before anything else is looked at, so a refused
 * delegation learns nothing about the named principal), SASL_AUTHENTICATION_FAILED when the request is
 * not signed at all.
 */
export const delegatedCaller = async (
  authorizer: Authorizer,
  signer: CallerContext | undefined,
  named: string,
): Promise<CallerContext> => {
  if (!signer)
    throw new SluiceError('SASL_AUTHENTICATION_FAILED', `the request is not signed (${ON_BEHALF_OF_HEADER})`);
  const [allowed] = await authorizer.allowed(signer, [delegationCheck(named)]);
  if (allowed !== true)
    throw new SluiceError(
      'CLUSTER_AUTHORIZATION_FAILED',
      `not authorized to act on behalf of ${named.slice(0, 600)} (CLUSTER_ACTION; only a Kafka gateway's role may)`,
    );
  if (!PRINCIPAL_ARN.test(named))
    throw new SluiceError('INVALID_REQUEST', `${ON_BEHALF_OF_HEADER} must be an IAM principal ARN`);
  return { ...signer, principalArn: named };
};
