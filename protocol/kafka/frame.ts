/**
 * Request and response framing: a frame is an int32 size then that many bytes. A request starts with
 * header v1 (api key, api version, correlation id, client id as a nullable int16 string) or, for
 * flexible versions, v2 (the same plus tagged fields; the client id stays a non-compact string). A
 * response starts with header v0 (correlation id) or, for flexible versions, v1 (plus tagged fields),
 * except ApiVersions, which always answers with v0 so that a client can read an answer to a version
 * the server does not know (KIP-511).
 */
import type { Message } from './codec.js';
import { KafkaProtocolError, Reader, Writer, readFields, writeFields } from './codec.js';
import type { MessageSchema } from './schema.js';
import { inVersions } from './schema.js';

export const API_VERSIONS_KEY = 18;

export interface RequestHeader {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
}

/** The fixed start of every request header: enough to answer even a request we cannot parse. */
export function readHeaderStart(frame: Uint8Array): RequestHeader {
  const r = new Reader(frame);
  const apiKey = r.int16();
  const apiVersion = r.int16();
  const correlationId = r.int32();
  const clientId = r.string(false);
  return { apiKey, apiVersion, correlationId, clientId };
}

export const isFlexible = (schema: MessageSchema, version: number): boolean =>
  inVersions(version, schema.flexibleVersions);

/** Decodes a whole request frame (without its size prefix) whose header says `schema`'s API. */
export function decodeRequest(
  frame: Uint8Array,
  schema: MessageSchema,
): { header: RequestHeader; body: Message } {
  const r = new Reader(frame);
  const apiKey = r.int16();
  const apiVersion = r.int16();
  const correlationId = r.int32();
  const clientId = r.string(false);
  const flexible = isFlexible(schema, apiVersion);
  if (flexible) readFields(r, [], apiVersion, true); // header v2's tagged fields
  const body = readFields(r, schema.request, apiVersion, flexible);
  if (r.remaining !== 0)
    throw new KafkaProtocolError(`${schema.name} v${apiVersion}: ${r.remaining} bytes after the message`);
  return { header: { apiKey, apiVersion, correlationId, clientId }, body };
}

/** Encodes a request (the client side; tests and benchmarks use it). Returns the frame with its size. */
export function encodeRequest(header: RequestHeader, schema: MessageSchema, body: Message): Uint8Array {
  const w = new Writer(512);
  const size = w.reserveInt32();
  w.int16(header.apiKey);
  w.int16(header.apiVersion);
  w.int32(header.correlationId);
  w.string(header.clientId, false);
  const flexible = isFlexible(schema, header.apiVersion);
  if (flexible) w.unsignedVarint(0);
  writeFields(w, schema.request, body, header.apiVersion, flexible);
  w.setInt32(size, w.length - 4);
  return w.finish();
}

/** Encodes a response frame, size prefix included. */
export function encodeResponse(
  correlationId: number,
  schema: MessageSchema,
  version: number,
  body: Message,
): Uint8Array {
  const w = new Writer(256);
  const size = w.reserveInt32();
  w.int32(correlationId);
  const flexible = isFlexible(schema, version);
  if (flexible && schema.apiKey !== API_VERSIONS_KEY) w.unsignedVarint(0);
  writeFields(w, schema.response, body, version, flexible);
  w.setInt32(size, w.length - 4);
  return w.finish();
}

/** Decodes a response frame body (without its size prefix): the client side. */
export function decodeResponse(
  frame: Uint8Array,
  schema: MessageSchema,
  version: number,
): { correlationId: number; body: Message } {
  const r = new Reader(frame);
  const correlationId = r.int32();
  const flexible = isFlexible(schema, version);
  if (flexible && schema.apiKey !== API_VERSIONS_KEY) readFields(r, [], version, true);
  const body = readFields(r, schema.response, version, flexible);
  if (r.remaining !== 0)
    throw new KafkaProtocolError(`${schema.name} v${version} response: ${r.remaining} bytes left over`);
  return { correlationId, body };
}
