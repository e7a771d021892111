/**
 * PostToConnection through the AWS adapter (lib/adapters/aws/connection-notifier.ts): the frame's
 * bytes go to the named connection; a connection that is gone (GoneException, 410) is `gone`, and any
 * other failure is a retriable error that names no AWS exception.
 */
import type { ApiGatewayManagementApiClient } from '@aws-sdk/client-apigatewaymanagementapi';
import { describe, expect, it } from 'vitest';
import { ApiGatewayConnections } from '../../../lib/adapters/aws/connection-notifier.js';
import { isSluiceError } from '../../../protocol/errors.js';

const clientAnswering = (
  answer: (input: { ConnectionId?: string; Data?: Uint8Array }) => Promise<unknown>,
) => {
  const sent: { ConnectionId?: string; Data?: Uint8Array }[] = [];
  const client = {
    send: (command: { input: { ConnectionId?: string; Data?: Uint8Array } }) => {
      sent.push(command.input);
      return answer(command.input);
    },
  } as unknown as ApiGatewayManagementApiClient;
  return { client, sent };
};

const failure = (name: string, status: number) =>
  Object.assign(new Error(`${name} happened`), { name, $metadata: { httpStatusCode: status } });

describe('ApiGatewayConnections', () => {
  it('posts the frame to the connection', async () => {
    const { client, sent } = clientAnswering(() => Promise.resolve({}));
    const connections = new ApiGatewayConnections({ endpoint: 'https://x', client });
    expect(await connections.post('abc=', '{"type":"ready","partitions":[]}')).toBe('sent');
    expect(sent.map((s) => [s.ConnectionId, new TextDecoder().decode(s.Data)])).toEqual([
      ['abc=', '{"type":"ready","partitions":[]}'],
    ]);
  });

  it('answers gone for a connection API Gateway no longer has', async () => {
    const { client } = clientAnswering(() => Promise.reject(failure('GoneException', 410)));
    expect(await new ApiGatewayConnections({ endpoint: 'https://x', client }).post('abc=', '{}')).toBe(
      'gone',
    );
  });

  it('turns throttling and outages into a retriable error without the AWS names', async () => {
    for (const [name, status] of [
      ['LimitExceededException', 429],
      ['InternalServerError', 500],
    ] as const) {
      const { client } = clientAnswering(() => Promise.reject(failure(name, status)));
      const error: unknown = await new ApiGatewayConnections({ endpoint: 'https://x', client })
        .post('abc=', '{}')
        .catch((e: unknown) => e);
      expect(isSluiceError(error) && error.retriable).toBe(true);
      expect((error as Error).message).not.toContain(name);
    }
  });
});
