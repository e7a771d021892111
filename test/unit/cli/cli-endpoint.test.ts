import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../../cli/command.js';
import { localStackUrl, signingFor } from '../../../cli/endpoint.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-endpoint-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('localStackUrl', () => {
  it("reads the running stack's url from $SLUICE_DATA_DIR/stack.json (relative to the working directory)", async () => {
    await writeFile(join(dir, 'stack.json'), JSON.stringify({ url: 'http://127.0.0.1:9911', stores: [] }));
    expect(await localStackUrl({ SLUICE_DATA_DIR: dir })).toBe('http://127.0.0.1:9911');
    expect(await localStackUrl({ SLUICE_DATA_DIR: '.' }, dir)).toBe('http://127.0.0.1:9911');
  });

  it('is undefined without a state file, or with one that is not JSON or has no url', async () => {
    expect(await localStackUrl({ SLUICE_DATA_DIR: dir })).toBeUndefined();
    await writeFile(join(dir, 'stack.json'), '{not json');
    expect(await localStackUrl({ SLUICE_DATA_DIR: dir })).toBeUndefined();
    await writeFile(join(dir, 'stack.json'), JSON.stringify({ stores: [] }));
    expect(await localStackUrl({ SLUICE_DATA_DIR: dir })).toBeUndefined();
  });
});

describe('signingFor', () => {
  it('signs an execute-api URL for the region in its host, and nothing local unless asked', () => {
    expect(signingFor('https://abc.execute-api.eu-west-1.amazonaws.com', {}, {})).toEqual({
      region: 'eu-west-1',
    });
    expect(
      signingFor('http://127.0.0.1:8787', {}, { AWS_PROFILE: 'dev', AWS_REGION: 'us-east-1' }),
    ).toBeUndefined();
    expect(signingFor('https://kafka.example.com', { profile: 'ops' }, { AWS_REGION: 'us-east-2' })).toEqual({
      region: 'us-east-2',
      profile: 'ops',
    });
    expect(signingFor('https://kafka.example.com', { region: 'ap-south-1' }, { AWS_PROFILE: 'dev' })).toEqual(
      {
        region: 'ap-south-1',
        profile: 'dev',
      },
    );
  });

  it('refuses to sign without a region, as a usage error naming the fix', () => {
    expect(() => signingFor('https://kafka.example.com', { profile: 'ops' }, {})).toThrow(UsageError);
    expect(() => signingFor('https://kafka.example.com', { profile: 'ops' }, {})).toThrow(
      /pass --region or set AWS_REGION/,
    );
  });
});
