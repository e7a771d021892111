/**
 * Kafka Connect's ConfigDef, cut down: each setting has a type, an optional default and validator, and
 * validation answers in the shape of `PUT /connector-plugins/{plugin}/config/validate` (ConfigInfos:
 * `error_count`, `groups`, `configs[].definition` and `configs[].value.errors`).
 */

import type {
  ConfigInfo,
  ConfigInfos,
  ConfigType,
  ConfigValueInfo,
  Importance,
} from '../lib/wire/connect.js';
export type { ConfigInfo, ConfigInfos, ConfigType, ConfigValueInfo, Importance };

export interface ConfigKey {
  name: string;
  type: ConfigType;
  /** Absent: the setting is required. */
  default?: string;
  importance: Importance;
  documentation: string;
  group: string;
  /** Returns an error message, or undefined when the (non-empty) value is acceptable. */
  validate?: (value: string) => string | undefined;
  /** Values a UI may offer. */
  recommended?: readonly string[];
}

const INT_RANGE = [-(2n ** 31n), 2n ** 31n - 1n] as const;
const LONG_RANGE = [BigInt(Number.MIN_SAFE_INTEGER), BigInt(Number.MAX_SAFE_INTEGER)] as const;

const checkType = (type: ConfigType, value: string): string | undefined => {
  switch (type) {
    case 'INT':
    case 'LONG': {
      // ConfigDef's INT is a Java int and LONG a long: a value outside their range is refused, never
      // rounded (Number() would take 2^31 and 1e300 alike). A LONG also stays a safe JS integer.
      const [min, max] = type === 'INT' ? INT_RANGE : LONG_RANGE;
      return /^[-+]?\d{1,20}$/.test(value) && BigInt(value) >= min && BigInt(value) <= max
        ? undefined
        : `Invalid value ${value} for configuration: Not a number of type ${type}`;
    }
    case 'BOOLEAN':
      return value === 'true' || value === 'false'
        ? undefined
        : `Invalid value ${value} for configuration: Expected value to be either true or false`;
    default:
      return undefined;
  }
};

/** Validates `config` against `keys` (in order), reporting every error, as Connect's validate does. */
export const validateConfig = (
  pluginClass: string,
  keys: readonly ConfigKey[],
  config: Record<string, string>,
): ConfigInfos => {
  const configs = keys.map((key, order): ConfigInfo => {
    const raw = config[key.name];
    const value = raw ?? key.default ?? null;
    const errors: string[] = [];
    if (value === null || (value === '' && key.default === undefined)) {
      errors.push(`Missing required configuration "${key.name}" which has no default value.`);
    } else {
      const typeError = checkType(key.type, value);
      if (typeError) errors.push(typeError);
      else if (key.validate && value !== '') {
        const message = key.validate(value);
        if (message) errors.push(`Invalid value ${value} for configuration ${key.name}: ${message}`);
      }
    }
    return {
      definition: {
        name: key.name,
        type: key.type,
        required: key.default === undefined,
        default_value: key.default ?? null,
        importance: key.importance,
        documentation: key.documentation,
        group: key.group,
        width: 'NONE',
        display_name: key.name,
        dependents: [],
        order: order + 1,
      },
      value: {
        name: key.name,
        value: key.type === 'PASSWORD' && value !== null ? '[hidden]' : value,
        recommended_values: [...(key.recommended ?? [])],
        errors,
        visible: true,
      },
    };
  });
  return {
    name: pluginClass,
    error_count: configs.reduce((n, c) => n + c.value.errors.length, 0),
    groups: [...new Set(keys.map((k) => k.group))],
    configs,
  };
};

/** Extra errors found by a check across settings, added to the named setting's value. */
export const addError = (infos: ConfigInfos, name: string, message: string): void => {
  const entry = infos.configs.find((c) => c.value.name === name);
  if (!entry) return;
  entry.value.errors.push(message);
  infos.error_count += 1;
};

/** The effective value of a setting: the given one, else its default. */
export const valueOf = (keys: readonly ConfigKey[], config: Record<string, string>, name: string): string => {
  const given = config[name];
  if (given !== undefined) return given;
  const key = keys.find((k) => k.name === name);
  if (key?.default === undefined) throw new Error(`configuration ${name} has no value`);
  return key.default;
};

export const positiveInt = (value: string): string | undefined =>
  Number(value) >= 1 ? undefined : 'Value must be at least 1';

/** ConfigDef's `Range.between(min, max)`. */
export const between =
  (min: number, max: number) =>
  (value: string): string | undefined =>
    Number(value) >= min && Number(value) <= max ? undefined : `Value must be between ${min} and ${max}`;

export const nonNegativeInt = (value: string): string | undefined =>
  Number(value) >= 0 ? undefined : 'Value must be at least 0';

export const oneOf =
  (allowed: readonly string[]) =>
  (value: string): string | undefined =>
    allowed.includes(value) ? undefined : `String must be one of: ${allowed.join(', ')}`;

/** Comma-separated list, trimmed, empties dropped (Connect's LIST type). */
export const listOf = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
