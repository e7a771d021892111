/**
 * Kafka's client quota entities and configs (KIP-55, KIP-257): a quota is set for a user (the IAM
 * principal), a client id, or both, each a name or the default; a request is governed, per quota
 * type, by the most specific entity that has that quota, in KIP-55's order.
 */
import { SluiceError } from '../../../protocol/errors.js';

/** Kafka's quota config names (QuotaConfigs). */
export const QUOTA_TYPES = [
  'producer_byte_rate',
  'consumer_byte_rate',
  'request_percentage',
  'controller_mutation_rate',
] as const;
export type QuotaType = (typeof QUOTA_TYPES)[number];

export const isQuotaType = (key: string): key is QuotaType =>
  (QUOTA_TYPES as readonly string[]).includes(key);

/**
 * A quota entity as Kafka's ClientQuotaEntity has it: `user` and/or `client-id`; a string names one,
 * `null` is the default (`<default>` in kafka-configs.sh). An absent key is not part of the entity.
 */
export interface QuotaEntity {
  user?: string | null;
  'client-id'?: string | null;
}

/** Who sent a request: the signer's principal (ANONYMOUS when unsigned) and the Kafka-Client-Id header. */
export interface QuotaPrincipal {
  user: string;
  clientId: string;
}

/** Kafka's name for an unauthenticated principal. */
export const ANONYMOUS_USER = 'ANONYMOUS';

/** The longest user or client id name accepted (Kafka's client.id has no bound; a key must have one). */
export const MAX_ENTITY_NAME_LENGTH = 512;

/** One stored quota config: the entity and its quota values (only the types set). */
export interface ClientQuotaEntry {
  entity: QuotaEntity;
  values: Partial<Record<QuotaType, number>>;
}

const DEFAULT = '<default>';

/** The entity's stable key (the stored item's sort key): `user=<name>|<default>;client-id=...`. */
export const entityKey = (entity: QuotaEntity): string => {
  const part = (type: 'user' | 'client-id'): string[] => {
    const name = entity[type];
    if (name === undefined) return [];
    return [`${type}=${name === null ? DEFAULT : encodeURIComponent(name)}`];
  };
  return [...part('user'), ...part('client-id')].join(';');
};

/** The entity a key names (the inverse of entityKey). */
export const entityFromKey = (key: string): QuotaEntity => {
  const entity: QuotaEntity = {};
  for (const part of key.split(';')) {
    const eq = part.indexOf('=');
    const type = part.slice(0, eq);
    const raw = part.slice(eq + 1);
    const name = raw === DEFAULT ? null : decodeURIComponent(raw);
    if (type === 'user') entity.user = name;
    else if (type === 'client-id') entity['client-id'] = name;
  }
  return entity;
};

/** A valid entity: at least one of user and client-id, names non-empty, bounded, and nothing else. */
export const checkEntity = (entity: Record<string, unknown>): QuotaEntity => {
  const keys = Object.keys(entity);
  const unknown = keys.filter((k) => k !== 'user' && k !== 'client-id');
  if (unknown.length > 0)
    throw new SluiceError(
      'INVALID_REQUEST',
      `unknown quota entity type ${unknown[0]}; use user or client-id`,
    );
  if (keys.length === 0)
    throw new SluiceError('INVALID_REQUEST', 'a quota entity names a user, a client-id, or both');
  const result: QuotaEntity = {};
  for (const type of ['user', 'client-id'] as const) {
    if (!(type in entity)) continue;
    const name = entity[type];
    if (
      name !== null &&
      (typeof name !== 'string' || name.length === 0 || name.length > MAX_ENTITY_NAME_LENGTH)
    )
      throw new SluiceError(
        'INVALID_REQUEST',
        `quota entity ${type} must be a name of 1 to ${MAX_ENTITY_NAME_LENGTH} characters, or null for the default`,
      );
    result[type] = name as string | null;
  }
  return result;
};

/**
 * A quota value as Kafka validates it: byte rates and controller_mutation_rate positive (Kafka
 * takes a double for the mutation rate and longs for the rest), request_percentage a positive number.
 */
export const checkQuotaValue = (type: string, value: unknown): number => {
  if (!isQuotaType(type))
    throw new SluiceError(
      'INVALID_REQUEST',
      `unknown quota config ${type}; use one of ${QUOTA_TYPES.join(', ')}`,
    );
  const integral = type === 'producer_byte_rate' || type === 'consumer_byte_rate';
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value <= 0 ||
    value > Number.MAX_SAFE_INTEGER ||
    (integral && !Number.isInteger(value))
  )
    throw new SluiceError(
      'INVALID_REQUEST',
      `${type} must be a positive ${integral ? 'integer (bytes per second)' : 'number'}, got ${JSON.stringify(value)}`,
    );
  return value;
};

/**
 * KIP-55's precedence, most specific first: the entities whose quota may govern a principal, each
 * with the entity the rate is counted for (a default stands for the principal's own name, so each
 * user under `users/<default>` has a quota of its own, as in Kafka).
 */
export const precedence = ({
  user,
  clientId,
}: QuotaPrincipal): { config: QuotaEntity; counted: QuotaEntity }[] => [
  { config: { user, 'client-id': clientId }, counted: { user, 'client-id': clientId } },
  { config: { user, 'client-id': null }, counted: { user, 'client-id': clientId } },
  { config: { user }, counted: { user } },
  { config: { user: null, 'client-id': clientId }, counted: { user, 'client-id': clientId } },
  { config: { user: null, 'client-id': null }, counted: { user, 'client-id': clientId } },
  { config: { user: null }, counted: { user } },
  { config: { 'client-id': clientId }, counted: { 'client-id': clientId } },
  { config: { 'client-id': null }, counted: { 'client-id': clientId } },
];

/** The quota that governs a principal for one quota type, or none. */
export interface ResolvedQuota {
  type: QuotaType;
  limit: number;
  /** The configured entity it came from. */
  entity: QuotaEntity;
  /** The key the rate is counted under (shared by every principal this quota covers). */
  counterKey: string;
}

export const resolveQuota = (
  configs: ReadonlyMap<string, ClientQuotaEntry>,
  principal: QuotaPrincipal,
  type: QuotaType,
): ResolvedQuota | undefined => {
  for (const { config, counted } of precedence(principal)) {
    const limit = configs.get(entityKey(config))?.values[type];
    if (limit !== undefined) return { type, limit, entity: config, counterKey: entityKey(counted) };
  }
  return undefined;
};

/** DescribeClientQuotas' filter component: a name (exact), the default, or any (Kafka's match types). */
export type EntityMatch = { name: string } | { default: true } | { any: true };

export interface QuotaFilter {
  user?: EntityMatch;
  'client-id'?: EntityMatch;
  /** Only entities with exactly the filtered types (Kafka's `strict`). */
  strict?: boolean;
}

export const matchesFilter = (entity: QuotaEntity, filter: QuotaFilter): boolean => {
  for (const type of ['user', 'client-id'] as const) {
    const match = filter[type];
    if (match === undefined) {
      if (filter.strict && type in entity) return false;
      continue;
    }
    if (!(type in entity)) return false;
    const name = entity[type];
    if ('name' in match && name !== match.name) return false;
    if ('default' in match && name !== null) return false;
  }
  return true;
};
