/**
 * DescribeConfigs and IncrementalAlterConfigs for topics (resource type 2), onto Sluice's topic
 * description and PATCH. A config whose value is Sluice's default is reported with source
 * DEFAULT_CONFIG, any other as DYNAMIC_TOPIC_CONFIG, as kafka-configs.sh expects. Brokers (type 4)
 * have no configs a client may change here: they describe as empty and refuse alteration.
 */
import type { Message } from '../../protocol/kafka/codec.js';
import { ERROR } from '../../protocol/kafka/error-codes.js';
import { DescribeConfigs } from '../../protocol/kafka/messages/describe-configs.js';
import { IncrementalAlterConfigs } from '../../protocol/kafka/messages/incremental-alter-configs.js';
import { DEFAULT_TOPIC_CONFIG } from '../../protocol/topic-config.js';
import type { ApiHandler } from '../api.js';
import { errorCodeOf, errorMessageOf } from '../api.js';

export const TOPIC_RESOURCE = 2;
export const BROKER_RESOURCE = 4;
const DYNAMIC_TOPIC_CONFIG = 1;
const DEFAULT_CONFIG = 5;
// Kafka's ConfigType: BOOLEAN 1, STRING 2, INT 3, LONG 5, DOUBLE 6, LIST 7.
const CONFIG_TYPES: Record<string, number> = {
  'cleanup.policy': 7,
  'min.insync.replicas': 3,
  'max.message.bytes': 3,
  'min.cleanable.dirty.ratio': 6,
  'unclean.leader.election.enable': 1,
  'message.timestamp.type': 2,
};
const configType = (name: string): number => CONFIG_TYPES[name] ?? (/\.(ms|bytes)$/.test(name) ? 5 : 2);

const defaultValue = (name: string): string | undefined => {
  const value = (DEFAULT_TOPIC_CONFIG as unknown as Record<string, unknown>)[name];
  return value === undefined ? undefined : String(value);
};

export function describedConfigs(
  configs: Record<string, string>,
  keys: string[] | null,
): { name: string; value: string; configSource: number; configType: number; isDefault: boolean }[] {
  return Object.entries(configs)
    .filter(([name]) => keys === null || keys.includes(name))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, value]) => {
      const isDefault = defaultValue(name) === value;
      return {
        name,
        value,
        isDefault,
        configSource: isDefault ? DEFAULT_CONFIG : DYNAMIC_TOPIC_CONFIG,
        configType: configType(name),
      };
    });
}

interface DescribeRequest {
  resources: { resourceType: number; resourceName: string; configurationKeys: string[] | null }[];
}

export const describeConfigs: ApiHandler = {
  schema: DescribeConfigs,
  minVersion: 1,
  maxVersion: 4,
  errorResponse(request, errorCode) {
    return {
      results: (request as unknown as DescribeRequest).resources.map((r) => ({
        errorCode,
        resourceType: r.resourceType,
        resourceName: r.resourceName,
      })),
    };
  },
  async handle(request, ctx) {
    const { resources } = request as unknown as DescribeRequest;
    const results = await Promise.all(
      resources.map(async (r): Promise<Message> => {
        const base = { resourceType: r.resourceType, resourceName: r.resourceName };
        if (r.resourceType === BROKER_RESOURCE)
          return { ...base, errorCode: ERROR.NONE, errorMessage: null, configs: [] };
        if (r.resourceType !== TOPIC_RESOURCE)
          return {
            ...base,
            errorCode: ERROR.INVALID_REQUEST,
            errorMessage: `resource type ${r.resourceType} has no configs here`,
          };
        try {
          const topic = await ctx.gateway.sluice.describeTopic(r.resourceName);
          return {
            ...base,
            errorCode: ERROR.NONE,
            errorMessage: null,
            configs: describedConfigs(topic.configs, r.configurationKeys).map((c) => ({
              name: c.name,
              value: c.value,
              readOnly: false,
              isDefault: c.isDefault,
              configSource: c.configSource,
              isSensitive: false,
              synonyms: [],
              configType: c.configType,
              documentation: null,
            })),
          };
        } catch (error) {
          return { ...base, errorCode: errorCodeOf(error), errorMessage: errorMessageOf(error) };
        }
      }),
    );
    return { throttleTimeMs: 0, results };
  },
};

interface AlterRequest {
  resources: {
    resourceType: number;
    resourceName: string;
    configs: { name: string; configOperation: number; value: string | null }[];
  }[];
  validateOnly: boolean;
}

const SET = 0;
const DELETE = 1;
const APPEND = 2;
const SUBTRACT = 3;

export const incrementalAlterConfigs: ApiHandler = {
  schema: IncrementalAlterConfigs,
  minVersion: 0,
  maxVersion: 1,
  errorResponse(request, errorCode) {
    return {
      responses: (request as unknown as AlterRequest).resources.map((r) => ({
        errorCode,
        resourceType: r.resourceType,
        resourceName: r.resourceName,
      })),
    };
  },
  async handle(request, ctx) {
    const { resources, validateOnly } = request as unknown as AlterRequest;
    const responses = await Promise.all(
      resources.map(async (r): Promise<Message> => {
        const base = { resourceType: r.resourceType, resourceName: r.resourceName };
        const fail = (code: number, message: string | null): Message => ({
          ...base,
          errorCode: code,
          errorMessage: message,
        });
        if (r.resourceType !== TOPIC_RESOURCE)
          return fail(ERROR.INVALID_REQUEST, 'only topic configs can be altered here');
        try {
          const current = (await ctx.gateway.sluice.describeTopic(r.resourceName)).configs;
          const change: Record<string, string> = {};
          for (const c of r.configs) {
            const now = change[c.name] ?? current[c.name];
            if (c.configOperation === SET) {
              if (c.value === null) return fail(ERROR.INVALID_CONFIG, `${c.name}: SET needs a value`);
              change[c.name] = c.value;
            } else if (c.configOperation === DELETE) {
              const d = defaultValue(c.name);
              if (d === undefined) return fail(ERROR.INVALID_CONFIG, `unknown config ${c.name}`);
              change[c.name] = d;
            } else if (c.configOperation === APPEND || c.configOperation === SUBTRACT) {
              if (configType(c.name) !== 7) return fail(ERROR.INVALID_CONFIG, `${c.name} is not a list`);
              const items = new Set((now ?? '').split(',').filter(Boolean));
              for (const v of (c.value ?? '').split(',').filter(Boolean)) {
                if (c.configOperation === APPEND) items.add(v);
                else items.delete(v);
              }
              change[c.name] = [...items].sort().join(',');
            } else return fail(ERROR.INVALID_REQUEST, `unknown config operation ${c.configOperation}`);
          }
          if (!validateOnly && Object.keys(change).length > 0)
            await ctx.gateway.sluice.updateTopic(r.resourceName, { configs: change });
          return { ...base, errorCode: ERROR.NONE, errorMessage: null };
        } catch (error) {
          return fail(errorCodeOf(error), errorMessageOf(error));
        }
      }),
    );
    return { throttleTimeMs: 0, responses };
  },
};
