/**
 * The one list of Sluice's routes: lib/http/routes' own, Streams' and Connect's, composed here
 * because lib/ never imports connect/ or streams/ (they import lib/http to declare theirs). The route
 * table API Gateway and the local gateway serve (functions/route-table.ts), the OpenAPI document
 * (lib/wire/openapi.ts) and the ACL table are all derived from it, so they have the same routes in
 * the same order.
 */
import { CONNECT_ROUTES } from '../connect/rest.js';
import type { ConnectRoutesOptions } from '../connect/rest.js';
import { STREAMS_QUERY_ROUTES } from '../streams/query/rest.js';
import type { StreamsQueryRoutesOptions } from '../streams/query/rest.js';
import { STREAMS_APPLICATION_ROUTES } from '../streams/query/application-routes.js';
import type { StreamsApplicationRoutesOptions } from '../streams/query/application-routes.js';
import type { RouteDefinition } from '../lib/http/define-route.js';
import { ADMIN_ROUTES } from '../lib/http/routes/admin.js';
import type { AdminRoutesOptions } from '../lib/http/routes/admin.js';
import { GROUP_ROUTES } from '../lib/http/routes/groups.js';
import type { GroupRoutesOptions } from '../lib/http/routes/groups.js';
import { FETCH_ROUTES } from '../lib/http/routes/fetch.js';
import type { FetchRoutesOptions } from '../lib/http/routes/fetch.js';
import { PRODUCE_ROUTES } from '../lib/http/routes/produce.js';
import type { ProduceRoutesOptions } from '../lib/http/routes/produce.js';
import { REPLICATION_ROUTES } from '../lib/http/routes/replication.js';
import { SEGMENT_ROUTES } from '../lib/http/routes/segments.js';
import type { SegmentRoutesOptions } from '../lib/http/routes/segments.js';
import type { ReplicationRoutesOptions } from '../lib/http/routes/replication.js';
import { TRANSACTION_ROUTES } from '../lib/http/routes/transactions.js';
import { QUOTA_ROUTES } from '../lib/http/routes/quotas.js';
import type { QuotaRoutesOptions } from '../lib/http/routes/quotas.js';
import type { TransactionRoutesOptions } from '../lib/http/routes/transactions.js';

/** Everything the handlers of all routes are built from (functions/app.ts composes it). */
export type RouteDeps = AdminRoutesOptions &
  ProduceRoutesOptions &
  FetchRoutesOptions &
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
  ...PRODUCE_ROUTES,
  ...FETCH_ROUTES,
  ...TRANSACTION_ROUTES,
  ...STREAMS_QUERY_ROUTES,
  ...STREAMS_APPLICATION_ROUTES,
  ...GROUP_ROUTES,
  ...CONNECT_ROUTES,
  ...QUOTA_ROUTES,
];
