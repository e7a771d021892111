import { App, Stack, Validations } from 'aws-cdk-lib';
import type { PolicyValidationPluginReport } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SluiceStack } from '../../infra/sluice-stack.js';
import { sluiceApp } from './app.js';

// cdk-nag 3 is a CDK validation plugin, not an Aspect: findings are not Annotations but entries of
// the plugin's report, and suppressions are `Validations.of(construct).acknowledge({ id, reason })`.

function findings(report: PolicyValidationPluginReport): string[] {
  return report.violations
    .filter((v) => v.severity === 'error' || v.severity === 'warning')
    .flatMap((v) =>
      v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath ?? r.resourceLogicalId}`),
    );
}

/** Every acknowledgement in the tree: construct path → { rule id → reason }. */
function acknowledgements(app: App): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const c of app.node.findAll()) {
    for (const entry of c.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
        (out[c.node.path] ??= {})[id.replace(/^annotation::/i, '')] = reason;
      }
    }
  }
  return out;
}

describe('cdk-nag AwsSolutions', () => {
  let app: App;
  let stack: SluiceStack;
  let pack: AwsSolutionsChecks;

  beforeAll(() => {
    ({ app, stack } = sluiceApp());
    pack = new AwsSolutionsChecks(app);
    Validations.of(app).addPlugins(pack);
  });

  it('reports no unacknowledged errors or warnings', () => {
    expect(findings(pack.validateScope(app))).toEqual([]);
  });

  it('synthesizes with the pack registered as a validation plugin, leaving no warnings', () => {
    expect(() => app.synth()).not.toThrow();
    expect(Annotations.fromStack(stack).findError('*', Match.anyValue())).toEqual([]);
    expect(Annotations.fromStack(stack).findWarning('*', Match.anyValue())).toEqual([]);
  });

  it('acknowledges exactly the expected findings, each with a written reason', () => {
    const acks = acknowledgements(app);
    const objects = 'AwsSolutions-IAM5[Resource::<StorageStore0.Arn>/*]';
    const segments = 'AwsSolutions-IAM5[Resource::<Segments.Arn>/*]';
    const simulation = [
      'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:iam::<AWS::AccountId>:user/*]',
      'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:iam::<AWS::AccountId>:role/*]',
    ];
    // Posting to the wait socket's connections (infra/constructs/wait-socket.ts).
    const connections =
      'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<WaitSocketApiBD7269D4>/live/*/@connections/*]';
    // X-Ray's segment writes have no resource-level permissions (infra/monitoring.ts).
    const xray = 'AwsSolutions-IAM5[Resource::*]';
    const sorted = (lists: Record<string, string[]>) =>
      Object.fromEntries(Object.entries(lists).map(([path, rules]) => [path, [...rules].sort()]));
    expect(
      sorted(Object.fromEntries(Object.entries(acks).map(([path, rules]) => [path, Object.keys(rules)]))),
    ).toEqual(
      sorted({
        'Sluice/Storage/AccessLogs': ['AwsSolutions-S1'],
        'Sluice/Functions/Admin': ['AwsSolutions-L1'],
        'Sluice/Functions/Produce': ['AwsSolutions-L1'],
        'Sluice/Functions/Fetch': ['AwsSolutions-L1'],
        'Sluice/Functions/Groups': ['AwsSolutions-L1'],
        'Sluice/Functions/Connect': ['AwsSolutions-L1'],
        'Sluice/Functions/ConnectWorker': ['AwsSolutions-L1'],
        'Sluice/Functions/Maintenance': ['AwsSolutions-L1'],
        'Sluice/Functions/AdminRole': [objects, segments, ...simulation, xray],
        'Sluice/Functions/ProduceRole': [objects, ...simulation, xray],
        'Sluice/Functions/FetchRole': [objects, segments, ...simulation, xray],
        'Sluice/Functions/ConnectRole': [...simulation, xray],
        'Sluice/Functions/ConnectWorkerRole': [
          objects,
          'AwsSolutions-IAM5[Resource::<MetadataTable.Arn>/stream/*]',
          xray,
        ],
        'Sluice/Functions/MaintenanceRole': [objects, segments, xray],
        // The transaction coordinator's markers: objects on the stores, as produce's batches.
        'Sluice/Functions/GroupsRole': [objects, ...simulation, xray],
        'Sluice/DeadLetters/Queue': ['AwsSolutions-SQS3'],
        'Sluice/Monitoring/Alarms': ['AwsSolutions-SNS2'],
        'Sluice/Api/HttpApi/GET--v1--health': ['AwsSolutions-APIG4'],
        'Sluice/Functions/Wait': ['AwsSolutions-L1'],
        'Sluice/Functions/WaitNotifier': ['AwsSolutions-L1'],
        'Sluice/Functions/WaitRole': [...simulation, connections, xray],
        'Sluice/Functions/WaitNotifierRole': [
          connections,
          'AwsSolutions-IAM5[Resource::<MetadataTable.Arn>/stream/*]',
          xray,
        ],
        'Sluice/WaitSocket/Api/$disconnect-Route': ['AwsSolutions-APIG4'],
        'Sluice/WaitSocket/Api/$default-Route': ['AwsSolutions-APIG4'],
        'Sluice/WaitSocket/Api/wait-Route': ['AwsSolutions-APIG4'],
        'Sluice/WaitSocket/Api/hello-Route': ['AwsSolutions-APIG4'],
      }),
    );
    for (const rules of Object.values(acks)) {
      for (const reason of Object.values(rules)) expect(reason.length).toBeGreaterThan(60);
    }
  });

  // `cdk synth` makes the stack's region known (the CLI defaults it to us-east-1), and with cdk.json's
  // @aws-cdk/core:enablePartitionLiterals the partition becomes a literal: a finding spelled
  // `arn:aws:iam::…` that an acknowledgement of `arn:<AWS::Partition>:…` does not cover.
  it.each([
    ['a region (cdk synth with no profile)', { region: 'us-east-1' }],
    ['a China region', { region: 'cn-north-1' }],
    ['an account and region (cdk deploy with a profile)', { account: '123456789012', region: 'eu-west-1' }],
  ])('is clean when the CLI knows %s', (_name, env) => {
    const known = sluiceApp({ stackProps: { env } });
    expect(findings(new AwsSolutionsChecks(known.app).validateScope(known.app))).toEqual([]);
  });

  it('is clean with several stores too', () => {
    const several = sluiceApp({ context: { 'sluice:storeCount': 3 } });
    expect(findings(new AwsSolutionsChecks(several.app).validateScope(several.app))).toEqual([]);
  });

  it('does flag a non-compliant resource and then fails synthesis (the check is live)', () => {
    const bare = new App({ builtinCloudFormationValidation: false });
    new s3.Bucket(new Stack(bare, 'Bare'), 'Plain');
    const bareChecks = new AwsSolutionsChecks(bare);
    expect(findings(bareChecks.validateScope(bare))).toEqual(
      expect.arrayContaining([
        'AwsSolutions-S1 at Bare/Plain/Resource',
        'AwsSolutions-S10 at Bare/Plain/Resource',
      ]),
    );
    Validations.of(bare).addPlugins(bareChecks);
    expect(() => bare.synth()).toThrow(/AwsSolutions-S10/);
  });
});
