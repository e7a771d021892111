/**
 * The one list of Sluice's routes. The route table API Gateway and the local gateway serve
 * (lib/http/route-table.ts), the OpenAPI document (lib/wire/openapi.ts) and the ACL table are all
 * derived from it, so they have the same routes in the same order.
 */
import { CONNECT_ROUTES } from '../../../connect/rest.js';
import type { ConnectRoutesOptions } from '../../../connect/rest.js';
import { STREAMS_QUERY_ROUTES } from '../../../streams/query/rest.js';
import type { StreamsQueryRoutesOptions } from '../../../streams/query/rest.js';
import { STREAMS_APPLICATION_ROUTES } from '../../../streams/query/application-routes.js';
import type { StreamsApplicationRoutesOptions } from '../../../streams/query/application-routes.js';
import type { RouteDefinition } from '../define-route.js';
import { ADMIN_ROUTES } from './admin.js';
import type { AdminRoutesOptions } from './admin.js';
import { GROUP_ROUTES } from './groups.js';
import type { GroupRoutesOptions } from './groups.js';
import { LOG_ROUTES } from './log.js';
import type { LogRoutesOptions } from './log.js';
import { REPLICATION_ROUTES } from './replication.js';
import { SEGMENT_ROUTES } from './segments.js';
import type { SegmentRoutesOptions } from './segments.js';
import type { ReplicationRoutesOptions } from './replication.js';
import { TRANSACTION_ROUTES } from './transactions.js';
import { QUOTA_ROUTES } from './quotas.js';
import type { QuotaRoutesOptions } from './quotas.js';
import type { TransactionRoutesOptions } from './transactions.js';

/** Everything the handlers of all routes are built from (lib/app.ts composes it). */
export type RouteDeps = AdminRoutesOptions &
  LogRoutesOptions &
  ReplicationRoutesOptions &
  SegmentRoutesOptions &
  GroupRoutesOptions &
  ConnectRoutesOptions &
  StreamsQueryRoutesOptions &
  StreamsApplicationRoutesOptions &
  TransactionRoutesOptions &
  QuotaRoutesOptions;

export const ROUTES: readonly RouteDefinition<RouteDeps>[] = [
  ...ADMIN_ROUTES,
  ...REPLICATION_ROUTES,
  ...SEGMENT_ROUTES,
  ...LOG_ROUTES,
  ...TRANSACTION_ROUTES,
  ...STREAMS_QUERY_ROUTES,
  ...STREAMS_APPLICATION_ROUTES,
  ...GROUP_ROUTES,
  ...CONNECT_ROUTES,
  ...QUOTA_ROUTES,
];
