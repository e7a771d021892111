import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpIamAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

import type { RouteGrant } from '../../lib/auth/grants.js';
import { adminGrants, consumeGrants, createTopicGrants, produceGrants } from '../../lib/auth/grants.js';
import type { Job } from '../../functions/route-table.js';
import { ROUTE_TABLE } from '../../functions/route-table.js';

/** The functions that serve HTTP routes (maintenance is scheduled, not routed). */
export type ApiJob = Job;

export interface SluiceRoute {
  readonly method: apigw.HttpMethod;
  /** API Gateway route path, with `{name}` parameters. */
  readonly path: string;
  readonly job: ApiJob;
  /** Open to anyone; every other route requires SigV4 (AWS_IAM). */
  readonly public?: boolean;
}

/**
 * Every route of API.md and the function serving it, from the one route table the local gateway
 * also reads, so the deployed API and `npm start` cannot disagree.
 */
export const SLUICE_ROUTES: readonly SluiceRoute[] = ROUTE_TABLE.map((spec) => ({
  method: apigw.HttpMethod[spec.method],
  path: spec.pattern,
  job: spec.job,
  ...(spec.public ? { public: true } : {}),
}));

export interface SluiceApiProps {
  readonly handlers: Readonly<Record<ApiJob, lambda.IFunction>>;
  /**
   * Steady-state requests per second across the stage's routes.
   * @default 1000
   */
  readonly throttleRateLimit?: number;
  /**
   * Burst bucket size across the stage's routes.
   * @default 2000
   */
  readonly throttleBurstLimit?: number;
  /**
   * Retention of the access log group.
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly accessLogRetention?: logs.RetentionDays;
}

/**
 * The HTTP API (API Gateway v2) in front of the functions: the routes of API.md, SigV4 (AWS_IAM)
 * authorization by default, the health route open; a `$default` stage that auto-deploys, with
 * throttling defaults and JSON access logs.
 */
export class SluiceApi extends Construct {
  readonly httpApi: apigw.HttpApi;
  readonly stage: apigw.HttpStage;
  readonly accessLogGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: SluiceApiProps) {
    super(scope, id);
    this.httpApi = new apigw.HttpApi(this, 'HttpApi', {
      description: 'Sluice: the Kafka model over HTTP',
      // Secure by default: a route added without an explicit authorizer still requires SigV4.
      defaultAuthorizer: new HttpIamAuthorizer(),
      createDefaultStage: false,
    });

    this.accessLogGroup = new logs.LogGroup(this, 'AccessLogs', {
      retention: props.accessLogRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.stage = new apigw.HttpStage(this, 'DefaultStage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      throttle: {
        rateLimit: props.throttleRateLimit ?? 1000,
        burstLimit: props.throttleBurstLimit ?? 2000,
      },
      accessLogSettings: {
        destination: new apigw.LogGroupLogDestination(this.accessLogGroup),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });

    const integrations = {} as Record<ApiJob, HttpLambdaIntegration>;
    for (const job of Object.keys(props.handlers) as ApiJob[]) {
      integrations[job] = new HttpLambdaIntegration(`${job}Integration`, props.handlers[job]);
    }
    for (const route of SLUICE_ROUTES) {
      const [created] = this.httpApi.addRoutes({
        path: route.path,
        methods: [route.method],
        integration: integrations[route.job],
        ...(route.public ? { authorizer: new apigw.HttpNoneAuthorizer() } : {}),
      });
      if (route.public && created) {
        Validations.of(created).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason: `${route.method} ${route.path} is the unauthenticated liveness probe of API.md; it returns {"status":"ok"} and reads no data.`,
        });
      }
    }
  }

  /**
   * Lets `grantee` produce to `topic` (Kafka WRITE on the topic, IDEMPOTENT_WRITE on the cluster, and
   * DESCRIBE on a literal topic): `orders`, or `orders-*` for every topic starting `orders-` (Kafka's
   * PREFIXED pattern type).
   */
  grantProduce(grantee: iam.IGrantable, topic: string): iam.Grant {
    return this.grantRoutes(grantee, produceGrants(topic));
  }

  /** Lets `grantee` consume `topic` as a member of `group` (READ/DESCRIBE on both); each may be a `prefix-*`. */
  grantConsume(grantee: iam.IGrantable, topic: string, group: string): iam.Grant {
    return this.grantRoutes(grantee, consumeGrants(topic, group));
  }

  /** Lets `grantee` create topics (Kafka CREATE on the cluster), as a Streams app's repartition topics need. */
  grantCreateTopics(grantee: iam.IGrantable): iam.Grant {
    return this.grantRoutes(grantee, createTopicGrants());
  }

  /** Lets `grantee` call every route: create, alter and delete topics and groups (Kafka ALL). */
  grantAdmin(grantee: iam.IGrantable): iam.Grant {
    return this.grantRoutes(grantee, adminGrants());
  }

  /** execute-api:Invoke on exactly these routes of this API's stage. */
  private grantRoutes(grantee: iam.IGrantable, routes: readonly RouteGrant[]): iam.Grant {
    return iam.Grant.addToPrincipal({
      grantee,
      actions: ['execute-api:Invoke'],
      resourceArns: routes.map((route) =>
        this.httpApi.arnForExecuteApi(route.method, route.path, this.stage.stageName),
      ),
    });
  }

  /** Base URL of the `$default` stage, ending in `/`. */
  get url(): string {
    return this.stage.url;
  }
}

/** HTTP API access log variables; one JSON object per request. */
const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  caller: '$context.identity.caller',
  user: '$context.identity.userArn',
  requestTime: '$context.requestTime',
  httpMethod: '$context.httpMethod',
  routeKey: '$context.routeKey',
  path: '$context.path',
  status: '$context.status',
  protocol: '$context.protocol',
  responseLength: '$context.responseLength',
  latencyMs: '$context.responseLatency',
  integrationLatencyMs: '$context.integrationLatency',
  integrationStatus: '$context.integrationStatus',
  integrationError: '$context.integrationErrorMessage',
  error: '$context.error.message',
  authorizerError: '$context.authorizer.error',
};
