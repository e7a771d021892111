/** Request-body parsing at the boundary: every failure is a 400 with a message a user can act on. */
import { SluiceError, invalidRequest } from '../errors.js';
import type { HttpRequest } from './types.js';

export const readJson = (request: HttpRequest): unknown => {
  if (request.body.length === 0) throw invalidRequest('request body is empty; expected a JSON object');
  // The content type is not checked: curl -d sends form-urlencoded, and the body decides anyway.
  try {
    return JSON.parse(
      Buffer.from(request.body.buffer, request.body.byteOffset, request.body.length).toString('utf8'),
    );
  } catch (cause) {
    throw new SluiceError('INVALID_REQUEST', `malformed JSON body: ${(cause as Error).message}`, { cause });
  }
};

export const readJsonObject = (request: HttpRequest): Record<string, unknown> => {
  const value = readJson(request);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalidRequest('request body must be a JSON object');
  }
  return value as Record<string, unknown>;
};

/** Rejects fields the endpoint does not know, so typos fail loudly instead of being ignored. */
export const rejectUnknownFields = (
  body: Record<string, unknown>,
  allowed: readonly string[],
  where = 'request',
): void => {
  const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) throw invalidRequest(`${where} has unknown field(s): ${unknown.join(', ')}`);
};
