/**
 * IAM's Query protocol by hand (lib/adapters/aws/iam-query.ts) against a local fake IAM: the signed
 * form it sends, the XML it reads (paged, with entities), and what it does with throttled, failing,
 * lying and malformed answers — through the authorizer, as the functions use it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { IamSimulationAuthorizer } from '../../../lib/adapters/aws/iam-authorizer.js';
import {
  IamQueryClient,
  IamServiceError,
  iamEndpointOf,
  parseXml,
} from '../../../lib/adapters/aws/iam-query.js';
import { topicRead } from '../../../lib/auth/acl.js';
import { SluiceError } from '../../../protocol/errors.js';

interface Seen {
  headers: Record<string, string | string[] | undefined>;
  form: URLSearchParams;
}

const seen: Seen[] = [];
/** Scripted answers, taken in order; when none is left, the fake answers as IAM would. */
const script: { status: number; body: string }[] = [];

const simulation = (form: URLSearchParams) => {
  const arns = [...form].filter(([k]) => k.startsWith('ResourceArns.member.')).map(([, v]) => v);
  const start = Number(form.get('Marker') ?? 0);
  const page = arns.slice(start, start + 2);
  const more = start + 2 < arns.length;
  return `<SimulatePrincipalPolicyResponse xmlns="https://iam.amazonaws.com/doc/2010-05-08/">
  <SimulatePrincipalPolicyResult>
    <IsTruncated>${more}</IsTruncated>${more ? `<Marker>${start + 2}</Marker>` : ''}
    <EvaluationResults>
      <member>
        <EvalActionName>execute-api:Invoke</EvalActionName>
        <EvalDecision>implicitDeny</EvalDecision>
        <ResourceSpecificResults>${page
          .map(
            (arn) =>
              `<member><EvalResourceName>${arn.replace(/&/g, '&amp;')}</EvalResourceName><EvalResourceDecision>${
                arn.includes('/topics/orders/') ? 'allowed' : 'implicitDeny'
              }</EvalResourceDecision><MatchedStatements/></member>`,
          )
          .join('')}</ResourceSpecificResults>
      </member>
    </EvaluationResults>
  </SimulatePrincipalPolicyResult>
  <ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata>
</SimulatePrincipalPolicyResponse>`;
};

const iam = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk: Buffer) => (body += chunk.toString()));
  request.on('end', () => {
    const form = new URLSearchParams(body);
    seen.push({ headers: request.headers, form });
    const scripted = script.shift();
    const answer =
      scripted ??
      (form.get('Action') === 'GetRole'
        ? {
            status: 200,
            body: `<?xml version="1.0"?><GetRoleResponse><GetRoleResult><Role><Path>/service/</Path><Arn>arn:aws:iam::123456789012:role/service/${form.get('RoleName')}</Arn></Role></GetRoleResult></GetRoleResponse>`,
          }
        : { status: 200, body: simulation(form) });
    response.writeHead(answer.status, { 'content-type': 'text/xml' });
    response.end(answer.body);
  });
});

let endpoint = '';
beforeAll(async () => {
  await new Promise<void>((resolve) => iam.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(iam.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => iam.close(resolve));
});
beforeEach(() => {
  seen.length = 0;
  script.length = 0;
});

const credentials = async () => ({ accessKeyId: 'AKIDTEST', secretAccessKey: 'secret', sessionToken: 'tok' });
const client = (maxAttempts = 3) =>
  new IamQueryClient({ region: 'eu-west-1', endpoint, credentials, maxAttempts, retryBaseMs: 1 });
const API = { accountId: '123456789012', apiId: 'abc', stage: '$default' };
const authorizer = (maxAttempts = 3) =>
  new IamSimulationAuthorizer({
    iam: client(maxAttempts),
    region: 'eu-west-1',
    clock: { now: () => 0, sleep: async () => {} },
  });

const throttled = {
  status: 400,
  body: '<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message></Error><RequestId>t-1</RequestId></ErrorResponse>',
};

describe('IamQueryClient', () => {
  it('sends a SigV4-signed Query form for IAM (us-east-1, service iam) and reads paged results', async () => {
    const arns = ['orders', 'a&b', 'orders-2', 'x'].map(
      (t) => `arn:aws:execute-api:eu-west-1:123456789012:abc/$default/GET/v1/topics/${t}/records`,
    );
    const page1 = await client().simulatePrincipalPolicy({
      PolicySourceArn: 'arn:aws:iam::123456789012:user/a',
      ActionNames: ['execute-api:Invoke'],
      ResourceArns: arns,
    });
    expect(page1).toEqual({
      EvaluationResults: [
        {
          EvalDecision: 'implicitDeny',
          ResourceSpecificResults: [
            { EvalResourceName: arns[0], EvalResourceDecision: 'allowed' },
            { EvalResourceName: arns[1], EvalResourceDecision: 'implicitDeny' },
          ],
        },
      ],
      IsTruncated: true,
      Marker: '2',
    });
    const { headers, form } = seen[0]!;
    expect(form.get('Action')).toBe('SimulatePrincipalPolicy');
    expect(form.get('Version')).toBe('2010-05-08');
    expect(form.get('ActionNames.member.1')).toBe('execute-api:Invoke');
    expect(form.get('ResourceArns.member.2')).toBe(arns[1]);
    expect(headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
    expect(headers['x-amz-security-token']).toBe('tok');
    expect(String(headers['authorization'])).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDTEST\/\d{8}\/us-east-1\/iam\/aws4_request, SignedHeaders=[^,]*host[^,]*, Signature=[0-9a-f]{64}$/,
    );
  });

  it('reads a role ARN with its path from GetRole', async () => {
    expect(await client().getRoleArn('builder')).toBe('arn:aws:iam::123456789012:role/service/builder');
    expect(seen[0]!.form.get('RoleName')).toBe('builder');
  });

  it('retries a throttled answer and succeeds', async () => {
    script.push(throttled, { status: 503, body: 'Service Unavailable' });
    expect(await client().getRoleArn('r')).toBe('arn:aws:iam::123456789012:role/service/r');
    expect(seen).toHaveLength(3);
  });

  it('gives up after maxAttempts with the SDK-shaped error, which the authorizer makes retriable', async () => {
    script.push(throttled, throttled, throttled);
    const error = await client()
      .getRoleArn('r')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IamServiceError);
    expect([(error as IamServiceError).name, (error as IamServiceError).$metadata.httpStatusCode]).toEqual([
      'Throttling',
      400,
    ]);
    expect(seen).toHaveLength(3);

    script.push(throttled, throttled);
    const refused = await authorizer(2)
      .allowed({ principalArn: 'arn:aws:iam::123456789012:user/a', ...API }, [topicRead('orders')])
      .catch((e: unknown) => e);
    expect([(refused as SluiceError).code, (refused as SluiceError).retriable]).toEqual([
      'THROTTLING_QUOTA_EXCEEDED',
      true,
    ]);
    expect((refused as SluiceError).message).not.toMatch(/Throttling|Rate exceeded/);
  });

  it('does not retry a refusal (AccessDenied): one call, a non-retriable Sluice error', async () => {
    script.push({
      status: 403,
      body: '<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>no</Message></Error></ErrorResponse>',
    });
    const error = await authorizer()
      .allowed({ principalArn: 'arn:aws:iam::123456789012:user/a', ...API }, [topicRead('orders')])
      .catch((e: unknown) => e);
    expect([(error as SluiceError).code, (error as SluiceError).retriable]).toEqual([
      'UNKNOWN_SERVER_ERROR',
      false,
    ]);
    expect(seen).toHaveLength(1);
  });

  it.each([
    ['truncated XML', '<SimulatePrincipalPolicyResponse><SimulatePrincipalPolicyResult><IsTruncated>false'],
    ['not XML at all', 'OK'],
    ['another action’s answer', '<GetRoleResponse><GetRoleResult/></GetRoleResponse>'],
    ['mismatched tags', '<A><SimulatePrincipalPolicyResult></A></SimulatePrincipalPolicyResult>'],
  ])('refuses a 200 answer that is %s: nothing is allowed', async (_what, body) => {
    script.push({ status: 200, body });
    const error = await authorizer(1)
      .allowed({ principalArn: 'arn:aws:iam::123456789012:user/a', ...API }, [topicRead('orders')])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SluiceError);
    expect((error as SluiceError).code).toBe('UNKNOWN_SERVER_ERROR');
  });

  it('answers allowed/denied per check through the authorizer, across pages', async () => {
    const answers = await authorizer().allowed({ principalArn: 'arn:aws:iam::123456789012:user/a', ...API }, [
      topicRead('orders'),
      topicRead('x'),
      topicRead('y'),
    ]);
    expect(answers).toEqual([true, false, false]);
    expect(seen.map((s) => s.form.get('Marker'))).toEqual([null, '2']);
  });
});

describe('parseXml and iamEndpointOf', () => {
  it('decodes entities and CDATA, skips declarations and comments', () => {
    const root = parseXml(
      '<?xml version="1.0"?><!-- c --><a x="1"><b>&lt;&#65;&#x42;&amp;</b><c><![CDATA[<raw>]]></c><d/></a>',
    );
    expect(root.children.map((c) => [c.name, c.text])).toEqual([
      ['b', '<AB&'],
      ['c', '<raw>'],
      ['d', ''],
    ]);
  });

  it('throws on two roots or an unclosed element', () => {
    expect(() => parseXml('<a/><b/>')).toThrow();
    expect(() => parseXml('<a><b></b>')).toThrow();
  });

  it('names the partition’s IAM endpoint and signing region', () => {
    expect(iamEndpointOf('eu-west-1')).toEqual({
      url: 'https://iam.amazonaws.com',
      signingRegion: 'us-east-1',
    });
    expect(iamEndpointOf('cn-northwest-1').signingRegion).toBe('cn-north-1');
    expect(iamEndpointOf('us-gov-east-1').url).toBe('https://iam.us-gov.amazonaws.com');
  });
});
