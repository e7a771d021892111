/**
 * DescribeClientQuotas and AlterClientQuotas (KIP-546; kafka-configs.sh --entity-type users|clients
 * over the Kafka protocol) onto Sluice's quota routes. Entity types are Kafka's `user` and
 * `client-id`; a null name is the default.
 */
import type { Message } from '../../protocol/kafka/codec.js';
import { ERROR } from '../../protocol/kafka/error-codes.js';
import { AlterClientQuotas, DescribeClientQuotas } from '../../protocol/kafka/messages/client-quotas.js';
import type { AlterClientQuotasRequest, ClientQuotaEntity, ClientQuotaType } from '../../lib/wire/types.js';
import type { ApiHandler } from '../api.js';
import { errorCodeOf, errorMessageOf } from '../api.js';

interface EntityComponent {
  entityType: string;
  entityName: string | null;
}

const MATCH_EXACT = 0;
const MATCH_DEFAULT = 1;
const MATCH_ANY = 2;

const toEntity = (components: EntityComponent[]): ClientQuotaEntity => {
  const entity: ClientQuotaEntity = {};
  for (const { entityType, entityName } of components) {
    if (entityType !== 'user' && entityType !== 'client-id')
      throw new QuotaRequestError(`unknown entity type ${entityType}`);
    if (entityType in entity) throw new QuotaRequestError(`entity type ${entityType} appears twice`);
    entity[entityType] = entityName;
  }
  return entity;
};

const fromEntity = (entity: ClientQuotaEntity): EntityComponent[] =>
  (['user', 'client-id'] as const)
    .filter((type) => type in entity)
    .map((type) => ({ entityType: type, entityName: entity[type] ?? null }));

/** A request this gateway refuses as Kafka does: INVALID_REQUEST with the reason. */
class QuotaRequestError extends Error {
  readonly code = 'INVALID_REQUEST';
}

interface DescribeRequest {
  components: { entityType: string; matchType: number; match: string | null }[];
  strict: boolean;
}

export const describeClientQuotas: ApiHandler = {
  schema: DescribeClientQuotas,
  minVersion: 0,
  maxVersion: 1,
  errorResponse: (_request, errorCode) => ({ errorCode, errorMessage: null, entries: null }),
  async handle(request, ctx) {
    const { components, strict } = request as unknown as DescribeRequest;
    try {
      const query: Record<string, string | undefined> = { strict: strict ? 'true' : undefined };
      const seen = new Set<string>();
      for (const { entityType, matchType, match } of components) {
        const param = entityType === 'user' ? 'user' : entityType === 'client-id' ? 'clientId' : undefined;
        if (!param || seen.has(entityType))
          throw new QuotaRequestError(`entity type ${entityType} is unknown or filtered twice`);
        seen.add(entityType);
        if (matchType === MATCH_EXACT) {
          if (match === null || match === '') throw new QuotaRequestError('an exact match names an entity');
          query[param] = match;
        } else if (matchType === MATCH_DEFAULT) query[`${param}Default`] = 'true';
        else if (matchType !== MATCH_ANY) throw new QuotaRequestError(`match type ${matchType} is unknown`);
      }
      // Kafka's "any" match wants the type present with any name; the HTTP filter has no such
      // match, so it (and strict beside it) is applied here.
      const anyTypes = components.filter((c) => c.matchType === MATCH_ANY).map((c) => c.entityType);
      if (anyTypes.length > 0) query['strict'] = undefined;
      const entries = (await ctx.gateway.sluice.describeClientQuotas(query)).filter(
        ({ entity }) =>
          anyTypes.every((type) => type in entity) &&
          (!strict || Object.keys(entity).every((type) => components.some((c) => c.entityType === type))),
      );
      return {
        throttleTimeMs: 0,
        errorCode: ERROR.NONE,
        errorMessage: null,
        entries: entries.map(({ entity, values }) => ({
          entity: fromEntity(entity),
          values: Object.entries(values).map(([key, value]) => ({ key, value })),
        })),
      } satisfies Message;
    } catch (error) {
      return {
        throttleTimeMs: 0,
        errorCode: error instanceof QuotaRequestError ? ERROR.INVALID_REQUEST : errorCodeOf(error),
        errorMessage: error instanceof QuotaRequestError ? error.message : errorMessageOf(error),
        entries: null,
      };
    }
  },
};

interface AlterRequest {
  entries: { entity: EntityComponent[]; ops: { key: string; value: number; remove: boolean }[] }[];
  validateOnly: boolean;
}

export const alterClientQuotas: ApiHandler = {
  schema: AlterClientQuotas,
  minVersion: 0,
  maxVersion: 1,
  errorResponse: (request, errorCode) => ({
    entries: (request as unknown as AlterRequest).entries.map((e) => ({
      errorCode,
      errorMessage: null,
      entity: e.entity,
    })),
  }),
  async handle(request, ctx) {
    const { entries, validateOnly } = request as unknown as AlterRequest;
    let errorCode: number = ERROR.NONE;
    let errorMessage: string | null = null;
    try {
      const body: AlterClientQuotasRequest = {
        entries: entries.map(({ entity, ops }) => ({
          entity: toEntity(entity),
          ops: ops.map(({ key, value, remove }) => ({
            key: key as ClientQuotaType,
            value: remove ? null : value,
          })),
        })),
        ...(validateOnly ? { validateOnly: true } : {}),
      };
      // Sluice checks every entry before writing any: one bad entry fails them all, changing nothing.
      await ctx.gateway.sluice.alterClientQuotas(body);
    } catch (error) {
      errorCode = error instanceof QuotaRequestError ? ERROR.INVALID_REQUEST : errorCodeOf(error);
      errorMessage = error instanceof QuotaRequestError ? error.message : errorMessageOf(error);
    }
    return {
      throttleTimeMs: 0,
      entries: entries.map(({ entity }) => ({ errorCode, errorMessage, entity })),
    };
  },
};
