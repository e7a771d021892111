/**
 * Lambda entry point and composition root of the wait function: the WebSocket API's `$connect`,
 * `$disconnect`, `wait` and `$default` routes (docs/api.md "Waiting on a WebSocket"), over the topic
 * catalog and the metadata table. With SLUICE_AUTHORIZER=iam (the CDK app sets it) a registration's
 * topics are checked for READ with IAM's policy simulator, for the caller API Gateway's IAM authorizer
 * admitted on `$connect`, against the HTTP API's fetch route (SLUICE_HTTP_API_ID).
 */
import { ApiGatewayConnections } from '../lib/adapters/aws/connection-notifier.js';
import type { WebSocketEvent, WebSocketResult } from '../lib/http/wait-socket.js';
import { createLogServices, createWaiting } from '../lib/services.js';
import { ENV } from '../lib/config/environment.js';
import { authorizerFromEnv } from './authorizer.js';
import { depsFromEnv, instrumented, required } from './environment.js';

let socket: ReturnType<typeof createWaiting>['socket'] | undefined;

const build = (accountId: string) => {
  const deps = { ...depsFromEnv(), ...authorizerFromEnv() };
  const notifier = new ApiGatewayConnections({ endpoint: required(ENV.waitEndpoint) });
  return createWaiting(deps, createLogServices(deps), notifier, {
    apiId: required(ENV.httpApiId),
    stage: '$default',
    accountId,
  }).socket;
};

export const handler = async (
  event: WebSocketEvent,
  context?: { invokedFunctionArn?: string },
): Promise<WebSocketResult> =>
  instrumented({ function: 'wait' }, () => {
    socket ??= build(context?.invokedFunctionArn?.split(':')[4] ?? '');
    return socket.handle(event);
  });
