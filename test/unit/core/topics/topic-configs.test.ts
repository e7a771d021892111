/**
 * Topic configs at their bounds: the smallest value each key takes parses to exactly that number, the
 * next one below is refused with INVALID_CONFIG and the exact message, and the enumerations take
 * exactly their values (Kafka's names and ranges).
 */
import { describe, expect, it } from 'vitest';
import {
  configStrings,
  DEFAULT_TOPIC_CONFIG,
  effectiveConfig,
  isConfigName,
  parseConfigOverrides,
} from '../../../../lib/core/topics/configs.js';
import { SluiceError } from '../../../../protocol/errors.js';

const refusal = (input: unknown): string => {
  try {
    parseConfigOverrides(input);
  } catch (error) {
    expect(error).toBeInstanceOf(SluiceError);
    expect((error as SluiceError).code).toBe('INVALID_CONFIG');
    return (error as SluiceError).message;
  }
  throw new Error('expected INVALID_CONFIG');
};

describe('integer configs', () => {
  it.each([
    ['retention.ms', -1, 'an integer ≥ -1 (ms; -1 = forever)'],
    ['retention.bytes', -1, 'an integer ≥ -1 (bytes; -1 = unlimited)'],
    ['segment.bytes', 14, 'an integer ≥ 14'],
    ['segment.ms', 1, 'an integer ≥ 1'],
    ['min.insync.replicas', 1, 'an integer ≥ 1'],
    ['max.message.bytes', 0, 'an integer ≥ 0'],
    ['delete.retention.ms', 0, 'an integer ≥ 0'],
    ['local.retention.ms', -2, 'an integer ≥ -2 (ms; -2 = retention.ms)'],
    ['local.retention.bytes', -2, 'an integer ≥ -2 (bytes; -2 = retention.bytes)'],
  ])('%s takes %i and above, and refuses less', (name, min, expected) => {
    expect(parseConfigOverrides({ [name]: String(min) })).toEqual({ [name]: min });
    expect(parseConfigOverrides({ [name]: min + 1 })).toEqual({ [name]: min + 1 });
    expect(parseConfigOverrides({ [name]: String(2 ** 53 - 1) })).toEqual({ [name]: 2 ** 53 - 1 });
    for (const bad of [String(min - 1), `${min}.5`, '1e3', ' 1', '', String(2 ** 53), 'x'])
      expect(refusal({ [name]: bad })).toBe(`config ${name}=${bad} is invalid; expected ${expected}`);
  });
});

describe('enumerated configs', () => {
  it('cleanup.policy takes delete, compact and either order of both', () => {
    expect(parseConfigOverrides({ 'cleanup.policy': 'delete' })).toEqual({ 'cleanup.policy': 'delete' });
    expect(parseConfigOverrides({ 'cleanup.policy': 'compact' })).toEqual({ 'cleanup.policy': 'compact' });
    for (const both of ['compact,delete', 'delete,compact'])
      expect(parseConfigOverrides({ 'cleanup.policy': both })).toEqual({
        'cleanup.policy': 'compact,delete',
      });
    for (const bad of ['', 'Delete', 'compact, delete', 'delete,delete'])
      expect(refusal({ 'cleanup.policy': bad })).toBe(
        `config cleanup.policy=${bad} is invalid; expected delete, compact or compact,delete`,
      );
  });

  it('message.timestamp.type takes CreateTime and LogAppendTime', () => {
    for (const t of ['CreateTime', 'LogAppendTime'])
      expect(parseConfigOverrides({ 'message.timestamp.type': t })).toEqual({ 'message.timestamp.type': t });
    expect(refusal({ 'message.timestamp.type': 'createtime' })).toBe(
      'config message.timestamp.type=createtime is invalid; expected CreateTime or LogAppendTime',
    );
  });

  it('unclean.leader.election.enable takes true and false, as strings or booleans', () => {
    expect(parseConfigOverrides({ 'unclean.leader.election.enable': 'true' })).toEqual({
      'unclean.leader.election.enable': true,
    });
    expect(parseConfigOverrides({ 'unclean.leader.election.enable': false })).toEqual({
      'unclean.leader.election.enable': false,
    });
    for (const bad of ['TRUE', '1', 'yes'])
      expect(refusal({ 'unclean.leader.election.enable': bad })).toBe(
        `config unclean.leader.election.enable=${bad} is invalid; expected true or false`,
      );
  });

  it('min.cleanable.dirty.ratio takes a number from 0 to 1', () => {
    const ratio = (raw: string | number) => parseConfigOverrides({ 'min.cleanable.dirty.ratio': raw });
    for (const [raw, value] of [
      ['0', 0],
      ['1', 1],
      ['0.5', 0.5],
      ['.25', 0.25],
      ['1.0', 1],
      ['1.000', 1],
      [0.75, 0.75],
    ] as const)
      expect(ratio(raw)).toEqual({ 'min.cleanable.dirty.ratio': value });
    for (const bad of ['1.5', '-0.1', '2', '0.', 'a', '1.01', ' 0.5'])
      expect(refusal({ 'min.cleanable.dirty.ratio': bad })).toBe(
        `config min.cleanable.dirty.ratio=${bad} is invalid; expected a number between 0 and 1`,
      );
  });
});

describe('the configs object', () => {
  it('is optional, and must be an object of known names to strings, numbers or booleans', () => {
    expect(parseConfigOverrides(undefined)).toEqual({});
    expect(parseConfigOverrides({})).toEqual({});
    for (const bad of [null, 'retention.ms=1', [], 7])
      expect(refusal(bad)).toBe('configs must be an object of Kafka config names to string values');
    expect(refusal({ 'retention.ms': '1', 'log.retention.ms': '1' })).toBe(
      `unknown topic config log.retention.ms; supported: ${Object.keys(DEFAULT_TOPIC_CONFIG).join(', ')}`,
    );
    expect(refusal({ toString: '1' })).toMatch(/^unknown topic config toString; supported: retention\.ms, /);
    expect(refusal({ 'retention.ms': null })).toBe('config retention.ms must be a string, got null');
    expect(refusal({ 'retention.ms': { v: 1 } })).toBe('config retention.ms must be a string, got object');
    expect(refusal({ 'retention.ms': [1] })).toBe('config retention.ms must be a string, got object');
  });

  it('parses several keys at once, and the effective config is the defaults under them', () => {
    const overrides = parseConfigOverrides({ 'retention.ms': '1000', 'segment.bytes': 16384 });
    expect(overrides).toEqual({ 'retention.ms': 1000, 'segment.bytes': 16384 });
    expect(effectiveConfig(overrides)).toEqual({
      ...DEFAULT_TOPIC_CONFIG,
      'retention.ms': 1000,
      'segment.bytes': 16384,
    });
    expect(configStrings(overrides)).toEqual({ 'retention.ms': '1000', 'segment.bytes': '16384' });
    expect(configStrings({ 'unclean.leader.election.enable': false })).toEqual({
      'unclean.leader.election.enable': 'false',
    });
  });

  it('knows exactly the Kafka names it supports', () => {
    expect(Object.keys(DEFAULT_TOPIC_CONFIG).filter(isConfigName)).toEqual(Object.keys(DEFAULT_TOPIC_CONFIG));
    for (const name of ['log.retention.ms', 'toString', 'constructor', 'hasOwnProperty', ''])
      expect(isConfigName(name)).toBe(false);
  });
});
