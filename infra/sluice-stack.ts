import { Aws, CfnOutput, Fn, Stack, Validations } from 'aws-cdk-lib';
import type { CfnElement } from 'aws-cdk-lib';
import type { StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { DEFAULT_MAX_REQUEST_BYTES } from '../lib/config/environment.js';
import { readContextSettings } from './config.js';
import type { AccountProtection } from './account-protection.js';
import { applyAccountProtection, readProtectionContext } from './account-protection.js';
import { KafkaGateway } from './constructs/kafka-gateway.js';
import { LogStorage } from './constructs/log-storage.js';
import { MaintenanceSchedule } from './constructs/maintenance-schedule.js';
import { ConnectRuntime } from './constructs/connect-runtime.js';
import { MetadataTable } from './constructs/metadata-table.js';
import { SluiceApi } from './constructs/sluice-api.js';
import { SegmentStorage } from './constructs/segment-storage.js';
import { SluiceFunctions } from './constructs/sluice-functions.js';
import { DeadLetters, Monitoring } from './monitoring.js';
import { ConsoleSite } from './constructs/console-site.js';
import { WaitSocket } from './constructs/wait-socket.js';
import { ENV } from '../lib/config/environment.js';

/** Props win over the `sluice:*` context values, which win over the defaults. */
export interface SluiceStackProps extends StackProps {
  /**
   * Number of replica stores (S3 buckets).
   * @default context `sluice:storeCount`, else 1
   */
  readonly storeCount?: number;
  /**
   * Availability zone ids for S3 Express One Zone stores, one directory bucket per zone.
   * @default context `sluice:expressZones`, else none (S3 Standard buckets)
   */
  readonly expressZones?: readonly string[];
  /**
   * Deletion protection on the metadata table.
   * @default context `sluice:deletionProtection`, else true
   */
  readonly deletionProtection?: boolean;
  /**
   * The cluster id reported by `GET /v1/cluster`.
   * @default context `sluice:clusterId`, else the GUID of the CloudFormation stack (stable until the
   * stack is deleted, unique per deployment)
   */
  readonly clusterId?: string;
  /**
   * Largest accepted request body in bytes after decoding.
   * @default context `sluice:maxRequestBytes`, else 4194304
   */
  readonly maxRequestBytes?: number;
  /**
   * Directory holding the `<job>.ts` Lambda entry points.
   * @default <repo>/functions
   */
  readonly functionsEntryDir?: string;
  /** Also deploy the Kafka gateway service. @default context sluice:kafkaGateway, else false */
  readonly kafkaGateway?: boolean;
  /**
   * API stage and route throttling, reserved concurrency per function, the table's on-demand maximum
   * throughput (infra/account-protection.ts); each field wins over its `sluice:*` context value.
   * @default stage 1000 rps / 2000 burst, no route throttles, no reserved concurrency, no table maximum
   */
  readonly protection?: AccountProtection;
  /** Also serve the web console at `<api url>/console/`. @default context sluice:console, else false */
  readonly console?: boolean;
}

/** A whole Sluice deployment: storage, metadata, functions, HTTP API and the maintenance schedule. */
export class SluiceStack extends Stack {
  readonly storage: LogStorage;
  readonly segments: SegmentStorage;
  readonly metadata: MetadataTable;
  readonly functions: SluiceFunctions;
  readonly api: SluiceApi;
  readonly maintenance: MaintenanceSchedule;
  /**
   * The Connect runtime's schedule and data trigger; grantSinkBucket lets S3 sinks write a bucket,
   * grantSinkFunction lets Lambda sinks invoke a function.
   */
  readonly connect: ConnectRuntime;
  /** The Kafka gateway service, when enabled. */
  readonly kafkaGateway?: KafkaGateway;
  /** Dashboard, alarms and their SNS topic (infra/monitoring.ts). */
  readonly monitoring: Monitoring;
  /** The web console beside the API, when enabled. */
  readonly console?: ConsoleSite;
  /** Where caught-up consumers wait: the WebSocket API and the notifier on the table's stream. */
  readonly waitSocket: WaitSocket;

  constructor(scope: Construct, id: string, props: SluiceStackProps = {}) {
    super(scope, id, {
      description: 'Sluice: Apache Kafka model as a serverless application',
      ...props,
    });
    const context = readContextSettings(this.node);

    const expressZones = props.expressZones ?? context.expressZones;
    this.storage = new LogStorage(this, 'Storage', {
      ...(expressZones ? { expressZones } : {}),
      ...((props.storeCount ?? context.storeCount)
        ? { storeCount: props.storeCount ?? context.storeCount }
        : {}),
    });
    this.segments = new SegmentStorage(this, 'Segments', { accessLogBucket: this.storage.accessLogBucket });
    this.metadata = new MetadataTable(this, 'Metadata', {
      deletionProtection: props.deletionProtection ?? context.deletionProtection ?? true,
    });
    this.functions = new SluiceFunctions(this, 'Functions', {
      table: this.metadata,
      storage: this.storage,
      segments: this.segments,
      clusterId: props.clusterId ?? context.clusterId ?? Fn.select(2, Fn.split('/', Aws.STACK_ID)),
      maxRequestBytes: props.maxRequestBytes ?? context.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES,
      ...(props.functionsEntryDir ? { entryDir: props.functionsEntryDir } : {}),
    });
    const { admin, produce, fetch, groups, connect, maintenance } = this.functions.functions;
    const deadLetters = new DeadLetters(this, 'DeadLetters');
    this.connect = new ConnectRuntime(this, 'Connect', {
      handler: this.functions.functions['connect-worker'],
      metadataTable: this.metadata.table,
      deadLetters,
    });
    const protection = { ...readProtectionContext(this.node), ...props.protection };
    this.api = new SluiceApi(this, 'Api', {
      handlers: { admin, produce, fetch, groups, connect },
      ...(protection.apiThrottleRateLimit !== undefined
        ? { throttleRateLimit: protection.apiThrottleRateLimit }
        : {}),
      ...(protection.apiThrottleBurstLimit !== undefined
        ? { throttleBurstLimit: protection.apiThrottleBurstLimit }
        : {}),
    });
    this.waitSocket = new WaitSocket(this, 'WaitSocket', {
      handler: this.functions.functions.wait,
      notifier: this.functions.functions['wait-notifier'],
      metadataTable: this.metadata.table,
      httpApiId: this.api.httpApi.apiId,
      streamFailure: deadLetters.streamFailure,
    });
    // GET /v1/cluster names it, so the SDK's consumers find it.
    admin.addEnvironment(ENV.waitUrl, this.waitSocket.url);
    applyAccountProtection(
      { stage: this.api.stage, functions: this.functions.functions, table: this.metadata.table },
      protection,
    );
    this.maintenance = new MaintenanceSchedule(this, 'Maintenance', {
      handler: maintenance,
      onFailure: deadLetters.onFailure,
    });
    this.monitoring = new Monitoring(this, 'Monitoring', {
      functions: this.functions.functions,
      deadLetters,
      ...(context.alarmEmail ? { alarmEmail: context.alarmEmail } : {}),
      ...(context.lagAlarms ? { lagAlarms: context.lagAlarms } : {}),
      ...(context.produceP99Ms ? { produceP99Ms: context.produceP99Ms } : {}),
      ...(context.tracing !== undefined ? { tracing: context.tracing } : {}),
    });
    new CfnOutput(this, 'AlarmTopic', {
      value: this.monitoring.topic.topicArn,
      description:
        'SNS topic of the alarms: subscribe to it (or deploy with -c sluice:alarmEmail=you@example.com)',
    });
    if (props.kafkaGateway ?? context.kafkaGateway ?? false) {
      this.kafkaGateway = new KafkaGateway(this, 'KafkaGateway', { api: this.api });
      // The gateway listens beyond loopback, so every client authenticates (SASL/OAUTHBEARER) and
      // each of its requests is authorized as that client; the role may call every route and act for
      // any principal (CLUSTER_ACTION, lib/auth/delegation.ts), and a client still gets only its own grants.
      this.api.grantAdmin(this.kafkaGateway.taskRole);
      const apiId = this.getLogicalId(this.api.httpApi.node.defaultChild as CfnElement);
      Validations.of(this.kafkaGateway.taskRole).acknowledge({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${apiId}>/$default/*/v1/*]`,
        reason:
          'The shared gateway serves every Kafka client of the deployment as that client (SASL, then Sluice-On-Behalf-Of), so its role may call every route and act for any principal; Sluice authorizes each request as the client.',
      });
      new CfnOutput(this, 'KafkaBootstrap', {
        value: this.kafkaGateway.bootstrap,
        description: 'bootstrap.servers for Kafka clients (the gateway NLB)',
      });
    }

    if (props.console ?? context.console ?? false) {
      this.console = new ConsoleSite(this, 'Console', { api: this.api });
      new CfnOutput(this, 'ConsoleUrl', {
        value: `${this.api.url}console/`,
        description: 'The web console (sign in with your AWS credentials on its Credentials page)',
      });
    }

    new CfnOutput(this, 'ApiUrl', { value: this.api.url, description: 'Base URL of the HTTP API' });
    new CfnOutput(this, 'WaitUrl', {
      value: this.waitSocket.url,
      description: 'The wait socket (WebSocket API) where caught-up consumers wait',
    });
    new CfnOutput(this, 'TableName', { value: this.metadata.tableName, description: 'Metadata table' });
    new CfnOutput(this, 'BucketNames', {
      value: Fn.join(',', this.storage.bucketNames),
      description: 'Store buckets, comma-separated, in store-id order (s0, s1, …)',
    });
    new CfnOutput(this, 'SegmentBucket', {
      value: this.segments.bucket.bucketName,
      description: 'The segment store: rolled segments, written once whatever the replication factor',
    });
  }
}
