/* global crypto, TextEncoder, URL -- a browser module */
// AWS Signature Version 4 for API Gateway (service execute-api) with WebCrypto, so a deployed console
// calls the API with the user's own credentials and Sluice's Kafka ACLs apply to what they see. Like
// the SDK's signer (sdk/sigv4.ts): the path is URI-encoded once more, the payload hash is signed, and
// no x-amz-content-sha256 header is sent.
const text = new TextEncoder();
const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('');
const sha256 = async (data) =>
  hex(await crypto.subtle.digest('SHA-256', typeof data === 'string' ? text.encode(data) : data));
const hmac = async (key, data) => {
  const k = await crypto.subtle.importKey(
    'raw',
    typeof key === 'string' ? text.encode(key) : key,
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  return crypto.subtle.sign('HMAC', k, text.encode(data));
};
/** RFC 3986 encoding, as SigV4 wants it (encodeURIComponent leaves !'()* alone). */
const rfc3986 = (s) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * Headers to add to a request: `url` absolute, `body` a string or undefined, `credentials`
 * {accessKeyId, secretAccessKey, sessionToken?, region}.
 */
export const signRequest = async (method, url, body, credentials, now = new Date()) => {
  const { host, pathname, searchParams } = new URL(url);
  const amzDate = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const headers = { host, 'x-amz-date': amzDate };
  if (credentials.sessionToken) headers['x-amz-security-token'] = credentials.sessionToken;
  const names = Object.keys(headers).sort();
  const canonicalPath = pathname
    .split('/')
    .map((segment) => rfc3986(segment))
    .join('/');
  const canonicalQuery = [...searchParams]
    .map(([k, v]) => [rfc3986(k), rfc3986(v)])
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const canonical = [
    method,
    canonicalPath,
    canonicalQuery,
    ...names.map((n) => `${n}:${headers[n]}`),
    '',
    names.join(';'),
    await sha256(body ?? ''),
  ].join('\n');
  const scope = `${day}/${credentials.region}/execute-api/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, await sha256(canonical)].join('\n');
  let key = await hmac(`AWS4${credentials.secretAccessKey}`, day);
  for (const part of [credentials.region, 'execute-api', 'aws4_request']) key = await hmac(key, part);
  const signature = hex(await hmac(key, toSign));
  const { host: _host, ...sent } = headers;
  return {
    ...sent,
    authorization: `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`,
  };
};
