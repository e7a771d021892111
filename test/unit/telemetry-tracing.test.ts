/**
 * functions/telemetry.ts loads Powertools' Tracer only where Lambda runs the function with active
 * tracing: there the S3 and DynamoDB clients it is given get X-Ray's instrumentation (every call a
 * subsegment); elsewhere (the local stack, tests, a function without tracing) the X-Ray SDK is never
 * loaded and the clients stay as they were.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { afterEach, describe, expect, it, vi } from 'vitest';

const TRACING_ENV = {
  AWS_XRAY_DAEMON_ADDRESS: '127.0.0.1:2000',
  AWS_LAMBDA_FUNCTION_NAME: 'sluice-produce',
  AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
  _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
};

const middlewareNames = (client: S3Client): string[] => client.middlewareStack.identify();

afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
});

describe('tracing', () => {
  it('captures the clients with X-Ray only when the function runs with active tracing', async () => {
    for (const [name, value] of Object.entries(TRACING_ENV)) vi.stubEnv(name, value);
    const { PowertoolsTelemetry } = await import('../../functions/telemetry.js');
    const client = new S3Client({ region: 'us-east-1' });
    const before = middlewareNames(client).length;
    const traced = new PowertoolsTelemetry({ sink: { log: () => {}, emf: () => {} } }).traced(client);
    expect(traced).toBe(client);
    expect(middlewareNames(client).length).toBeGreaterThan(before);
    expect(middlewareNames(client).join(' ')).toMatch(/XRay/i);
  });

  it('leaves the clients alone without it, and with POWERTOOLS_TRACE_ENABLED=false', async () => {
    for (const env of [{}, { ...TRACING_ENV, POWERTOOLS_TRACE_ENABLED: 'false' }]) {
      vi.unstubAllEnvs();
      vi.resetModules();
      vi.stubEnv('AWS_XRAY_DAEMON_ADDRESS', undefined);
      for (const [name, value] of Object.entries(env as Record<string, string>)) vi.stubEnv(name, value);
      const { PowertoolsTelemetry } = await import('../../functions/telemetry.js');
      const client = new S3Client({ region: 'us-east-1' });
      const before = middlewareNames(client);
      new PowertoolsTelemetry({ sink: { log: () => {}, emf: () => {} } }).traced(client);
      expect(middlewareNames(client)).toEqual(before);
    }
  });
});
