/**
 * The Kafka gateway as a service: `sluice gateway` (the same process as the sidecar) on ECS Fargate
 * behind a Network Load Balancer, signing for its own task role. It listens beyond loopback, so every
 * client authenticates with SASL/OAUTHBEARER and is served as its own IAM principal
 * (docs/kafka-groups-and-auth.md): grant the role the routes and delegation its clients need
 * (kafkaGatewayGrants, or narrower). The gateway is stateless, so tasks scale out and any task serves any request; the NLB
 * passes TCP through and the gateway advertises the NLB's name as the one broker.
 *
 * The image is built from this repository (gateway/Dockerfile) by CDK's asset support: `cdk synth`
 * only fingerprints and stages the files (no Docker); `cdk deploy` builds and pushes it.
 */
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { SluiceApi } from './sluice-api.js';
import { REPO_ROOT } from './sluice-functions.js';

export interface KafkaGatewayProps {
  /** The HTTP API the gateway serves Kafka clients from. */
  readonly api: SluiceApi;
  /** @default a new VPC over two zones with one NAT gateway (the tasks call the API's public endpoint) */
  readonly vpc?: ec2.IVpc;
  /** Kafka's port on the load balancer and in the container. @default 9092 */
  readonly port?: number;
  /** @default 2 */
  readonly desiredCount?: number;
  /** @default 512 */
  readonly cpu?: number;
  /** @default 1024 */
  readonly memoryLimitMiB?: number;
  /** Whether the load balancer faces the internet. @default false (clients in the VPC or peered) */
  readonly internetFacing?: boolean;
}

/** Files the image never needs; staging them would only slow `cdk synth`. */
const NOT_IN_IMAGE = [
  'node_modules',
  '.git',
  'cdk.out',
  '.sluice',
  'test',
  'bench',
  'docs',
  'dist',
  'coverage',
  'reports',
];

export class KafkaGateway extends Construct {
  readonly service: ecs.FargateService;
  readonly loadBalancer: elbv2.NetworkLoadBalancer;
  /** The role the gateway signs with, acting for its SASL clients: grant it the routes and delegation they need. */
  readonly taskRole: iam.IRole;
  /** `host:port` for Kafka clients' bootstrap.servers. */
  readonly bootstrap: string;

  constructor(scope: Construct, id: string, props: KafkaGatewayProps) {
    super(scope, id);
    const port = props.port ?? 9092;
    const vpc =
      props.vpc ??
      new ec2.Vpc(this, 'Vpc', {
        maxAzs: 2,
        natGateways: 1,
        flowLogs: { all: { trafficType: ec2.FlowLogTrafficType.REJECT } },
      });
    const cluster = new ecs.Cluster(this, 'Cluster', {
      vpc,
      containerInsightsV2: ecs.ContainerInsights.ENABLED,
    });
    const task = new ecs.FargateTaskDefinition(this, 'Task', {
      cpu: props.cpu ?? 512,
      memoryLimitMiB: props.memoryLimitMiB ?? 1024,
      runtimePlatform: {
        cpuArchitecture: ecs.CpuArchitecture.ARM64,
        operatingSystemFamily: ecs.OperatingSystemFamily.LINUX,
      },
    });
    this.taskRole = task.taskRole;
    this.loadBalancer = new elbv2.NetworkLoadBalancer(this, 'Nlb', {
      vpc,
      internetFacing: props.internetFacing ?? false,
      crossZoneEnabled: true,
    });
    this.bootstrap = `${this.loadBalancer.loadBalancerDnsName}:${port}`;
    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    task.addContainer('Gateway', {
      image: ecs.ContainerImage.fromAsset(REPO_ROOT, { file: 'gateway/Dockerfile', exclude: NOT_IN_IMAGE }),
      command: [
        '--listen',
        `0.0.0.0:${port}`,
        '--advertise',
        this.bootstrap,
        '--url',
        props.api.url,
        '--region',
        Stack.of(this).region,
      ],
      portMappings: [{ containerPort: port }],
      logging: ecs.LogDrivers.awsLogs({ logGroup, streamPrefix: 'gateway' }),
    });
    // The execution role exists once a container needs it (to pull the image, write logs).
    if (task.executionRole) {
      Validations.of(task.executionRole).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'ecr:GetAuthorizationToken has no resource-level permissions; pulling the image is scoped to its repository.',
      });
    }
    const securityGroup = new ec2.SecurityGroup(this, 'TaskSecurityGroup', {
      vpc,
      description: 'Kafka clients reach the gateway tasks through the NLB',
    });
    securityGroup.addIngressRule(
      ec2.Peer.ipv4(vpc.vpcCidrBlock),
      ec2.Port.tcp(port),
      'Kafka through the NLB',
    );
    Validations.of(securityGroup).acknowledge({
      id: 'AwsSolutions-EC23',
      reason:
        "The only ingress is Kafka's port from the VPC's own CIDR (the NLB's addresses); the rule cannot read the CIDR, a deploy-time value.",
    });
    this.service = new ecs.FargateService(this, 'Service', {
      cluster,
      taskDefinition: task,
      desiredCount: props.desiredCount ?? 2,
      securityGroups: [securityGroup],
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      circuitBreaker: { rollback: true },
    });
    const listener = this.loadBalancer.addListener('Kafka', { port, protocol: elbv2.Protocol.TCP });
    listener.addTargets('Tasks', {
      port,
      protocol: elbv2.Protocol.TCP,
      targets: [this.service],
      deregistrationDelay: Duration.seconds(30),
      healthCheck: { protocol: elbv2.Protocol.TCP, interval: Duration.seconds(10) },
    });
    Validations.of(this.loadBalancer).acknowledge({
      id: 'AwsSolutions-ELB2',
      reason:
        'NLB access logs need TLS listeners to say anything beyond flow logs, which the VPC keeps; the listener is TCP because Kafka clients speak their own protocol.',
    });
  }
}
