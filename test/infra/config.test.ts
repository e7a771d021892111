import { describe, expect, it } from 'vitest';
import { readContextSettings } from '../../infra/config.js';

const node = (context: Record<string, unknown>) => ({ tryGetContext: (key: string) => context[key] });

describe('readContextSettings', () => {
  it('reads nothing when no sluice:* context is set', () => {
    expect(readContextSettings(node({}))).toEqual({
      deletionProtection: undefined,
      storeCount: undefined,
      clusterId: undefined,
      maxRequestBytes: undefined,
      stackName: undefined,
    });
  });

  it('accepts cdk.json values and the strings that `-c key=value` passes', () => {
    expect(
      readContextSettings(
        node({
          'sluice:deletionProtection': 'false',
          'sluice:storeCount': '3',
          'sluice:clusterId': 'prod-eu',
          'sluice:maxRequestBytes': 1048576,
          'sluice:stackName': 'SluiceProd',
        }),
      ),
    ).toEqual({
      deletionProtection: false,
      storeCount: 3,
      clusterId: 'prod-eu',
      maxRequestBytes: 1048576,
      stackName: 'SluiceProd',
    });
    expect(readContextSettings(node({ 'sluice:deletionProtection': true })).deletionProtection).toBe(true);
  });

  it.each([
    ['sluice:deletionProtection', 'no'],
    ['sluice:storeCount', '0'],
    ['sluice:storeCount', '1.5'],
    ['sluice:storeCount', ''],
    ['sluice:maxRequestBytes', 'lots'],
    ['sluice:clusterId', ''],
  ])('rejects %s = %j', (key, value) => {
    expect(() => readContextSettings(node({ [key]: value }))).toThrow(key);
  });
});
