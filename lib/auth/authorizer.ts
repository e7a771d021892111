/**
 * The Authorizer port: may this caller invoke these route-shaped checks? API Gateway's AWS_IAM
 * authorizer only sees a request's own path, so the handler asks this port about the resources a body
 * names (lib/auth/acl.ts), before it looks anything up. On AWS it is answered by IAM's policy
 * simulator for the caller's principal (lib/adapters/aws/iam-authorizer.ts); locally by the same
 * policy evaluator the local gateway uses (PolicyAuthorizer below).
 */
import { SluiceError } from '../../protocol/errors.js';
import type { RouteGuard } from '../http/router.js';
import type { CallerContext, HttpMethod, HttpRequest } from '../http/types.js';
import type { AccessCheck, Authorizer, RouteAcl } from './acl.js';
import { impliedChecks, refusal, routeCheck } from './acl.js';
import { ON_BEHALF_OF_HEADER, delegatedCaller } from './delegation.js';
import type { Decision, PolicyDocument } from './policy.js';
import { evaluatePolicies } from './policy.js';
import { describableTopicsOnly } from './visibility.js';

export const INVOKE_ACTION = 'execute-api:Invoke';

export type { Authorizer } from './acl.js';

/** `arn:aws:execute-api:{region}:{account}:{apiId}/{stage}/{METHOD}{path}`, as IAM sees an invocation. */
export const executeApiArn = (
  region: string,
  caller: Pick<CallerContext, 'accountId' | 'apiId' | 'stage'>,
  check: Pick<AccessCheck, 'method' | 'path'>,
): string =>
  `arn:aws:execute-api:${region}:${caller.accountId}:${caller.apiId}/${caller.stage}/${check.method}${check.path}`;

/** Decides checks with IAM's evaluation of a principal's identity policies (no AWS call). */
export class PolicyAuthorizer implements Authorizer {
  constructor(
    private readonly options: {
      region: string;
      /** The identity policies attached to a principal; none for an unknown one. */
      policiesFor: (principalArn: string) => readonly PolicyDocument[];
    },
  ) {}

  /** IAM's decision (allow, explicit or implicit deny) for one check. */
  decide(caller: CallerContext, check: Pick<AccessCheck, 'method' | 'path'>): Decision {
    return evaluatePolicies(
      this.options.policiesFor(caller.principalArn),
      INVOKE_ACTION,
      executeApiArn(this.options.region, caller, check),
    );
  }

  allowed(caller: CallerContext, checks: readonly AccessCheck[]): Promise<boolean[]> {
    return Promise.resolve(checks.map((check) => this.decide(caller, check) === 'allow'));
  }
}

const parseBody = (request: HttpRequest): unknown => {
  try {
    return JSON.parse(
      Buffer.from(request.body.buffer, request.body.byteOffset, request.body.length).toString(),
    );
  } catch {
    // The handler answers a malformed body with 400 INVALID_REQUEST; there is nothing to check here.
    return undefined;
  }
};

/**
 * The checks of the resources a route's body names, for a route whose module knows what its bodies
 * mean (connect/access.ts for connector configs): keyed `METHOD pattern`, given the routed request and
 * its parsed body (undefined when malformed: the handler answers that with a 400).
 */
export type BodyChecks = (request: HttpRequest, body: unknown) => AccessCheck[];

/**
 * The router's guard: authorizes a delegated request (`Sluice-On-Behalf-Of`, lib/auth/delegation.ts)
 * as the principal it names, refuses a request whose body or query names a resource the caller may not use,
 * before the handler runs, and filters offset listings to the topics the caller may describe. Without a caller (a public route, or no IAM context at all) a request that
 * names resources is refused: the deployment asked for checks, so they never silently pass.
 */
export const impliedAccessGuard =
  (
    authorizer: Authorizer,
    routes: {
      /** Routes whose bodies name resources (route definitions' `bodyNamesResources`). */
      bodyNamed: ReadonlySet<string>;
      /** Answers that list a group's topics (route definitions' `listsGroupTopics`). */
      offsetListings: ReadonlySet<string>;
      /** Each route's own ACL (functions/route-table.ts ROUTE_ACLS), to check a delegated caller's path. */
      acls: Readonly<Record<string, RouteAcl>>;
    },
    bodyChecks: Readonly<Record<string, BodyChecks>> = {},
  ): RouteGuard =>
  async (routeKey: string, request: HttpRequest) => {
    const named = request.headers[ON_BEHALF_OF_HEADER];
    if (named !== undefined) {
      // The signer (a Kafka gateway) asks for the request to be authorized as its client: its own
      // path check (API Gateway's, for the signer) is made again for the client, and every further
      // check and filter below sees the client.
      request.caller = await delegatedCaller(authorizer, request.caller, named);
      const own = routeCheck(
        { method: request.method as HttpMethod, acl: routes.acls[routeKey] },
        request.path,
        request.params,
      );
      const [allowed] = await authorizer.allowed(request.caller, [own]);
      if (allowed !== true) throw refusal(own);
    }
    const more = bodyChecks[routeKey];
    const body =
      (routes.bodyNamed.has(routeKey) || more) && request.body.length > 0 ? parseBody(request) : undefined;
    const checks = [...impliedChecks(routeKey, request.query, body), ...(more?.(request, body) ?? [])];
    if (checks.length > 0) {
      if (!request.caller) throw new SluiceError('SASL_AUTHENTICATION_FAILED', 'the request is not signed');
      const answers = await authorizer.allowed(request.caller, checks);
      const denied = checks.find((_, i) => answers[i] !== true);
      if (denied) throw refusal(denied);
    }
    return routes.offsetListings.has(routeKey) && request.query['topic'] === undefined
      ? (response) => describableTopicsOnly(authorizer, request.caller, response)
      : undefined;
  };
