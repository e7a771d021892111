#!/usr/bin/env node
import { App, Tags, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readContextSettings } from './config.js';
import { SluiceStack } from './sluice-stack.js';

const app = new App();
const stack = new SluiceStack(app, readContextSettings(app.node).stackName ?? 'Sluice', {
  // Environment-agnostic unless the CLI knows the account and region (cdk deploy with a profile).
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
Tags.of(stack).add('application', 'sluice');
// cdk-nag's AWS Solutions pack runs during every synth; an unacknowledged finding fails it.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
