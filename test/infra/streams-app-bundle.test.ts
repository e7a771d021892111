import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { CfnElement } from 'aws-cdk-lib';
import { App, Stack } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { topology } from '../../examples/word-count.js';
import { StreamsApp } from '../../infra/constructs/streams-app.js';
import { SluiceStack } from '../../infra/sluice-stack.js';
import { cdkJsonContext } from './app.js';

// Bundles one Streams app for real (only its stack: the API's functions are bundle.test.ts's), to
// check that esbuild's alias put the app's module in the bundle and that the bundle loads.

let bundle: string;

beforeAll(() => {
  const app = new App({
    context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': ['WordCountApp'] },
    builtinCloudFormationValidation: false,
  });
  const sluice = new SluiceStack(app, 'Sluice');
  const stack = new Stack(app, 'WordCountApp');
  const streamsApp = new StreamsApp(stack, 'WordCount', {
    sluice,
    entry: 'examples/word-count.ts',
    topology: topology(),
    config: { 'application.id': 'word-count' },
  });
  const assembly = app.synth();
  const template = assembly.getStackArtifact(stack.artifactId).template as {
    Resources: Record<string, { Properties: { Code: { S3Key: string }; Handler: string } }>;
  };
  const fn = template.Resources[stack.getLogicalId(streamsApp.function.node.defaultChild as CfnElement)];
  if (!fn) throw new Error('no processor function');
  expect(fn.Properties.Handler).toBe('index.handler');
  bundle = path.join(
    assembly.directory,
    `asset.${fn.Properties.Code.S3Key.replace(/\.zip$/, '')}`,
    'index.mjs',
  );
}, 120_000);

describe('a Streams app bundle', () => {
  it("holds the app's topology, the runtime and no local-stack layer", () => {
    const code = readFileSync(bundle, 'utf8');
    // includes(), not toContain(): a failure would print the whole minified bundle.
    expect(code.includes('word-counts')).toBe(true);
    expect(code.includes('counts-store')).toBe(true);
    expect(code.includes('SLUICE_STREAMS_CONFIG')).toBe(true);
    expect(code.includes('SLUICE_FAULTS must be a JSON object')).toBe(false);
    expect(/\bfrom\s*["']@aws-sdk\//.test(code)).toBe(false);
  });

  it('loads on Node outside the repository and exports a handler function', () => {
    expect(path.relative(process.cwd(), bundle).startsWith('..')).toBe(true);
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        'const m = await import(process.argv[1]); console.log(typeof m.handler);',
        bundle,
      ],
      { encoding: 'utf8', timeout: 30_000, env: { PATH: process.env.PATH ?? '', AWS_REGION: 'us-east-1' } },
    );
    expect(out.trim().split('\n').at(-1)).toBe('function');
  });
});
