import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { CfnElement } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import * as path from 'node:path';
import type { RouteGrant } from '../../lib/auth/grants.js';
import { consumeGrants, produceGrants } from '../../lib/auth/grants.js';
import type { StreamsConfig } from '../../streams/runtime/config.js';
import { parseStreamsConfig } from '../../streams/runtime/config.js';
import { sourceTopicsOf } from '../../streams/lambda/positions.js';
import { topicNameOf } from '../../streams/task.js';
import type { Topology } from '../../streams/topology.js';
import { ENV, NODE_OPTIONS_VALUE } from '../../lib/config/environment.js';
import type { MetadataTable } from './metadata-table.js';
import type { SluiceApi } from './sluice-api.js';
import { REPO_ROOT, SLUICE_NODEJS_DEFAULTS, acknowledgeRuntimePin } from './sluice-functions.js';

/** The module name functions/streams-app-entry.ts imports the app from; esbuild aliases it to `entry`. */
const APP_MODULE = 'sluice-streams-app';

export interface StreamsAppProps {
  /** The Sluice deployment the app reads and writes (a SluiceStack has both). */
  readonly sluice: { readonly api: SluiceApi; readonly metadata: MetadataTable };
  /** Path of the app's module, which exports `topology()` (the module `npm run streams` runs). */
  readonly entry: string;
  /** That module's `topology()`: its topics decide the trigger and the grants. */
  readonly topology: Topology;
  /**
   * Kafka Streams' configs: `application.id` (required), `processing.guarantee`, `commit.interval.ms`.
   * `bootstrap.servers` is the deployment's API.
   */
  readonly config: Readonly<Record<string, string>>;
  /**
   * The function's timeout. A run ends as soon as it has processed what it found, so this bounds a
   * backlog's chunk, not the usual run.
   * @default Duration.minutes(5)
   */
  readonly timeout?: Duration;
  /** @default 1024 */
  readonly memorySize?: number;
  /**
   * Retries of a wake-up whose run could not finish (timed out, or the app failed). The run commits
   * what it processed before failing, so each retry makes progress.
   * @default -1 (until the stream record expires, 24 hours)
   */
  readonly retryAttempts?: number;
  /** @default logs.RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
}

/**
 * A Streams application in Lambda: its processor function (the app's module bundled with the
 * bounded-run handler of streams/lambda), woken by the metadata table's DynamoDB Stream through an
 * event source mapping whose filter passes only the partition items of the app's source topics, so
 * an idle app is never invoked. Its role may do what the app needs and nothing more: READ on its
 * source topics and its group, WRITE on its sink topics, CREATE for its repartition topics, and the
 * table's items of its own state and task leases.
 */
export class StreamsApp extends Construct {
  readonly function: nodejs.NodejsFunction;
  readonly config: StreamsConfig;
  /** Topics the app reads (repartition topics by their full names). */
  readonly sourceTopics: readonly string[];
  /** Topics the app writes. */
  readonly sinkTopics: readonly string[];

  constructor(scope: Construct, id: string, props: StreamsAppProps) {
    super(scope, id);
    const { api, metadata } = props.sluice;
    if ('bootstrap.servers' in props.config)
      throw new Error('bootstrap.servers is the deployment API; leave it out of a StreamsApp config');
    // The API's endpoint stands in for the URL so the configs parse at synth time (a bad config
    // fails `cdk synth`, not the first invocation).
    this.config = parseStreamsConfig({ ...props.config, 'bootstrap.servers': 'https://synth.invalid' });
    const appId = this.config.applicationId;
    this.sourceTopics = sourceTopicsOf(props.topology, appId);
    this.sinkTopics = [
      ...new Set(props.topology.subTopologies.flatMap((s) => s.sinks.map((t) => topicNameOf(appId, t)))),
    ];

    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of the Sluice Streams app ${appId}`,
    });
    logGroup.grantWrite(role);

    const config = { ...props.config, 'bootstrap.servers': api.httpApi.apiEndpoint };
    this.function = new nodejs.NodejsFunction(this, 'Processor', {
      ...SLUICE_NODEJS_DEFAULTS,
      entry: path.join(REPO_ROOT, 'functions/streams-app-entry.ts'),
      handler: 'handler',
      description: `Sluice Streams app ${appId}`,
      memorySize: props.memorySize ?? 1024,
      timeout: props.timeout ?? Duration.minutes(5),
      role,
      logGroup,
      environment: {
        [ENV.streamsConfig]: Stack.of(this).toJsonString(config),
        [ENV.tableName]: metadata.tableName,
        [ENV.streamsSigningRegion]: Stack.of(this).region,
        [ENV.nodeOptions]: NODE_OPTIONS_VALUE,
      },
      bundling: {
        ...SLUICE_NODEJS_DEFAULTS.bundling,
        esbuildArgs: { '--alias': `${APP_MODULE}=${path.resolve(props.entry)}` },
      },
    });
    acknowledgeRuntimePin(this.function);

    this.function.addEventSource(
      new DynamoEventSource(metadata.table, {
        startingPosition: lambda.StartingPosition.LATEST,
        filters: [wakeupFilter(this.sourceTopics)],
        batchSize: 100,
        // The event only wakes the run; its records need no splitting to find a bad one.
        bisectBatchOnError: false,
        retryAttempts: props.retryAttempts ?? -1,
      }),
    );
    this.grantApp(api, metadata, role, props.topology.internalTopics().length > 0);
  }

  private grantApp(api: SluiceApi, metadata: MetadataTable, role: iam.IRole, repartitions: boolean): void {
    const appId = this.config.applicationId;
    for (const topic of this.sourceTopics) api.grantConsume(role, topic, appId);
    for (const topic of this.sinkTopics) api.grantProduce(role, topic);
    // Kafka Streams creates its repartition topics itself, as KafkaStreams.start does here.
    if (repartitions) api.grantCreateTopics(role);
    acknowledgeWildcards(role, api, [
      ...this.sourceTopics.flatMap((t) => consumeGrants(t, appId)),
      ...this.sinkTopics.flatMap((t) => produceGrants(t)),
    ]);
    // State entries S#{app}#…, task leases and outboxes ST#{app}#…: no other item of the table.
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: STATE_ACTIONS.map((a) => `dynamodb:${a}`),
        resources: [metadata.table.tableArn],
        conditions: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`S#${appId}#*`, `ST#${appId}#*`] },
        },
      }),
    );
  }
}

/** The cdk-nag findings of the app's role, each acknowledged with its reason. */
const acknowledgeWildcards = (role: iam.IRole, api: SluiceApi, routes: RouteGrant[]): void => {
  const apiId = Stack.of(api).getLogicalId(api.httpApi.node.defaultChild as CfnElement);
  const arn = (r: RouteGrant) =>
    `arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${apiId}>/$default/${r.method}${r.path}`;
  for (const r of new Set(routes.filter((r) => r.path.includes('*')).map(arn)))
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${r}]`,
      reason:
        'The * is the partition number: a Streams task may own any partition of its topics, and partitions only grow. The topic is named literally.',
    });
  Validations.of(role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      "dynamodb:ListStreams has no resource-level permissions; the event source mapping's poller needs it. The stream's records are read on the table's stream ARN only.",
  });
};

/** What the state backend and the task leases call (a transaction is authorized per item by these). */
const STATE_ACTIONS = [
  'GetItem',
  'Query',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'ConditionCheckItem',
];

/**
 * Passes a stream record only when it is a commit on a partition item (`P#{topicId}#{p}` / `STATE`,
 * which every produce updates) of one of `topics`.
 */
export const wakeupFilter = (topics: readonly string[]): Record<string, unknown> =>
  lambda.FilterCriteria.filter({
    eventName: lambda.FilterRule.isEqual('MODIFY'),
    dynamodb: {
      Keys: { pk: { S: lambda.FilterRule.beginsWith('P#') }, sk: { S: lambda.FilterRule.isEqual('STATE') } },
      NewImage: { topic: { S: lambda.FilterRule.or(...topics) } },
    },
  });
