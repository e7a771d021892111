/**
 * Builds the S3 and DynamoDB clients once per process (Lambda module scope or the local stack), with
 * timeouts short enough that a stuck socket becomes a retriable error instead of a hung invocation.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';

export interface AwsClientsOptions {
  /** Defaults to the SDK's resolution (AWS_REGION, profile), or us-east-1 for local endpoints. */
  region?: string;
  /** Explicit endpoints (emulators, LocalStack); otherwise AWS_ENDPOINT_URL* or the real services. */
  endpoints?: { s3?: string; dynamodb?: string };
  /** Explicit static credentials; otherwise the SDK's default chain (dummy ones for local endpoints). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Milliseconds to establish a connection (default 3000). */
  connectionTimeoutMs?: number;
  /** Milliseconds of socket inactivity before a DynamoDB request fails (default 10000). */
  dynamodbRequestTimeoutMs?: number;
  /** Milliseconds of socket inactivity before an S3 request fails (default 30000). */
  s3RequestTimeoutMs?: number;
  /** Concurrent sockets per client (default 256). */
  maxSockets?: number;
  /** Where to read AWS_* variables; process.env by default. */
  env?: Record<string, string | undefined>;
}

export interface AwsClients {
  s3: S3Client;
  dynamodb: DynamoDBClient;
}

/**
 * s3rver only accepts its built-in access key; DynamoDB Local and LocalStack accept any. Used when the
 * endpoints are on this machine and no credentials are configured.
 */
export const LOCAL_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

export const createAwsClients = (options: AwsClientsOptions = {}): AwsClients => {
  const env = options.env ?? process.env;
  const ignoreEnvEndpoints = env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS === 'true';
  const fromEnv = (specific: string | undefined): string | undefined =>
    ignoreEnvEndpoints ? undefined : (nonEmpty(specific) ?? nonEmpty(env.AWS_ENDPOINT_URL));
  const s3Endpoint = options.endpoints?.s3 ?? fromEnv(env.AWS_ENDPOINT_URL_S3);
  const dynamodbEndpoint = options.endpoints?.dynamodb ?? fromEnv(env.AWS_ENDPOINT_URL_DYNAMODB);

  const local = [s3Endpoint, dynamodbEndpoint].some((e) => e !== undefined && isLoopback(e));
  const hasCredentials =
    env.AWS_ACCESS_KEY_ID !== undefined ||
    env.AWS_PROFILE !== undefined ||
    env.AWS_WEB_IDENTITY_TOKEN_FILE !== undefined;
  const credentials = options.credentials ?? (local && !hasCredentials ? LOCAL_CREDENTIALS : undefined);
  const region = options.region ?? (local && env.AWS_REGION === undefined ? 'us-east-1' : undefined);

  const handler = (requestTimeout: number) => {
    const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? 256 };
    return {
      connectionTimeout: options.connectionTimeoutMs ?? 3_000,
      requestTimeout,
      httpAgent: new HttpAgent(agentOptions),
      httpsAgent: new HttpsAgent(agentOptions),
    };
  };
  const common = {
    ...(region === undefined ? {} : { region }),
    ...(credentials === undefined ? {} : { credentials }),
  };
  return {
    s3: new S3Client({
      ...common,
      ...(s3Endpoint === undefined ? {} : { endpoint: s3Endpoint, forcePathStyle: true }),
      requestHandler: handler(options.s3RequestTimeoutMs ?? 30_000),
    }),
    dynamodb: new DynamoDBClient({
      ...common,
      ...(dynamodbEndpoint === undefined ? {} : { endpoint: dynamodbEndpoint }),
      requestHandler: handler(options.dynamodbRequestTimeoutMs ?? 10_000),
    }),
  };
};

const nonEmpty = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === '' ? undefined : value.trim();

export const isLoopback = (endpoint: string): boolean => {
  try {
    const host = new URL(endpoint).hostname;
    return (
      host === 'localhost' ||
      host === '[::1]' ||
      host.startsWith('127.') ||
      host.endsWith('.localhost') ||
      host.endsWith('localhost.localstack.cloud')
    );
  } catch {
    return false;
  }
};
