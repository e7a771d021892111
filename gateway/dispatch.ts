/**
 * From a request frame to a response frame: reads the header, finds the API's handler, refuses
 * versions it does not serve the way Kafka does, decodes by the schema table, runs the handler and
 * encodes its answer. A frame that does not parse throws KafkaProtocolError (the connection closes,
 * as a broker closes it on an invalid request).
 */
import type { Message } from '../protocol/kafka/codec.js';
import { KafkaProtocolError, emptyMessage } from '../protocol/kafka/codec.js';
import { ERROR } from '../protocol/kafka/error-codes.js';
import { API_VERSIONS_KEY, decodeRequest, encodeResponse, readHeaderStart } from '../protocol/kafka/frame.js';
import { inVersions } from '../protocol/kafka/schema.js';
import type { ApiHandler, ConnectionContext, GatewayContext } from './api.js';
import { errorCodeOf } from './api.js';
import { apiVersionsAnswer } from './apis/api-versions.js';
import { servingContext } from './sasl.js';
import { SaslAuthenticate, SaslHandshake } from '../protocol/kafka/messages/sasl.js';

/** What a connection may ask before it authenticates: ApiVersions, SaslHandshake, SaslAuthenticate. */
const SASL_FREE_APIS: ReadonlySet<number> = new Set([
  API_VERSIONS_KEY,
  SaslHandshake.apiKey,
  SaslAuthenticate.apiKey,
]);
import { runForClient } from './quota-context.js';

/** The answer frame, or null when the client expects none (Produce with acks=0). */
export async function dispatch(
  frame: Uint8Array,
  gateway: GatewayContext,
  connection: ConnectionContext,
): Promise<Uint8Array | null> {
  let header;
  try {
    header = readHeaderStart(frame);
  } catch (error) {
    throw new KafkaProtocolError(`unreadable request header: ${(error as Error).message}`);
  }
  const handler = gateway.apis().get(header.apiKey);
  if (!handler) throw new KafkaProtocolError(`unknown api key ${header.apiKey}`);
  const { schema } = handler;
  const { apiVersion: version, correlationId } = header;
  if (header.apiKey === API_VERSIONS_KEY && version > handler.maxVersion) {
    // KIP-511: a version newer than ours gets a v0 answer listing what we serve.
    return encodeResponse(correlationId, schema, 0, apiVersionsAnswer(gateway, ERROR.UNSUPPORTED_VERSION));
  }
  if (!inVersions(version, schema.validVersions))
    throw new KafkaProtocolError(`${schema.name} v${version} is not a version Kafka defines`);
  const { body } = decodeRequest(frame, schema);
  if (version < handler.minVersion || version > handler.maxVersion) {
    return encodeResponse(
      correlationId,
      schema,
      version,
      errorAnswer(handler, body, ERROR.UNSUPPORTED_VERSION, version),
    );
  }
  // SASL (gateway/sasl.ts): a request is served as the connection's principal, or refused.
  let served = gateway;
  if (!SASL_FREE_APIS.has(header.apiKey)) {
    const context = servingContext(gateway, connection, Date.now());
    if ('close' in context) throw new KafkaProtocolError(context.close);
    if ('unauthenticated' in context)
      return encodeResponse(
        correlationId,
        schema,
        version,
        errorAnswer(handler, body, ERROR.SASL_AUTHENTICATION_FAILED, version),
      );
    served = context;
  }
  // Client quotas (gateway/quota-context.ts): each Kafka client's requests carry its client.id.
  const clientId = header.clientId ?? '';
  if (handler.noResponse?.(body)) {
    await runForClient(clientId, () =>
      handler.handle(body, { header, version, gateway: served, connection }),
    );
    return null;
  }
  const { result: answer, throttleTimeMs } = await runForClient(clientId, async (): Promise<Message> => {
    try {
      return await handler.handle(body, { header, version, gateway: served, connection });
    } catch (error) {
      if (error instanceof KafkaProtocolError) throw error;
      return errorAnswer(handler, body, errorCodeOf(error), version);
    }
  });
  return encodeResponse(
    correlationId,
    schema,
    version,
    withThrottle(schema, version, answer, throttleTimeMs),
  );
}

/** The answer with the client quota's throttle time, where this version of the API carries one. */
function withThrottle(schema: ApiHandler['schema'], version: number, answer: Message, ms: number): Message {
  const field = schema.response.find((f) => f.name === 'throttleTimeMs');
  if (ms <= 0 || !field || !inVersions(version, field.versions)) return answer;
  return { ...answer, throttleTimeMs: Math.max(Number(answer['throttleTimeMs'] ?? 0), ms) };
}

function errorAnswer(handler: ApiHandler, request: Message, code: number, version: number): Message {
  if (handler.errorResponse) return handler.errorResponse(request, code, version);
  const answer = emptyMessage(handler.schema.response, version);
  const top = handler.schema.response.find((f) => f.name === 'errorCode');
  if (!top || !inVersions(version, top.versions))
    throw new KafkaProtocolError(`${handler.schema.name} v${version} has no way to carry error ${code}`);
  answer['errorCode'] = code;
  return answer;
}
