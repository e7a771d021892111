/**
 * The optional Kafka gateway service (sluice:kafkaGateway): ECS Fargate behind an NLB, its own task
 * role granted on the API, the image as a Docker asset staged without Docker, and clean under the
 * cdk-nag AwsSolutions pack. Off by default.
 */
import { Validations } from 'aws-cdk-lib';
import type { PolicyValidationPluginReport } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { sluiceApp } from './app.js';

const findings = (report: PolicyValidationPluginReport): string[] =>
  report.violations
    .filter((v) => v.severity === 'error' || v.severity === 'warning')
    .flatMap((v) =>
      v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath ?? r.resourceLogicalId}`),
    );

describe('KafkaGateway', () => {
  it('is not deployed unless asked for', () => {
    const { stack } = sluiceApp();
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::ECS::Service', 0);
    template.resourceCountIs('AWS::ElasticLoadBalancingV2::LoadBalancer', 0);
    expect(stack.kafkaGateway).toBeUndefined();
  });

  it('runs sluice gateway on Fargate behind a TCP NLB on 9092, advertising the NLB, signing with its role', () => {
    const { app, stack } = sluiceApp({ context: { 'sluice:kafkaGateway': 'true' } });
    const pack = new AwsSolutionsChecks(app);
    Validations.of(app).addPlugins(pack);
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', {
      Type: 'network',
      Scheme: 'internal',
    });
    template.hasResourceProperties('AWS::ElasticLoadBalancingV2::Listener', { Port: 9092, Protocol: 'TCP' });
    template.hasResourceProperties('AWS::ECS::Service', { LaunchType: 'FARGATE', DesiredCount: 2 });
    const task = Object.values(template.findResources('AWS::ECS::TaskDefinition'))[0] as {
      Properties: { ContainerDefinitions: { Command: unknown[]; Image: unknown; PortMappings: unknown[] }[] };
    };
    const container = task.Properties.ContainerDefinitions[0]!;
    expect(container.Command.slice(0, 3)).toEqual(['--listen', '0.0.0.0:9092', '--advertise']);
    expect(container.Command).toContain('--url');
    expect(JSON.stringify(container.Image)).toMatch(/cdk-hnb659fds-container-assets/);
    // The task role may invoke the API (granted like any client), and nothing else of Sluice's.
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Action: 'execute-api:Invoke', Effect: 'Allow' })]),
      },
      Roles: [{ Ref: Match.stringLikeRegexp('KafkaGatewayTaskTaskRole') }],
    });
    template.hasOutput('KafkaBootstrap', {});
    expect(findings(pack.validateScope(app))).toEqual([]);
  }, 120_000);
});
