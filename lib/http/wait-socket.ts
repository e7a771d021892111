/**
 * The wait socket's edge (docs/api.md "Waiting on a WebSocket"): API Gateway WebSocket events in
 * (`$connect`, `$disconnect`, and the messages its route selection `$request.body.action` sends to
 * `hello`, `wait` or `$default`), lib/core/log/waiters.ts behind. `hello` hands the connection its id
 * and a token with which the consumer's fetches register waits on it (lib/http/routes/log.ts); `wait`
 * registers without a fetch. Frames are parsed and refused here: a refused frame gets one error frame
 * back and registers nothing. Authorization is the HTTP API's: API Gateway's IAM authorizer admits the
 * connection, the caller it admitted is kept with the connection, and each `wait` frame is checked for
 * READ on every topic it names (the fetch route's grant), before anything is looked up, so a refused
 * caller learns nothing about which topics exist.
 */
import { SluiceError, isSluiceError } from '../../protocol/errors.js';
import type { AccessCheck, Authorizer } from '../auth/acl.js';
import { refusal, topicReads } from '../auth/acl.js';
import type { WaitPartition, WaitRequest, Waiters } from '../core/log/waiters.js';
import type { PartitionChange } from '../core/log/waiters.js';
import { MAX_WAIT_PARTITIONS, WAIT_TTL_MS, partitionKeyOf } from '../core/log/waiters.js';
import { keys } from '../core/keys.js';
import type { Clock } from '../ports/clock.js';
import type { ConnectionNotifier } from '../ports/connections.js';
import type { Item, MetadataStore } from '../ports/metadata-store.js';
import type { ErrorFrame, HelloFrame } from '../wire/types.js';
import { MAX_WAIT_FRAME_BYTES } from '../wire/types.js';
import type { CallerContext } from './types.js';

/** The parts of an API Gateway WebSocket event the wait socket reads. */
export interface WebSocketEvent {
  requestContext: {
    /** `$connect`, `$disconnect`, `hello`, `wait` or `$default`. */
    routeKey: string;
    connectionId: string;
    eventType?: 'CONNECT' | 'MESSAGE' | 'DISCONNECT';
    /** On `$connect` behind the IAM authorizer: who signed the upgrade request. */
    identity?: { userArn?: string | null; accountId?: string | null };
  };
  body?: string | null;
  isBase64Encoded?: boolean;
}

export interface WebSocketResult {
  statusCode: number;
  body?: string;
}

export interface WaitSocketOptions {
  waiters: Waiters;
  /** Where error frames go (the connection the refused frame came from). */
  notifier: ConnectionNotifier;
  store: MetadataStore;
  clock: Clock;
  /**
   * With it, a connection must come with a caller (API Gateway's IAM authorizer on `$connect`) and
   * each registration is checked for READ on its topics; without it (open local development) any
   * connection may wait on any topic.
   */
  authorizer?: Authorizer;
  /**
   * The HTTP API whose route ARNs grant READ (`execute-api:Invoke` on the fetch route): the caller's
   * grants are written against it, not against the WebSocket API.
   */
  httpApi?: { apiId: string; stage: string; accountId: string };
}

const ACTIONS = ['wait', 'hello'] as const;

export class WaitSocket {
  constructor(private readonly options: WaitSocketOptions) {}

  async handle(event: WebSocketEvent): Promise<WebSocketResult> {
    const { routeKey, connectionId } = event.requestContext;
    if (routeKey === '$connect') return this.connect(event);
    if (routeKey === '$disconnect') {
      await this.options.waiters.disconnect(connectionId);
      return { statusCode: 200 };
    }
    try {
      const frame = parseFrame(event);
      if (frame === 'hello') await this.hello(connectionId);
      else {
        await this.authorize(connectionId, frame.partitions);
        await this.options.waiters.registerFrame(connectionId, frame);
      }
    } catch (error) {
      if (!isSluiceError(error)) throw error;
      await this.refuse(connectionId, error);
    }
    return { statusCode: 200 };
  }

  /** Keeps the caller API Gateway admitted, for the checks of its registrations. */
  private async connect(event: WebSocketEvent): Promise<WebSocketResult> {
    if (!this.options.authorizer) return { statusCode: 200 };
    const principalArn = event.requestContext.identity?.userArn;
    if (!principalArn) return { statusCode: 401, body: 'the connection is not signed' };
    await this.options.store.put({
      ...keys.connectionCaller(event.requestContext.connectionId),
      principalArn,
      expiresAt: Math.ceil((this.options.clock.now() + WAIT_TTL_MS) / 1000),
    });
    return { statusCode: 200 };
  }

  /** Hands the connection its id and a new token (where authorization is on, only a signed one). */
  private async hello(connectionId: string): Promise<void> {
    if (this.options.authorizer) await this.callerOf(connectionId);
    const token = await this.options.waiters.hello(connectionId);
    const frame: HelloFrame = { type: 'hello', connectionId, token };
    await this.options.notifier.post(connectionId, JSON.stringify(frame));
  }

  /** The principal API Gateway admitted on `$connect`. */
  private async callerOf(connectionId: string): Promise<string> {
    const item: Item | undefined = await this.options.store.get(keys.connectionCaller(connectionId), {
      consistent: true,
    });
    const principalArn = item?.['principalArn'];
    if (typeof principalArn !== 'string')
      throw new SluiceError('SASL_AUTHENTICATION_FAILED', 'the connection has no authenticated caller');
    return principalArn;
  }

  private async authorize(connectionId: string, partitions: readonly WaitPartition[]): Promise<void> {
    const { authorizer, httpApi } = this.options;
    if (!authorizer) return;
    const principalArn = await this.callerOf(connectionId);
    const caller: CallerContext = {
      principalArn,
      accountId: httpApi?.accountId ?? '',
      apiId: httpApi?.apiId ?? '',
      stage: httpApi?.stage ?? '$default',
    };
    const checks: AccessCheck[] = [...new Set(partitions.map((p) => p.topic))].flatMap(topicReads);
    const answers = await authorizer.allowed(caller, checks);
    const denied = checks.find((_, i) => answers[i] !== true);
    if (denied) throw refusal(denied);
  }

  private async refuse(connectionId: string, error: SluiceError): Promise<void> {
    const frame: ErrorFrame = {
      type: 'error',
      error: {
        code: error.code,
        // As the router answers a 500: its words are for the log, never for the client.
        message: error.code === 'UNKNOWN_SERVER_ERROR' ? 'internal error; see the server log' : error.message,
        retriable: error.retriable,
      },
    };
    await this.options.notifier.post(connectionId, JSON.stringify(frame));
  }
}

const invalid = (message: string): SluiceError => new SluiceError('INVALID_REQUEST', message);

/**
 * A `wait` frame, `hello`, or the reason it is refused (malformed JSON, unknown action or field, bad
 * numbers).
 */
export const parseFrame = (
  event: Pick<WebSocketEvent, 'body' | 'isBase64Encoded'>,
): WaitRequest | 'hello' => {
  const raw = event.body ?? '';
  const text = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
  if (Buffer.byteLength(text) > MAX_WAIT_FRAME_BYTES)
    throw new SluiceError('RECORD_LIST_TOO_LARGE', `a frame is at most ${MAX_WAIT_FRAME_BYTES} bytes`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw invalid('the frame is not JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw invalid('the frame must be a JSON object with an action');
  const fields = body as Record<string, unknown>;
  const action = fields['action'];
  if (!ACTIONS.includes(action as (typeof ACTIONS)[number]))
    throw invalid(`unknown action ${JSON.stringify(action)}; the actions are: ${ACTIONS.join(', ')}`);
  if (action === 'hello') {
    for (const name of Object.keys(fields)) if (name !== 'action') throw invalid(`unknown field ${name}`);
    return 'hello';
  }
  for (const name of Object.keys(fields))
    if (!['action', 'partitions', 'isolationLevel'].includes(name)) throw invalid(`unknown field ${name}`);
  const isolation = fields['isolationLevel'];
  if (isolation !== undefined && isolation !== 'read_uncommitted' && isolation !== 'read_committed')
    throw invalid('isolationLevel must be read_uncommitted or read_committed');
  const list = fields['partitions'];
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_WAIT_PARTITIONS)
    throw invalid(`partitions must be an array of 1 to ${MAX_WAIT_PARTITIONS} partitions`);
  const seen = new Set<string>();
  const partitions = list.map((p: unknown, i): WaitPartition => {
    const where = `partitions[${i}]`;
    if (p === null || typeof p !== 'object' || Array.isArray(p)) throw invalid(`${where} must be an object`);
    const o = p as Record<string, unknown>;
    for (const name of Object.keys(o))
      if (!['topic', 'partition', 'fetchOffset'].includes(name))
        throw invalid(`${where} has unknown field ${name}`);
    const { topic, partition, fetchOffset } = o;
    if (typeof topic !== 'string' || topic.length === 0 || topic.length > 249)
      throw invalid(`${where}.topic must be a topic name`);
    if (!Number.isSafeInteger(partition) || (partition as number) < 0 || (partition as number) > 2 ** 31 - 1)
      throw invalid(`${where}.partition must be an integer in [0, 2147483647]`);
    if (!Number.isSafeInteger(fetchOffset) || (fetchOffset as number) < 0)
      throw invalid(`${where}.fetchOffset must be a non-negative integer`);
    const id = `${topic}\u0000${String(partition)}`;
    if (seen.has(id)) throw invalid(`${where} repeats ${topic}-${String(partition)}`);
    seen.add(id);
    return { topic, partition: partition as number, fetchOffset: fetchOffset as number };
  });
  return { partitions, ...(isolation === 'read_committed' ? { isolationLevel: 'read_committed' } : {}) };
};

/**
 * One record of the metadata table's stream as the notifier reads it: the item's keys and its images
 * before and after the write (the trigger's view type is NEW_AND_OLD_IMAGES), as plain items (the
 * function's adapter converts DynamoDB's typed form; the local stack's emulation makes them directly).
 */
export interface StreamChangeRecord {
  pk?: string | undefined;
  sk?: string | undefined;
  oldImage?: Item | undefined;
  newImage?: Item | undefined;
}

/**
 * The notifier: one batch of the metadata table's stream (on AWS the event source mapping's event,
 * locally the stack's emulation of it). The partition state items in it tell the registrations whose
 * offsets their high watermark (or LSO) moved over.
 */
export const notifyStreamBatch = async (
  waiters: Waiters,
  records: readonly StreamChangeRecord[],
): Promise<{ notified: number; gone: number }> => {
  const changes: PartitionChange[] = [];
  for (const r of records) {
    const key = partitionKeyOf(r.pk, r.sk);
    if (!key) continue;
    changes.push({
      ...key,
      ...(r.oldImage ? { oldImage: r.oldImage } : {}),
      ...(r.newImage ? { newImage: r.newImage } : {}),
    });
  }
  if (changes.length === 0) return { notified: 0, gone: 0 };
  return waiters.partitionsChanged(changes);
};
