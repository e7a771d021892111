/**
 * The local API Gateway's WebSocket API: the wait socket at `ws://…/v1/wait` on the same port as the
 * HTTP API. It behaves as API Gateway does: a `$connect` event when a client connects (refused with
 * the HTTP status the handler answers; under SLUICE_AUTH=iam only after the upgrade request's SigV4
 * signature was verified, with the signer as the event's identity), route selection on the message's
 * `action` (`$request.body.action`: `hello` or `wait`, else `$default`), a `$disconnect` event when it closes,
 * and PostToConnection for the handler's messages (the ConnectionNotifier below). The ws package
 * does the framing; everything else is the handler's, the very code the wait function runs.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { WebSocketServer } from 'ws';
import type { ConnectionNotifier } from '../lib/ports/connections.js';
import type { WebSocketEvent, WebSocketResult } from '../lib/http/wait-socket.js';
import { MAX_WAIT_FRAME_BYTES } from '../lib/wire/types.js';
import type { GatewayAuth } from './auth/gateway-auth.js';

/** Where the local WebSocket API is served. */
export const WAIT_SOCKET_PATH = '/v1/wait';
/** The route keys of the WebSocket API besides `$connect`, `$disconnect` and `$default`. */
const ROUTES = new Set(['wait', 'hello']);

export type WebSocketHandler = (event: WebSocketEvent) => Promise<WebSocketResult>;

/** PostToConnection over the sockets this gateway holds. */
export class LocalConnections implements ConnectionNotifier {
  readonly sockets = new Map<string, WebSocket>();
  /** Messages sent, for the benchmarks' cost counts. */
  posted = 0;

  post(connectionId: string, message: string): Promise<'sent' | 'gone'> {
    const socket = this.sockets.get(connectionId);
    if (!socket || socket.readyState !== socket.OPEN) return Promise.resolve('gone');
    this.posted += 1;
    return new Promise((resolve) => socket.send(message, (error) => resolve(error ? 'gone' : 'sent')));
  }
}

/** API Gateway's route selection: `$request.body.action`, else `$default`. */
const routeOf = (body: string): string => {
  try {
    const action = (JSON.parse(body) as { action?: unknown } | null)?.action;
    return typeof action === 'string' && ROUTES.has(action) ? action : '$default';
  } catch {
    return '$default';
  }
};

const flatHeaders = (req: IncomingMessage): Record<string, string> => {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers))
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  return headers;
};

export const attachWaitSocket = (
  server: Server,
  options: {
    handler: () => WebSocketHandler;
    connections: LocalConnections;
    auth?: GatewayAuth;
    log?: (line: string) => void;
  },
): { close(): void } => {
  const log = options.log ?? (() => {});
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_WAIT_FRAME_BYTES });
  let closed = false;
  /** Runs the handler (a throw is a failed invocation, logged); nothing once the gateway closed. */
  const invoke = (handler: WebSocketHandler, event: WebSocketEvent): Promise<unknown> =>
    closed
      ? Promise.resolve()
      : Promise.resolve()
          .then(() => handler(event))
          .catch((error: unknown) =>
            log(`wait socket ${event.requestContext.routeKey} failed: ${String(error)}`),
          );
  const reject = (socket: Duplex, status: number, reason: string) => {
    socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
  };
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    void (async () => {
      const target = req.url ?? '/';
      const q = target.indexOf('?');
      const rawPath = q < 0 ? target : target.slice(0, q);
      if (rawPath !== WAIT_SOCKET_PATH) return reject(socket, 404, 'Not Found');
      let identity: WebSocketEvent['requestContext']['identity'];
      if (options.auth) {
        const decision = await options.auth.check({
          method: 'GET',
          route: {
            method: 'GET',
            pattern: WAIT_SOCKET_PATH,
            job: 'fetch',
            acl: { operation: 'DESCRIBE', resourceType: 'CLUSTER' },
          },
          path: WAIT_SOCKET_PATH,
          rawPath,
          rawQuery: q < 0 ? '' : target.slice(q + 1),
          headers: flatHeaders(req),
          body: new Uint8Array(),
        });
        if ('refusal' in decision) {
          log(`auth: wait socket refused: ${decision.refusal.code}: ${decision.reason}`);
          return decision.refusal.code === 'SASL_AUTHENTICATION_FAILED'
            ? reject(socket, 401, 'Unauthorized')
            : reject(socket, 403, 'Forbidden');
        }
        const iam = (decision.context['authorizer'] as { iam?: { userArn?: string; accountId?: string } })
          ?.iam;
        identity = { userArn: iam?.userArn ?? null, accountId: iam?.accountId ?? null };
      }
      // API Gateway's connection ids are opaque base64 of 12 bytes.
      const connectionId = randomBytes(12).toString('base64');
      const handler = options.handler();
      const connected = await handler({
        requestContext: {
          routeKey: '$connect',
          eventType: 'CONNECT',
          connectionId,
          ...(identity ? { identity } : {}),
        },
      });
      if (connected.statusCode !== 200) return reject(socket, connected.statusCode, 'Refused');
      wss.handleUpgrade(req, socket, head, (ws) => {
        options.connections.sockets.set(connectionId, ws);
        // One message at a time per connection, in the order sent.
        let queue: Promise<unknown> = Promise.resolve();
        ws.on('message', (data, isBinary) => {
          const body = isBinary ? Buffer.from(data as Buffer).toString('base64') : String(data);
          queue = queue.then(() =>
            invoke(handler, {
              requestContext: {
                routeKey: isBinary ? '$default' : routeOf(body),
                eventType: 'MESSAGE',
                connectionId,
              },
              body,
              isBase64Encoded: isBinary,
            }),
          );
        });
        ws.on('close', () => {
          options.connections.sockets.delete(connectionId);
          queue = queue.then(() =>
            invoke(handler, {
              requestContext: { routeKey: '$disconnect', eventType: 'DISCONNECT', connectionId },
            }).catch((error: unknown) => log(`wait socket disconnect error: ${String(error)}`)),
          );
        });
      });
    })().catch((error: unknown) => {
      log(`wait socket upgrade error: ${String(error)}`);
      reject(socket, 500, 'Internal Server Error');
    });
  };
  server.on('upgrade', onUpgrade);
  return {
    close: () => {
      closed = true;
      server.off('upgrade', onUpgrade);
      for (const ws of wss.clients) ws.terminate();
      wss.close();
    },
  };
};
