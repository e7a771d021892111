/**
 * The web console deployed beside the API (context `sluice:console`): routes on the HTTP API with no
 * authorizer for the static files only, a function that holds no data permission, cdk-nag green, and
 * the bundle itself: esbuild's output with the console's files beside it, whose handler serves them.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { ConsoleSite } from '../../infra/constructs/console-site.js';
import type { SluiceApi } from '../../infra/constructs/sluice-api.js';
import type { ApiGatewayV2Event, ApiGatewayV2Result } from '../../lib/http/apigw.js';
import { sluiceApp } from './app.js';

const routeKeys = (template: Template): string[] =>
  Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map(
    (r) => (r as { Properties: { RouteKey: string } }).Properties.RouteKey,
  );

describe('the console beside the API', () => {
  it('is off by default', () => {
    const { stack } = sluiceApp();
    const keys = routeKeys(Template.fromStack(stack));
    expect(keys.some((k) => k.includes('/console'))).toBe(false);
    expect(stack.console).toBeUndefined();
  });

  it('with sluice:console adds public GET and HEAD routes for the static files, a function with no data access, and its URL', () => {
    const { app, stack } = sluiceApp({ context: { 'sluice:console': 'true' } });
    const pack = new AwsSolutionsChecks(app);
    Validations.of(app).addPlugins(pack);
    const template = Template.fromStack(stack);
    expect(
      routeKeys(template)
        .filter((k) => k.includes('/console'))
        .sort(),
    ).toEqual(['GET /console', 'GET /console/{proxy+}', 'HEAD /console', 'HEAD /console/{proxy+}']);
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
      RouteKey: 'GET /console/{proxy+}',
      AuthorizationType: 'NONE',
    });
    // Every other HTTP route still requires SigV4 (the wait socket's WebSocket routes, keyed `$connect`,
    // `wait` …, not `METHOD /path`, are checked in wait-socket.test.ts: IAM on $connect, which is all
    // API Gateway allows).
    const others = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).filter((r) => {
      const key = (r as { Properties: { RouteKey: string } }).Properties.RouteKey;
      return key.includes(' /') && !key.includes('/console');
    });
    expect(
      others.filter(
        (r) => (r as { Properties: { AuthorizationType: string } }).Properties.AuthorizationType === 'NONE',
      ),
    ).toHaveLength(1); // GET /v1/health
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: 'Sluice web console (static files)',
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
    });
    // Its role may write its logs and nothing else: no table, bucket or API permission.
    const roleId = Object.entries(template.findResources('AWS::IAM::Role')).find(([, r]) =>
      JSON.stringify(r).includes('web console'),
    )![0];
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p) =>
        JSON.stringify((p as { Properties: { Roles: unknown } }).Properties.Roles).includes(roleId),
      )
      .flatMap(
        (p) =>
          (p as { Properties: { PolicyDocument: { Statement: { Action: string | string[] }[] } } }).Properties
            .PolicyDocument.Statement,
      )
      .flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]));
    expect(statements.length).toBeGreaterThan(0);
    expect(statements.every((a) => a.startsWith('logs:'))).toBe(true);
    template.hasOutput('ConsoleUrl', { Value: Match.anyValue() });
    // cdk-nag's AwsSolutions pack: nothing unacknowledged.
    const report = pack.validateScope(app);
    const findings = report.violations
      .filter((v) => v.severity === 'error' || v.severity === 'warning')
      .flatMap((v) =>
        v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath ?? r.resourceLogicalId}`),
      );
    expect(findings).toEqual([]);
  });

  it('bundles the console’s files beside its handler, which serves them and nothing else', async () => {
    const outdir = mkdtempSync(path.join(tmpdir(), 'sluice-console-site-'));
    const app = new App({ outdir });
    const stack = new Stack(app, 'ConsoleOnly');
    const httpApi = new apigw.HttpApi(stack, 'Api');
    new ConsoleSite(stack, 'Console', { api: { httpApi } as unknown as SluiceApi });
    const assembly = app.synth();
    const bundle = readdirSync(assembly.directory)
      .map((d) => path.join(assembly.directory, d))
      .find((d) => existsSync(path.join(d, 'console', 'index.html')));
    expect(bundle).toBeDefined();
    expect(readdirSync(path.join(bundle!, 'console')).sort()).toEqual([
      'app.js',
      'index.html',
      'sigv4.js',
      'style.css',
      'vendor',
    ]);
    expect(readdirSync(path.join(bundle!, 'console', 'vendor')).sort()).toEqual([
      'uPlot.iife.min.js',
      'uPlot.min.css',
    ]);
    const { handler } = (await import(pathToFileURL(path.join(bundle!, 'index.mjs')).href)) as {
      handler: (e: ApiGatewayV2Event) => Promise<ApiGatewayV2Result>;
    };
    const get = (rawPath: string, method = 'GET') =>
      handler({
        version: '2.0',
        routeKey: `${method} /console/{proxy+}`,
        rawPath,
        rawQueryString: '',
        headers: {},
        requestContext: { http: { method, path: rawPath }, requestId: 'r' },
        isBase64Encoded: false,
      });
    const index = await get('/console/');
    expect(index.statusCode).toBe(200);
    expect(index.headers!['content-type']).toBe('text/html; charset=utf-8');
    expect(index.headers!['content-security-policy']).toContain("default-src 'self'");
    expect(Buffer.from(index.body!, 'base64').toString()).toContain('<title>Sluice console</title>');
    const uplot = await get('/console/vendor/uPlot.iife.min.js');
    expect([uplot.statusCode, uplot.headers!['content-type']]).toEqual([
      200,
      'text/javascript; charset=utf-8',
    ]);
    expect((await get('/console')).headers).toEqual({ location: '/console/' });
    expect((await get('/console/app.js', 'HEAD')).body).toBe('');
    for (const hostile of [
      '/console/../index.mjs',
      '/console/%2e%2e%2findex.mjs',
      '/console/vendor/../../index.mjs',
      '/console/index.mjs',
      '/console/vendor/x.js',
    ])
      expect([hostile, (await get(hostile)).statusCode]).toEqual([hostile, 404]);
    expect((await get('/console/app.js', 'POST')).statusCode).toBe(404);
    rmSync(outdir, { recursive: true, force: true });
  }, 120_000);
});
