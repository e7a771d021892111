/**
 * Client quotas as kafka-configs.sh sets them (`--entity-type users|clients`): DescribeClientQuotas and
 * AlterClientQuotas (docs/quotas.md). ACLs as Kafka's: DESCRIBE_CONFIGS / ALTER_CONFIGS on the cluster.
 */
import { SluiceError } from '../../../protocol/errors.js';
import type {
  ClientQuotaManager,
  EntityMatch,
  QuotaAlteration,
  QuotaFilter,
  QuotaType,
} from '../../core/quotas/index.js';
import type { ClientQuotaEntry } from '../../wire/types.js';
import { defineRoute } from '../define-route.js';
import { json } from '../types.js';
import { queryParam } from './errors.js';
import '../validators/quotas.js';

export interface QuotaRoutesOptions {
  quotas: ClientQuotaManager;
}

const flag = (value: string | undefined, name: string): boolean => {
  if (value === undefined || value === 'false') return false;
  if (value === 'true' || value === '') return true;
  throw new SluiceError('INVALID_REQUEST', `${name} must be true or false`);
};

/** One entity type's filter from `?user=alice` (exact) or `?userDefault=true` (the default); neither: any. */
const match = (query: Record<string, string>, name: string, defaultFlag: string): EntityMatch | undefined => {
  const value = query[name];
  const isDefault = flag(query[defaultFlag], defaultFlag);
  if (value !== undefined && isDefault)
    throw new SluiceError('INVALID_REQUEST', `give ${name} or ${defaultFlag}, not both`);
  if (value !== undefined) {
    if (value === '') throw new SluiceError('INVALID_REQUEST', `${name} must not be empty`);
    return { name: value };
  }
  return isDefault ? { default: true } : undefined;
};

export const QUOTA_ROUTES = [
  defineRoute<QuotaRoutesOptions>({
    method: 'GET',
    path: '/v1/client-quotas',
    job: 'admin',
    acl: { operation: 'DESCRIBE_CONFIGS', resourceType: 'CLUSTER' },
    id: 'describeClientQuotas',
    summary: 'DescribeClientQuotas: the quota entities matching a filter (kafka-configs.sh --describe).',
    query: [
      queryParam('user', 'string', 'only this user (an IAM principal ARN, or ANONYMOUS)'),
      queryParam('userDefault', 'string', "true: only the default user's entities"),
      queryParam('clientId', 'string', 'only this client id'),
      queryParam('clientIdDefault', 'string', "true: only the default client id's entities"),
      queryParam('strict', 'string', 'true: only entities with exactly the filtered types'),
    ],
    ok: { 200: 'ClientQuotas' },
    errors: ['CLUSTER_AUTHORIZATION_FAILED'],
    handler:
      ({ quotas }) =>
      async ({ query }) => {
        const user = match(query, 'user', 'userDefault');
        const clientId = match(query, 'clientId', 'clientIdDefault');
        const filter: QuotaFilter = {
          ...(user ? { user } : {}),
          ...(clientId ? { 'client-id': clientId } : {}),
          strict: flag(query['strict'], 'strict'),
        };
        const entries = await quotas.configs.describe(filter);
        return json(200, { entries: entries satisfies ClientQuotaEntry[] });
      },
  }),
  defineRoute<QuotaRoutesOptions>({
    method: 'POST',
    path: '/v1/client-quotas',
    job: 'admin',
    acl: { operation: 'ALTER_CONFIGS', resourceType: 'CLUSTER' },
    id: 'alterClientQuotas',
    summary:
      'AlterClientQuotas: set (a value) or remove (null) quotas of users, client ids or both; every entry is checked before any is written (kafka-configs.sh --alter); answers the altered entities as stored (none with validateOnly).',
    body: 'AlterClientQuotas',
    ok: { 200: 'ClientQuotas' },
    errors: ['CLUSTER_AUTHORIZATION_FAILED'],
    handler:
      ({ quotas }) =>
      async (_request, body = {}) => {
        const alterations = body['entries'] as QuotaAlteration[];
        const entries = await quotas.configs.alter(
          alterations.map(({ entity, ops }) => ({
            entity,
            ops: ops.map(({ key, value }) => ({ key: key as QuotaType, value })),
          })),
          { validateOnly: body['validateOnly'] === true },
        );
        return json(200, { entries: entries satisfies ClientQuotaEntry[] });
      },
  }),
];
