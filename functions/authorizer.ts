/**
 * The authorizer every API function builds (functions/<job>.ts): with SLUICE_AUTHORIZER=iam, which the
 * CDK app sets on each of them, the resources a request's body names (the topics of POST /v1/fetch, a
 * transaction's topics and group, a commit's topics, Connect's configs) and a delegated caller
 * (Sluice-On-Behalf-Of, sent by the Kafka gateway) are checked with IAM's policy simulator, for the
 * caller API Gateway authenticated. Without it a function checks nothing beyond API Gateway's path
 * check and refuses delegation (lib/http/serve.ts). Its own module, so the functions that serve no API
 * route (connect-worker, maintenance) carry no IAM client. IAM is called through its Query protocol
 * directly (lib/adapters/aws/iam-query.ts), not @aws-sdk/client-iam: two calls did not pay for its
 * weight in every bundle.
 */
import { createIamAuthorizer } from '../lib/adapters/aws/iam-authorizer.js';
import type { Authorizer } from '../lib/auth/acl.js';
import { systemClock } from '../lib/ports/clock.js';
import { ENV } from '../lib/config/environment.js';
import { required } from './environment.js';

/** `{ authorizer }` when the environment asks for IAM's, else nothing. */
export const authorizerFromEnv = (): { authorizer?: Authorizer } =>
  process.env[ENV.authorizer] === 'iam'
    ? {
        authorizer: createIamAuthorizer({ region: required('AWS_REGION'), clock: systemClock }),
      }
    : {};
