import { Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { WebSocketIamAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { WebSocketLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENV } from '../../lib/config/environment.js';
import { partitionStateTrigger } from './partition-state-trigger.js';

export interface WaitSocketProps {
  /** The wait function (functions/wait.ts): every route of the WebSocket API. */
  readonly handler: lambda.Function;
  /** The notifier (functions/wait-notifier.ts), on the metadata table's stream. */
  readonly notifier: lambda.Function;
  /** The metadata table, with a stream of NEW_AND_OLD_IMAGES (the notifier reads both high watermarks). */
  readonly metadataTable: dynamodb.ITable;
  /** The HTTP API, whose fetch route's grant a registration's topics are checked against. */
  readonly httpApiId: string;
  /** Where trigger batches given up on go. @default none */
  readonly streamFailure?: lambda.IEventSourceDlq;
  /**
   * Retention of the stage's access logs.
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly accessLogRetention?: logs.RetentionDays;
}

/** The access log fields of the WebSocket stage: who connected, which route, what came of it. */
const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  connectionId: '$context.connectionId',
  routeKey: '$context.routeKey',
  eventType: '$context.eventType',
  status: '$context.status',
  caller: '$context.identity.userArn',
  sourceIp: '$context.identity.sourceIp',
  integrationError: '$context.integrationErrorMessage',
  requestTime: '$context.requestTimeEpoch',
};

/**
 * The wait socket (docs/api.md "Waiting on a WebSocket"): an API Gateway WebSocket API whose
 * `$connect` takes SigV4 (the IAM authorizer: the caller needs `execute-api:Invoke` on it), with route
 * selection on the message's `action` (`hello`, `wait`, else `$default`) and `$disconnect`, all to the wait
 * function; and the notifier on the metadata table's stream, filtered to partition state items as the
 * Connect runtime's trigger is. Both may post to this stage's connections and nothing else.
 */
export class WaitSocket extends Construct {
  readonly api: apigw.WebSocketApi;
  readonly stage: apigw.WebSocketStage;
  readonly trigger: lambda.EventSourceMapping;
  /** `wss://…/{stage}`: what clients connect to (GET /v1/cluster's waitUrl). */
  readonly url: string;

  constructor(scope: Construct, id: string, props: WaitSocketProps) {
    super(scope, id);
    const integration = (name: string) => new WebSocketLambdaIntegration(name, props.handler);
    this.api = new apigw.WebSocketApi(this, 'Api', {
      description: 'Sluice: where caught-up consumers wait',
      routeSelectionExpression: '$request.body.action',
      connectRouteOptions: {
        integration: integration('ConnectIntegration'),
        authorizer: new WebSocketIamAuthorizer(),
      },
      disconnectRouteOptions: { integration: integration('DisconnectIntegration') },
      defaultRouteOptions: { integration: integration('DefaultIntegration') },
    });
    this.api.addRoute('wait', { integration: integration('WaitIntegration') });
    this.api.addRoute('hello', { integration: integration('HelloIntegration') });
    const accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: props.accessLogRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.stage = new apigw.WebSocketStage(this, 'Stage', {
      webSocketApi: this.api,
      stageName: 'live',
      autoDeploy: true,
      accessLogSettings: {
        destination: new apigw.LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });
    this.url = this.stage.url;

    const stack = Stack.of(this);
    // cdk-nag spells a finding's resource as the template does: pseudo parameters while the stack is
    // environment-agnostic, literals once the CLI knows them (infra/constructs/sluice-functions.ts).
    const spelled = (value: string, pseudo: string): string =>
      Token.isUnresolved(value) ? `<${pseudo}>` : value;
    const apiLogicalId = stack.getLogicalId(this.api.node.defaultChild as apigw.CfnApi);
    const connections = `arn:${spelled(stack.partition, 'AWS::Partition')}:execute-api:${spelled(stack.region, 'AWS::Region')}:${spelled(stack.account, 'AWS::AccountId')}:<${apiLogicalId}>/${this.stage.stageName}/*/@connections/*`;
    for (const fn of [props.handler, props.notifier]) {
      fn.addEnvironment(ENV.waitEndpoint, this.stage.callbackUrl);
      // PostToConnection (and its GET/DELETE) on this stage's connections only.
      this.stage.grantManagementApiAccess(fn);
      Validations.of(fn.role!).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${connections}]`,
        reason:
          'Connection ids are made by API Gateway as clients connect; the grant covers the connections of this one stage of the wait socket.',
      });
    }
    // A WebSocket API authorizes a connection once, on $connect (IAM here); its messages and its
    // $disconnect carry no credentials of their own.
    for (const key of ['$disconnect', '$default', 'wait', 'hello'])
      Validations.of(this.api.node.findChild(`${key}-Route`)).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'API Gateway authorizes a WebSocket connection on $connect only (here with SigV4 and IAM); later routes of the same connection cannot take an authorizer, and each registration is checked for READ on its topics by the wait function.',
      });
    props.handler.addEnvironment(ENV.httpApiId, props.httpApiId);

    // No batching window: a waiting consumer is told as soon as the trigger reads the shard.
    this.trigger = partitionStateTrigger(this, {
      table: props.metadataTable,
      target: props.notifier,
      maxRecordAge: Duration.minutes(5),
      ...(props.streamFailure ? { onFailure: props.streamFailure } : {}),
    });
  }
}
