import path from 'node:path';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import { Construct } from 'constructs';
import { CONSOLE_VENDOR_FILES } from '../../lib/http/console-site.js';
import type { SluiceApi } from './sluice-api.js';
import { REPO_ROOT, SLUICE_NODEJS_DEFAULTS, acknowledgeRuntimePin } from './sluice-functions.js';

export interface ConsoleSiteProps {
  /** The HTTP API the console is served beside, on the same origin. */
  readonly api: SluiceApi;
  /**
   * Retention of the function's log group.
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;
}

/**
 * The web console deployed beside the API, on its own origin: `GET /console` and `GET /console/{proxy+}`
 * are routes of the HTTP API to a small function that serves console/ and uPlot's two files, bundled
 * with it. Same origin means no CORS and that the console's SigV4 signatures (made in the browser with
 * the user's credentials, for the API's host) are the API's own: the user sees and does what the IAM
 * policy (Kafka's ACLs, docs/authorization.md) allows. The function itself reads no data and holds no
 * permission beyond writing its logs.
 */
export class ConsoleSite extends Construct {
  readonly function: nodejs.NodejsFunction;

  constructor(scope: Construct, id: string, props: ConsoleSiteProps) {
    super(scope, id);
    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: 'Execution role of the Sluice web console function (static files only)',
    });
    logGroup.grantWrite(role);
    const vendor = Object.entries(CONSOLE_VENDOR_FILES).map(
      ([name, file]) => `cp "${path.join(REPO_ROOT, 'node_modules', file)}" "{out}/console/vendor/${name}"`,
    );
    this.function = new nodejs.NodejsFunction(this, 'Function', {
      ...SLUICE_NODEJS_DEFAULTS,
      entry: path.join(REPO_ROOT, 'functions', 'console.ts'),
      handler: 'handler',
      description: 'Sluice web console (static files)',
      memorySize: 256,
      timeout: Duration.seconds(5),
      role,
      logGroup,
      bundling: {
        ...SLUICE_NODEJS_DEFAULTS.bundling,
        // The console's files go beside the handler (functions/console.ts reads console/ there).
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (_input: string, output: string) => [
            `mkdir -p "${output}/console/vendor"`,
            `cp "${path.join(REPO_ROOT, 'console')}"/*.html "${path.join(REPO_ROOT, 'console')}"/*.js "${path.join(REPO_ROOT, 'console')}"/*.css "${output}/console/"`,
            ...vendor.map((c) => c.replaceAll('{out}', output)),
          ],
        },
      },
    });
    acknowledgeRuntimePin(this.function);
    const integration = new HttpLambdaIntegration('ConsoleIntegration', this.function);
    for (const routePath of ['/console', '/console/{proxy+}']) {
      const routes = props.api.httpApi.addRoutes({
        path: routePath,
        methods: [apigw.HttpMethod.GET, apigw.HttpMethod.HEAD],
        integration,
        authorizer: new apigw.HttpNoneAuthorizer(),
      });
      for (const route of routes)
        Validations.of(route).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason: `GET ${routePath} serves the web console's static files (HTML, JS, CSS), as a public static site would; they hold no data, and every data request the console makes is SigV4-signed with the user's own credentials and authorized by the API.`,
        });
    }
  }
}
