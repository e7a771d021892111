/**
 * The connections port over API Gateway's management API (PostToConnection on a WebSocket API's
 * stage): the only file that imports its client. A connection that is gone (GoneException, 410) is
 * `gone`; throttling and outages become a retriable KAFKA-style error without the AWS names, so the
 * stream trigger retries the batch.
 */
import {
  ApiGatewayManagementApiClient,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import { SluiceError } from '../../../protocol/errors.js';
import type { ConnectionNotifier, PostOutcome } from '../../ports/connections.js';

export interface ApiGatewayConnectionsOptions {
  /** The stage's connection endpoint, `https://{api}.execute-api.{region}.amazonaws.com/{stage}`. */
  endpoint: string;
  /** Replaces the HTTP layer (tests answer with recorded service responses). */
  client?: ApiGatewayManagementApiClient;
}

export class ApiGatewayConnections implements ConnectionNotifier {
  private readonly client: ApiGatewayManagementApiClient;

  constructor(options: ApiGatewayConnectionsOptions) {
    this.client =
      options.client ??
      new ApiGatewayManagementApiClient({
        endpoint: options.endpoint,
        requestHandler: { connectionTimeout: 3_000, requestTimeout: 5_000 },
      });
  }

  async post(connectionId: string, message: string): Promise<PostOutcome> {
    try {
      await this.client.send(
        new PostToConnectionCommand({ ConnectionId: connectionId, Data: new TextEncoder().encode(message) }),
      );
      return 'sent';
    } catch (error) {
      const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
      if (e.name === 'GoneException' || e.$metadata?.httpStatusCode === 410) return 'gone';
      throw new SluiceError('KAFKA_STORAGE_ERROR', 'a waiting connection could not be told; will retry', {
        retriable: true,
        cause: error,
      });
    }
  }
}
