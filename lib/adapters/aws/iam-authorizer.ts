/**
 * The Authorizer port on AWS: asks IAM's policy simulator whether the caller's identity policies allow
 * `execute-api:Invoke` on the implied route ARNs — the same decision API Gateway's AWS_IAM authorizer
 * makes for the request's own path. The simulation covers the principal's identity policies, its
 * groups' (for a user), its permissions boundary and the organization's SCPs; it does not see session
 * policies passed to AssumeRole, so a session policy can narrow the path check but not these.
 *
 * An assumed-role session (`arn:aws:sts::…:assumed-role/Name/session`) is simulated as its role, whose
 * ARN (with its path) comes from GetRole. Answers are cached for `cacheTtlMs` (default 60 s): a policy
 * change reaches body-named checks within that time, as IAM's own changes propagate within seconds.
 */
import type { AccessCheck } from '../../auth/acl.js';
import type { Authorizer } from '../../auth/authorizer.js';
import { INVOKE_ACTION, executeApiArn } from '../../auth/authorizer.js';
import { SluiceError } from '../../../protocol/errors.js';
import type { Clock } from '../../ports/clock.js';
import type { CallerContext } from '../../http/types.js';
import { errorName, httpStatusOf } from './errors.js';
import type { IamPolicyApi } from './iam-query.js';
import { IamQueryClient } from './iam-query.js';

export interface IamAuthorizerOptions {
  /** IAM's GetRole and SimulatePrincipalPolicy (lib/adapters/aws/iam-query.ts on AWS). */
  iam: IamPolicyApi;
  region: string;
  clock: Clock;
  cacheTtlMs?: number;
  /** Bound on cached decisions, so a container serving many principals stays small. */
  maxCacheEntries?: number;
}

/** The authorizer over IAM's Query API in `region`'s partition (the composition root's). */
export const createIamAuthorizer = (options: Omit<IamAuthorizerOptions, 'iam'>): IamSimulationAuthorizer =>
  new IamSimulationAuthorizer({ iam: new IamQueryClient({ region: options.region }), ...options });

const ASSUMED_ROLE = /^arn:(aws[\w-]*):sts::(\d{12}):assumed-role\/([\w+=,.@-]+)\/[^/]+$/;
const SIMULABLE = /^arn:aws[\w-]*:iam::\d{12}:(user|role)\/[\w+=,.@/-]+$/;

export class IamSimulationAuthorizer implements Authorizer {
  private readonly decisions = new Map<string, { allowed: boolean; expiresAt: number }>();
  private readonly roles = new Map<string, { arn: string; expiresAt: number }>();
  private readonly ttl: number;
  private readonly maxEntries: number;

  constructor(private readonly options: IamAuthorizerOptions) {
    this.ttl = options.cacheTtlMs ?? 60_000;
    this.maxEntries = options.maxCacheEntries ?? 10_000;
  }

  async allowed(caller: CallerContext, checks: readonly AccessCheck[]): Promise<boolean[]> {
    const now = this.options.clock.now();
    const arns = checks.map((check) => executeApiArn(this.options.region, caller, check));
    const key = (arn: string) => `${caller.principalArn} ${arn}`;
    const missing = [
      ...new Set(arns.filter((arn) => !((this.decisions.get(key(arn))?.expiresAt ?? 0) > now))),
    ];
    if (missing.length > 0) {
      const source = await this.policySource(caller.principalArn, now);
      // The root user, federated users and other accounts' principals cannot be simulated: refused.
      const answers = source ? await this.simulate(source, missing) : new Map<string, boolean>();
      if (this.decisions.size + missing.length > this.maxEntries) this.decisions.clear();
      for (const arn of missing)
        this.decisions.set(key(arn), { allowed: answers.get(arn) === true, expiresAt: now + this.ttl });
    }
    return arns.map((arn) => this.decisions.get(key(arn))?.allowed === true);
  }

  /** The user or role ARN whose policies to simulate, or undefined when there is none. */
  private async policySource(principalArn: string, now: number): Promise<string | undefined> {
    if (SIMULABLE.test(principalArn)) return principalArn;
    const m = ASSUMED_ROLE.exec(principalArn);
    if (!m) return undefined;
    const roleName = m[3]!;
    const cached = this.roles.get(`${m[2]} ${roleName}`);
    if (cached && cached.expiresAt > now) return cached.arn;
    const arn = await this.call(() => this.options.iam.getRoleArn(roleName));
    if (!arn) return undefined;
    if (this.roles.size >= this.maxEntries) this.roles.clear();
    this.roles.set(`${m[2]} ${roleName}`, { arn, expiresAt: now + this.ttl });
    return arn;
  }

  private async simulate(source: string, arns: readonly string[]): Promise<Map<string, boolean>> {
    const answers = new Map<string, boolean>();
    let marker: string | undefined;
    do {
      const page = await this.call(() =>
        this.options.iam.simulatePrincipalPolicy({
          PolicySourceArn: source,
          ActionNames: [INVOKE_ACTION],
          ResourceArns: [...arns],
          ...(marker ? { Marker: marker } : {}),
        }),
      );
      for (const result of page.EvaluationResults) {
        for (const specific of result.ResourceSpecificResults ?? []) {
          if (specific.EvalResourceName)
            answers.set(specific.EvalResourceName, specific.EvalResourceDecision === 'allowed');
        }
        // One resource per call comes back without per-resource results.
        if ((result.ResourceSpecificResults ?? []).length === 0 && result.EvalResourceName)
          answers.set(result.EvalResourceName, result.EvalDecision === 'allowed');
      }
      marker = page.IsTruncated ? page.Marker : undefined;
    } while (marker);
    return answers;
  }

  /** IAM failures as Sluice errors: throttling is retriable, anything else is this deployment's fault. */
  private async call<T>(send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      const name = errorName(error) ?? '';
      const status = httpStatusOf(error);
      if (name === 'Throttling' || name === 'ThrottlingException' || status === 429)
        throw new SluiceError('THROTTLING_QUOTA_EXCEEDED', 'authorization is throttled; retry', {
          cause: error,
        });
      if (status !== undefined && status >= 500)
        throw new SluiceError('COORDINATOR_NOT_AVAILABLE', 'authorization is unavailable; retry', {
          cause: error,
        });
      throw new SluiceError('UNKNOWN_SERVER_ERROR', 'authorization failed; see the server log', {
        cause: error,
      });
    }
  }
}
