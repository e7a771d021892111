/**
 * What an API handler is: the message schema it speaks (protocol/kafka/messages), the versions it
 * serves, and a function from a decoded request to a response body. Handlers reach Sluice only
 * through `ctx.gateway.sluice` (the SDK over the HTTP API) and hold no state between requests.
 */
import type { Message } from '../protocol/kafka/codec.js';
import type { RequestHeader } from '../protocol/kafka/frame.js';
import type { MessageSchema } from '../protocol/kafka/schema.js';
import { kafkaErrorCode } from '../protocol/kafka/error-codes.js';
import type { SluiceBackend } from './sluice.js';

export interface BrokerAddress {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
}

/** Who a connection authenticated as, and until when (KIP-368 session lifetime). */
export interface SaslSession {
  principal: string;
  /** Epoch ms after which the connection must re-authenticate. */
  expiresAt: number;
}

/** How SASL/OAUTHBEARER tokens are verified (gateway/sasl.ts's presignedWhoami). */
export interface SaslAuthenticator {
  /** The principal a bearer token proves, or throws SaslFailure (gateway/sasl.ts). */
  verify(token: string): Promise<SaslSession>;
}

/** What every handler may use: the backend and who this gateway says it is. */
export interface GatewayContext {
  sluice: SluiceBackend;
  /** The one broker this gateway advertises: leader of every partition, coordinator of every group. */
  broker(): BrokerAddress;
  /** Kafka's cluster id for this deployment. */
  clusterId(): Promise<string>;
  /** The API table, for ApiVersions. */
  apis(): ReadonlyMap<number, ApiHandler>;
  /** The largest fetch wait honoured (Sluice's long poll caps at 20 s). */
  maxFetchWaitMs: number;
  /**
   * SASL/OAUTHBEARER (gateway/sasl.ts): how tokens are verified, and whether a connection must
   * authenticate before any request but ApiVersions and SASL's own. Absent: no mechanism is offered.
   */
  sasl?: { authenticator: SaslAuthenticator; required: boolean };
}

/** Per-connection state a handler may need (SASL identity, per-partition produce ordering). */
export interface ConnectionContext {
  readonly id: number;
  readonly remoteAddress: string;
  /** Free-form per-connection state for handlers (for example the SASL principal). */
  readonly attributes: Map<string, unknown>;
  /**
   * Runs `task` after every earlier task of this connection with the same key has finished: Kafka
   * applies one connection's requests in order, so a pipelined producer's batches to one partition
   * must reach Sluice in the order they were sent, while other keys go on in parallel.
   */
  inOrder<T>(key: string, task: () => Promise<T>): Promise<T>;
  /** Aborted when the connection closes: long polls stop waiting. */
  readonly closed: AbortSignal;
}

export interface RequestContext {
  header: RequestHeader;
  version: number;
  gateway: GatewayContext;
  connection: ConnectionContext;
}

export interface ApiHandler {
  schema: MessageSchema;
  /** The versions this gateway serves (advertised in ApiVersions); others get UNSUPPORTED_VERSION. */
  minVersion: number;
  maxVersion: number;
  handle(request: Message, ctx: RequestContext): Promise<Message>;
  /**
   * The whole answer when the request cannot be served at all (an unsupported version, a failure):
   * every item of the request carries `errorCode`. Without it the answer sets a top-level errorCode
   * when the response has one.
   */
  errorResponse?(request: Message, errorCode: number, version: number): Message;
  /** Whether the client expects no answer (Produce with acks=0). */
  noResponse?(request: Message): boolean;
}

/** Kafka's numeric code of any error a handler catches (Sluice's errors carry Kafka's names). */
export function errorCodeOf(error: unknown): number {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? kafkaErrorCode(code) : kafkaErrorCode('UNKNOWN_SERVER_ERROR');
}

/** A message for the error field of an answer; never a stack trace. */
export function errorMessageOf(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return 'the gateway could not reach Sluice';
  return error instanceof Error ? error.message : code;
}

/** Groups `items` by topic, keeping first-seen order (answers list topics as requests do). */
export function byTopic<T extends { topic: string }>(items: T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const list = out.get(item.topic);
    if (list) list.push(item);
    else out.set(item.topic, [item]);
  }
  return out;
}
