/**
 * The FunctionInvoker over AWS Lambda's Invoke API (@aws-sdk/client-lambda). The endpoint comes from
 * AWS_ENDPOINT_URL_LAMBDA / AWS_ENDPOINT_URL like every other client (a local Invoke emulator, or
 * LocalStack), else the real service; loopback endpoints get dummy credentials as in clients.ts.
 * Failures of the call become InvokeFailure, worded without AWS's exception or operation names.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { FunctionInvoker, InvokeRequest, InvokeResult } from '../../ports/function-invoker.js';
import { InvokeFailure } from '../../ports/function-invoker.js';
import { LOCAL_CREDENTIALS, isLoopback } from './clients.js';
import { errorName, httpStatusOf } from './errors.js';

export interface LambdaInvokerOptions {
  region?: string;
  /** Explicit endpoint; otherwise AWS_ENDPOINT_URL_LAMBDA, AWS_ENDPOINT_URL or the real service. */
  endpoint?: string;
  /**
   * Socket inactivity before a synchronous invocation is abandoned (default 50 000 ms, as Confluent's
   * Lambda sink); the function may still finish, so the records are sent again (at least once).
   */
  requestTimeoutMs?: number;
  env?: Record<string, string | undefined>;
}

// The call did not reach the function, or the service was briefly unable to run it: try again.
const RETRIABLE = new Map<string, string>([
  ['TooManyRequestsException', 'throttled'],
  ['ServiceException', 'the service failed'],
  ['ResourceConflictException', 'the function is being updated'],
  ['ResourceNotReadyException', 'the function is not ready'],
  ['EC2ThrottledException', 'the function network is throttled'],
  ['EC2UnexpectedException', 'the function network failed'],
  ['ENILimitReachedException', 'the function network is at its limit'],
  ['SubnetIPAddressLimitReachedException', 'the function network is at its limit'],
]);

const REFUSED = new Map<string, string>([
  ['ResourceNotFoundException', 'no such function'],
  ['RequestTooLargeException', 'the payload is too large'],
  ['InvalidRequestContentException', 'the payload is not valid JSON'],
  ['InvalidParameterValueException', 'an invalid parameter'],
  ['AccessDeniedException', 'access denied'],
  ['UnrecognizedClientException', 'credentials not recognized'],
  ['InvalidSignatureException', 'credentials not recognized'],
  ['KMSAccessDeniedException', 'the function cannot decrypt its environment'],
]);

const translate = (error: unknown, functionName: string): InvokeFailure => {
  const name = errorName(error) ?? '';
  const status = httpStatusOf(error);
  const what = `the function ${functionName} could not be invoked`;
  const retriable = RETRIABLE.get(name);
  if (retriable !== undefined) return new InvokeFailure(`${what}: ${retriable}`, true, status);
  const refused = REFUSED.get(name);
  if (refused !== undefined) return new InvokeFailure(`${what}: ${refused}`, false, status);
  if (status !== undefined && status < 500 && status !== 429)
    return new InvokeFailure(`${what}: refused (HTTP ${status})`, false, status);
  // 5xx, 429 and failures without an answer (sockets, DNS, timeouts): the outcome is unknown.
  return new InvokeFailure(`${what}: ${status === undefined ? 'no answer' : `HTTP ${status}`}`, true, status);
};

export const createLambdaInvoker = (options: LambdaInvokerOptions = {}): FunctionInvoker => {
  const env = options.env ?? process.env;
  const fromEnv =
    env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS === 'true'
      ? undefined
      : env.AWS_ENDPOINT_URL_LAMBDA?.trim() || env.AWS_ENDPOINT_URL?.trim() || undefined;
  const endpoint = options.endpoint || fromEnv;
  const local = endpoint !== undefined && isLoopback(endpoint);
  const hasCredentials = env.AWS_ACCESS_KEY_ID !== undefined || env.AWS_PROFILE !== undefined;
  const region = options.region || (local && env.AWS_REGION === undefined ? 'us-east-1' : undefined);
  const agent = { keepAlive: true, maxSockets: 64 };
  const client = new LambdaClient({
    ...(region === undefined ? {} : { region }),
    ...(endpoint === undefined ? {} : { endpoint }),
    ...(local && !hasCredentials ? { credentials: LOCAL_CREDENTIALS } : {}),
    requestHandler: {
      connectionTimeout: 3_000,
      requestTimeout: options.requestTimeoutMs ?? 50_000,
      httpAgent: new HttpAgent(agent),
      httpsAgent: new HttpsAgent(agent),
    },
  });
  return {
    invoke: async (request: InvokeRequest): Promise<InvokeResult> => {
      try {
        const out = await client.send(
          new InvokeCommand({
            FunctionName: request.functionName,
            InvocationType: request.invocationType,
            Payload: request.payload,
          }),
        );
        return {
          statusCode: out.StatusCode ?? 0,
          ...(out.FunctionError ? { functionError: out.FunctionError } : {}),
          payload: out.Payload ?? new Uint8Array(),
        };
      } catch (error) {
        throw translate(error, request.functionName);
      }
    },
  };
};
