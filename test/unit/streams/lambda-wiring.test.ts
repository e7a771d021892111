import { describe, expect, it } from 'vitest';
import { streamsWiringFromEnv } from '../../../functions/streams-app.js';

const env = (config: string | undefined, extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...(config === undefined ? {} : { SLUICE_STREAMS_CONFIG: config }),
  SLUICE_TABLE_NAME: 'sluice-test',
  AWS_REGION: 'us-east-1',
  ...extra,
});

const refusal = (e: NodeJS.ProcessEnv): { code: string; message: string } => {
  try {
    streamsWiringFromEnv(e);
  } catch (error) {
    return error as { code: string; message: string };
  }
  throw new Error('accepted');
};

describe('streamsWiringFromEnv', () => {
  it('parses Kafka Streams configs from SLUICE_STREAMS_CONFIG with the runtime parser', () => {
    const wiring = streamsWiringFromEnv(
      env(
        JSON.stringify({
          'application.id': 'wc',
          'bootstrap.servers': 'https://abc.execute-api.us-east-1.amazonaws.com',
          'processing.guarantee': 'exactly_once_v2',
        }),
      ),
    );
    expect(wiring.config).toEqual({
      applicationId: 'wc',
      bootstrapServers: 'https://abc.execute-api.us-east-1.amazonaws.com',
      processingGuarantee: 'exactly_once_v2',
      commitIntervalMs: 100,
      autoCreateTopics: false,
    });
    expect(wiring.state.applicationId).toBe('wc');
  });

  it.each([
    [undefined, 'SLUICE_STREAMS_CONFIG is required'],
    ['{"application.id": ', 'SLUICE_STREAMS_CONFIG is not JSON'],
    ['["wc"]', 'SLUICE_STREAMS_CONFIG must be an object of string configs'],
    [
      '{"application.id": "wc", "commit.interval.ms": 100}',
      'SLUICE_STREAMS_CONFIG must be an object of string configs',
    ],
    ['{"application.id": "wc", "max.poll.records": "5"}', 'unknown config max.poll.records'],
    ['{}', 'application.id is required'],
  ])('refuses %s with INVALID_CONFIG', (config, message) => {
    const error = refusal(env(config));
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message.startsWith(message)).toBe(true);
  });

  it('refuses a missing table name', () => {
    const error = refusal({ SLUICE_STREAMS_CONFIG: '{"application.id":"wc"}' });
    expect(error).toMatchObject({ code: 'INVALID_CONFIG', message: 'SLUICE_TABLE_NAME is required' });
  });
});
