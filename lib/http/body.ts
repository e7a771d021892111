/** Request-body parsing at the boundary: every failure is a 400 with a message a user can act on. */
import { SluiceError, invalidRequest } from '../../protocol/errors.js';
import { EDGE_LIMITS } from './limits.js';
import type { HttpRequest } from './types.js';

// RFC 8259: JSON text is UTF-8. `fatal` refuses malformed bytes instead of turning them into U+FFFD,
// which would store different data than the client sent; the BOM is kept so JSON.parse refuses it.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
// Only an escape can put a surrogate code unit into valid UTF-8 JSON text: look closer only then.
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Parses a JSON body, refusing (400 INVALID_REQUEST, before anything is read or written) a body over
 * `maxBytes`, bytes that are not UTF-8, nesting deeper than EDGE_LIMITS.maxJsonDepth (which would
 * overflow the stack of whatever walks the value later) and strings with unpaired surrogates, which
 * have no UTF-8 form and would be stored as U+FFFD.
 */
export const readJson = (
  request: HttpRequest,
  maxBytes: number = EDGE_LIMITS.maxControlBodyBytes,
): unknown => {
  const { body } = request;
  if (body.length === 0) throw invalidRequest('request body is empty; expected a JSON object');
  if (body.length > maxBytes) {
    throw invalidRequest(`request body is ${body.length} bytes; this route accepts at most ${maxBytes}`);
  }
  // The content type is not checked: curl -d sends form-urlencoded, and the body decides anyway.
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    throw invalidRequest('request body is not valid UTF-8 (RFC 8259)');
  }
  checkDepth(text);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new SluiceError('INVALID_REQUEST', `malformed JSON body: ${(cause as Error).message}`, { cause });
  }
  if (SURROGATE_ESCAPE.test(text)) rejectLoneSurrogates(value);
  return value;
};

/** Counts nesting outside strings without parsing; stops at the first level past the limit. */
const checkDepth = (text: string): void => {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > EDGE_LIMITS.maxJsonDepth) {
        throw invalidRequest(`JSON body nests deeper than ${EDGE_LIMITS.maxJsonDepth} levels`);
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
};

const rejectLoneSurrogates = (root: unknown): void => {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) throw loneSurrogate();
    } else if (value !== null && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if (LONE_SURROGATE.test(key)) throw loneSurrogate();
        pending.push(inner);
      }
    }
  }
};

const loneSurrogate = (): SluiceError =>
  invalidRequest('request body has a string with an unpaired surrogate escape, which has no UTF-8 form');

export const readJsonObject = (
  request: HttpRequest,
  maxBytes: number = EDGE_LIMITS.maxControlBodyBytes,
): Record<string, unknown> => {
  const value = readJson(request, maxBytes);
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
