import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { SluiceStack } from '../../infra/sluice-stack.js';
import type { SluiceStackProps } from '../../infra/sluice-stack.js';

const CDK_JSON = new URL('../../cdk.json', import.meta.url);

/** The context of cdk.json (feature flags and sluice:* defaults), so tests synthesize what `cdk synth` does. */
export function cdkJsonContext(): Record<string, unknown> {
  const parsed = JSON.parse(readFileSync(CDK_JSON, 'utf8')) as { context?: Record<string, unknown> };
  return parsed.context ?? {};
}

export interface TestAppOptions {
  /** Extra context on top of cdk.json's, e.g. `sluice:*` values as the CLI would pass them. */
  readonly context?: Record<string, unknown>;
  /** Run esbuild (slow); otherwise bundling is skipped and only the template is checked. */
  readonly bundle?: boolean;
  /**
   * CDK's built-in CloudFormation template validation (a WebAssembly rule engine; 5-20 s per synth).
   * Off in tests for speed: `cdk synth` runs it, and cdk.json's
   * `@aws-cdk/core:validateAgainstDefaultRules` makes its findings fail the synth.
   */
  readonly cloudFormationValidation?: boolean;
  readonly stackProps?: SluiceStackProps;
}

/** An App holding one SluiceStack named "Sluice". */
export function sluiceApp(options: TestAppOptions = {}): { app: App; stack: SluiceStack } {
  const app = new App({
    context: {
      ...cdkJsonContext(),
      ...(options.bundle ? {} : { 'aws:cdk:bundling-stacks': [] }),
      ...options.context,
    },
    builtinCloudFormationValidation: options.cloudFormationValidation ?? false,
  });
  const stack = new SluiceStack(app, 'Sluice', options.stackProps);
  return { app, stack };
}
