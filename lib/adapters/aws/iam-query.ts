/**
 * The two IAM calls the authorizer makes (GetRole, SimulatePrincipalPolicy), as IAM's Query protocol
 * itself: a form POST signed with SigV4 (sdk/sigv4.ts, the signer every function bundle already
 * carries) and a small XML answer read here. Why not @aws-sdk/client-iam: for these two calls it put
 * 29 KiB of client plus the SDK's awsQuery serializer into every API function's bundle (the produce
 * bundle's budget is 450 KiB; issue 28), for ~150 lines of code that do the same thing.
 *
 * Failures come back shaped like the SDK's (`name` is IAM's error code, `$metadata.httpStatusCode`
 * the status), so the authorizer translates them as it did. Throttling, 5xx answers and network
 * failures are retried with backoff up to `maxAttempts` (AWS_MAX_ATTEMPTS, default 3), as the SDK's
 * standard retry mode does.
 */
import { sigV4Fetch } from '../../../sdk/sigv4.js';
import type { AwsCredentialsProvider } from '../../../sdk/sigv4.js';
import type { FetchLike } from '../../../sdk/transport.js';

/** One simulated action's result, with IAM's member names. */
export interface IamEvaluationResult {
  EvalResourceName?: string;
  EvalDecision?: string;
  ResourceSpecificResults?: { EvalResourceName?: string; EvalResourceDecision?: string }[];
}

export interface IamSimulationPage {
  EvaluationResults: IamEvaluationResult[];
  IsTruncated: boolean;
  Marker?: string;
}

export interface IamSimulationInput {
  PolicySourceArn: string;
  ActionNames: readonly string[];
  ResourceArns: readonly string[];
  Marker?: string;
}

/** What the authorizer asks IAM (lib/adapters/aws/iam-authorizer.ts). */
export interface IamPolicyApi {
  /** The role's ARN (with its path), or undefined when IAM's answer names none. */
  getRoleArn(roleName: string): Promise<string | undefined>;
  simulatePrincipalPolicy(input: IamSimulationInput): Promise<IamSimulationPage>;
}

/** An IAM failure, in the shape of the SDK's service exceptions. */
export class IamServiceError extends Error {
  readonly $metadata: { httpStatusCode?: number; requestId?: string };

  constructor(code: string, message: string, status: number | undefined, requestId?: string) {
    super(message);
    this.name = code;
    this.$metadata = { ...(status === undefined ? {} : { httpStatusCode: status }), requestId };
  }
}

export interface IamQueryClientOptions {
  /** The function's region: picks IAM's partition endpoint and signing region. */
  region: string;
  /** Default: AWS_ENDPOINT_URL_IAM, else AWS_ENDPOINT_URL, else the partition's IAM endpoint. */
  endpoint?: string;
  credentials?: AwsCredentialsProvider;
  fetch?: FetchLike;
  maxAttempts?: number;
  /** First retry's delay ceiling; each retry doubles it (full jitter). Default 100 ms. */
  retryBaseMs?: number;
}

const VERSION = '2010-05-08';

/** IAM is global per partition: its endpoint and the region its requests are signed for. */
export const iamEndpointOf = (region: string): { url: string; signingRegion: string } =>
  region.startsWith('cn-')
    ? { url: 'https://iam.cn-north-1.amazonaws.com.cn', signingRegion: 'cn-north-1' }
    : region.startsWith('us-gov-')
      ? { url: 'https://iam.us-gov.amazonaws.com', signingRegion: 'us-gov-west-1' }
      : { url: 'https://iam.amazonaws.com', signingRegion: 'us-east-1' };

const configuredEndpoint = (env: NodeJS.ProcessEnv): string | undefined =>
  env['AWS_IGNORE_CONFIGURED_ENDPOINT_URLS'] === 'true'
    ? undefined
    : env['AWS_ENDPOINT_URL_IAM'] || env['AWS_ENDPOINT_URL'] || undefined;

const RETRIABLE_CODES = new Set(['Throttling', 'ThrottlingException', 'RequestLimitExceeded']);

export class IamQueryClient implements IamPolicyApi {
  private readonly url: string;
  private readonly send: FetchLike;
  private readonly maxAttempts: number;
  private readonly retryBaseMs: number;

  constructor(options: IamQueryClientOptions) {
    const partition = iamEndpointOf(options.region);
    this.url = options.endpoint ?? configuredEndpoint(process.env) ?? partition.url;
    this.send = sigV4Fetch({
      region: partition.signingRegion,
      service: 'iam',
      ...(options.credentials ? { credentials: options.credentials } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    this.maxAttempts = Math.max(
      1,
      options.maxAttempts ?? (Number(process.env['AWS_MAX_ATTEMPTS'] ?? '') || 3),
    );
    this.retryBaseMs = options.retryBaseMs ?? 100;
  }

  async getRoleArn(roleName: string): Promise<string | undefined> {
    const answer = await this.call('GetRole', [['RoleName', roleName]]);
    return textOf(child(child(child(answer, 'GetRoleResult'), 'Role'), 'Arn'));
  }

  async simulatePrincipalPolicy(input: IamSimulationInput): Promise<IamSimulationPage> {
    const params: [string, string][] = [['PolicySourceArn', input.PolicySourceArn]];
    input.ActionNames.forEach((name, i) => params.push([`ActionNames.member.${i + 1}`, name]));
    input.ResourceArns.forEach((arn, i) => params.push([`ResourceArns.member.${i + 1}`, arn]));
    if (input.Marker !== undefined) params.push(['Marker', input.Marker]);
    const result = child(await this.call('SimulatePrincipalPolicy', params), 'SimulatePrincipalPolicyResult');
    if (!result) throw malformed('SimulatePrincipalPolicy answered without its result');
    const marker = textOf(child(result, 'Marker'));
    return {
      EvaluationResults: members(child(result, 'EvaluationResults')).map((r) => ({
        EvalResourceName: textOf(child(r, 'EvalResourceName')),
        EvalDecision: textOf(child(r, 'EvalDecision')),
        ResourceSpecificResults: members(child(r, 'ResourceSpecificResults')).map((s) => ({
          EvalResourceName: textOf(child(s, 'EvalResourceName')),
          EvalResourceDecision: textOf(child(s, 'EvalResourceDecision')),
        })),
      })),
      IsTruncated: textOf(child(result, 'IsTruncated')) === 'true',
      ...(marker === undefined ? {} : { Marker: marker }),
    };
  }

  /** One action, retried as the SDK retries; the answer's root element, or an IamServiceError. */
  private async call(action: string, params: [string, string][]): Promise<XmlElement> {
    const body = new URLSearchParams([['Action', action], ['Version', VERSION], ...params]).toString();
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(body);
      } catch (error) {
        if (attempt >= this.maxAttempts || !retriable(error)) throw error;
        await new Promise((r) => setTimeout(r, Math.random() * this.retryBaseMs * 2 ** (attempt - 1)));
      }
    }
  }

  private async once(body: string): Promise<XmlElement> {
    const response = await this.send(this.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
      body,
    });
    const text = await response.text();
    let root: XmlElement | undefined;
    try {
      root = parseXml(text);
    } catch {
      root = undefined;
    }
    if (response.status >= 200 && response.status < 300) {
      if (!root) throw malformed(`IAM answered ${response.status} with no readable XML`, response.status);
      return root;
    }
    const error = child(child(root, 'Error'), 'Code') ? child(root, 'Error') : undefined;
    throw new IamServiceError(
      textOf(child(error, 'Code')) ?? `Http${response.status}`,
      textOf(child(error, 'Message')) ?? `IAM answered HTTP ${response.status}`,
      response.status,
      textOf(child(root, 'RequestId')),
    );
  }
}

const malformed = (message: string, status?: number) =>
  new IamServiceError('MalformedResponse', message, status);

const retriable = (error: unknown): boolean => {
  if (!(error instanceof IamServiceError)) return true; // the network: fetch failed before an answer
  const status = error.$metadata.httpStatusCode ?? 0;
  return RETRIABLE_CODES.has(error.name) || status === 429 || status >= 500;
};

/** An element of IAM's answers: its name, its child elements and its text. */
export interface XmlElement {
  name: string;
  children: XmlElement[];
  text: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

const decode = (s: string): string =>
  s.replace(/&(#x[0-9a-fA-F]+|#\d+|\w+);/g, (whole, e: string) =>
    e.startsWith('#x')
      ? String.fromCodePoint(parseInt(e.slice(2), 16))
      : e.startsWith('#')
        ? String.fromCodePoint(Number(e.slice(1)))
        : (ENTITIES[e] ?? whole),
  );

/**
 * The element tree of a well-formed XML document of the kind IAM answers with (elements, text,
 * entities; declarations, comments and attributes skipped). Throws on mismatched or unclosed tags.
 */
export const parseXml = (xml: string): XmlElement => {
  const root: XmlElement = { name: '', children: [], text: '' };
  const stack = [root];
  const token =
    /<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!\[CDATA\[([\s\S]*?)\]\]>|<(\/?)([\w:.-]+)[^>]*?(\/?)>|([^<]+)/gy;
  let m: RegExpExecArray | null;
  let at = 0;
  while (at < xml.length && (m = token.exec(xml)) !== null) {
    at = token.lastIndex;
    const top = stack[stack.length - 1]!;
    if (m[1] !== undefined) top.text += m[1];
    else if (m[5] !== undefined) top.text += decode(m[5]);
    else if (m[3] !== undefined) {
      if (m[2] === '/') {
        if (top.name !== m[3] || stack.length === 1) throw new Error(`unexpected </${m[3]}>`);
        stack.pop();
      } else {
        const element: XmlElement = { name: m[3], children: [], text: '' };
        top.children.push(element);
        if (m[4] !== '/') stack.push(element);
      }
    }
  }
  if (at < xml.length) throw new Error(`unreadable XML at ${at}`);
  if (stack.length !== 1) throw new Error(`<${stack[stack.length - 1]!.name}> is not closed`);
  const [document] = root.children;
  if (root.children.length !== 1 || !document) throw new Error('no single root element');
  return document;
};

const child = (element: XmlElement | undefined, name: string): XmlElement | undefined =>
  element?.children.find((c) => c.name === name);

const members = (list: XmlElement | undefined): XmlElement[] =>
  list?.children.filter((c) => c.name === 'member') ?? [];

const textOf = (element: XmlElement | undefined): string | undefined =>
  element === undefined ? undefined : element.text.trim();
