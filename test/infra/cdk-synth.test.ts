/**
 * The README's deploy path, offline: `npx cdk synth` runs cdk.json's app (infra/app.ts, cdk-nag's
 * AwsSolutions pack as a validation plugin) with every context default, bundling and CloudFormation
 * validation included, exactly as a new user's first `cdk synth` or `cdk deploy` does. Any nag error
 * fails the synth, so a finding the in-process tests miss (they build the stack themselves) fails here.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Run {
  code: number | null;
  output: string;
}

const synth = (out: string, env: NodeJS.ProcessEnv): Promise<Run> =>
  new Promise((resolve, reject) => {
    const child = spawn('npx', ['cdk', 'synth', '--output', out, '--quiet', '--no-notices'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });

describe('npx cdk synth (the README deploy path, offline)', () => {
  const work = mkdtempSync(path.join(tmpdir(), 'sluice-synth-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('synthesizes the cdk.json app with no cdk-nag error, as a fresh checkout with no AWS profile', async () => {
    // No credentials, profile or region of the machine's: an empty home, as on a clean machine.
    const env: NodeJS.ProcessEnv = {
      PATH: process.env['PATH'],
      HOME: work,
      AWS_CONFIG_FILE: path.join(work, 'none-config'),
      AWS_SHARED_CREDENTIALS_FILE: path.join(work, 'none-credentials'),
      AWS_EC2_METADATA_DISABLED: 'true',
      CDK_DISABLE_VERSION_CHECK: '1',
      npm_config_cache: process.env['npm_config_cache'] ?? path.join(work, 'npm-cache'),
    };
    const out = path.join(work, 'cdk.out');
    const run = await synth(out, env);
    expect(run.output).not.toMatch(/AwsSolutions-[A-Z]+\d+/);
    expect(run.output).not.toMatch(/^ERROR/m);
    expect(run.code).toBe(0);
    const template = JSON.parse(readFileSync(path.join(out, 'Sluice.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string }>;
    };
    // The whole app came out: the table, the API and every function's bundled asset.
    const types = Object.values(template.Resources).map((r) => r.Type);
    expect(types).toContain('AWS::DynamoDB::Table');
    expect(types).toContain('AWS::ApiGatewayV2::Api');
    expect(types.filter((t) => t === 'AWS::Lambda::Function').length).toBeGreaterThanOrEqual(7);
    expect(readdirSync(out).filter((f) => f.startsWith('asset.')).length).toBeGreaterThanOrEqual(7);
  }, 900_000);
});
