/**
 * The local stack's Sluice: one instance of the whole of it (functions/app.ts) per process, built from the
 * same environment as the deployed functions (functions/environment.ts), serving every function's
 * routes in-process. Here, and only here, sit the hooks of the local stack and the benchmarks: a layer
 * over the stores (fault injection, the AWS latency model), an invocation scope (traces), the
 * authorizer of SLUICE_AUTH=iam, the telemetry sink (local/telemetry-sink.ts) and request meters. No
 * deployed function imports this module.
 */
import type { Sluice } from '../functions/app.js';
import { createSluice } from '../functions/app.js';
import type { ApiGatewayV2Event, ApiGatewayV2Result } from '../lib/http/apigw.js';
import { requestFromEvent, resultFromResponse } from '../lib/http/apigw.js';
import type { Job } from '../functions/route-table.js';
import type { Authorizer } from '../lib/auth/authorizer.js';
import { StorageMeter } from '../lib/ports/meter.js';
import type { MetadataStore } from '../lib/ports/metadata-store.js';
import type { ObjectStore } from '../lib/ports/object-store.js';
import type { InvocationContext } from '../functions/environment.js';
import {
  depsFromEnv,
  instrumented,
  invocationKeys,
  setTelemetrySink as setFunctionTelemetrySink,
  storageFromEnv,
  telemetryFromEnv,
} from '../functions/environment.js';
import type { TelemetrySink } from '../functions/telemetry.js';
import type { WebSocketEvent, WebSocketResult } from '../lib/http/wait-socket.js';
import { notifyStreamBatch } from '../lib/http/wait-socket.js';
import type { ChangeFeed } from './stream-emulation.js';
import { withChangeFeed } from './stream-emulation.js';
import { LocalConnections } from './wait-gateway.js';
import { LOCAL_API } from './auth/gateway-auth.js';

/** The stores a layer wraps (the segment store is left as it is). */
export interface Storage {
  store: MetadataStore;
  objectStores: readonly ObjectStore[];
}

let instance: Sluice | undefined;
/** The local stand-in for the metadata table's stream (local/stream-emulation.ts). */
let changeFeed: ChangeFeed | undefined;
/** The local WebSocket API's connections (local/wait-gateway.ts): where the wait socket posts. */
export const localConnections = new LocalConnections();
let authorizer: Authorizer | undefined;

/**
 * The authorizer of body-named resources (lib/auth). The local stack sets its policy evaluator here
 * when SLUICE_AUTH=iam; the next request builds Sluice with it.
 */
export const setAuthorizer = (value: Authorizer | undefined): void => {
  authorizer = value;
  instance = undefined;
};

/**
 * Where log records and EMF documents go instead of stdout (undefined: stdout, as on Lambda). The next
 * request builds Sluice with it.
 */
export const setTelemetrySink = (sink: TelemetrySink | undefined): void => {
  setFunctionTelemetrySink(sink);
  instance = undefined;
};

/** A layer over the stores (fault injection for the soak test, the AWS latency model). */
export type StorageLayer = (storage: Storage) => Storage;
let storageLayer: StorageLayer | undefined;

/** Wrap the stores of the next instance built (undefined removes the layer). */
export const setStorageLayer = (layer: StorageLayer | undefined): void => {
  storageLayer = layer;
  instance = undefined;
};

/** The layer set now, so a benchmark can add one of its own outside it. */
export const currentStorageLayer = (): StorageLayer | undefined => storageLayer;

/** Runs each invocation inside a scope (a trace context that storage calls can find). */
export type InvocationScope = (
  job: Job,
  event: ApiGatewayV2Event,
  invoke: () => Promise<ApiGatewayV2Result>,
) => Promise<ApiGatewayV2Result>;
let invocationScope: InvocationScope | undefined;

/** For the benchmarks: wrap every invocation from now on (undefined removes the scope). */
export const setInvocationScope = (scope: InvocationScope | undefined): void => {
  invocationScope = scope;
};

/** This process's storage request counters and handler invocations per job (read by the benchmarks). */
export const meters = { metadata: new StorageMeter(), objects: new StorageMeter() };
export const invocations: Record<Job, number> = { admin: 0, produce: 0, fetch: 0, groups: 0, connect: 0 };

/** The process's Sluice, built on first use from SLUICE_* and AWS_* variables. */
export const sluiceFromEnv = (): Sluice => {
  if (instance) return instance;
  const { segmentStore, ...raw } = storageFromEnv(meters);
  // The stream sees the writes that took effect, under any fault or latency layer.
  const fed = withChangeFeed(raw.store, (line) => telemetryFromEnv().log('error', line));
  const built = { ...raw, store: fed.store };
  const layered = storageLayer ? storageLayer(built) : built;
  const deps = depsFromEnv({ ...layered, ...(segmentStore ? { segmentStore } : {}) });
  const sluice = createSluice({ ...deps, ...(authorizer ? { authorizer } : {}) });
  instance = sluice;
  // The event source mapping on the stream: each batch goes to the wait notifier's handler.
  fed.feed.handler = (records) =>
    notifyStreamBatch(sluice.waiting(localConnections, LOCAL_API).waiters, records);
  changeFeed = fed.feed;
  return sluice;
};

/** The wait socket's handler (the wait function's), over the process's Sluice. */
export const waitSocketHandler =
  () =>
  (event: WebSocketEvent): Promise<WebSocketResult> =>
    sluiceFromEnv().waiting(localConnections, LOCAL_API).socket.handle(event);

/** Resolves once every stream batch emulated so far was handled by the notifier (benchmarks, tests). */
export const streamDrained = (): Promise<void> => changeFeed?.drained() ?? Promise.resolve();

/** For tests and the local stack: drop the cached instance so the next call rebuilds it. */
export const resetSluice = (): void => {
  instance = undefined;
};

/** An API Gateway HTTP API handler serving one function's routes from the process's Sluice. */
export const httpHandler = (job: Job) => {
  return async (event: ApiGatewayV2Event, context?: InvocationContext): Promise<ApiGatewayV2Result> => {
    invocations[job] += 1;
    const invoke = () =>
      instrumented(invocationKeys(job, event, context), async () =>
        resultFromResponse(await sluiceFromEnv().router(job).handle(requestFromEvent(event))),
      );
    return invocationScope ? invocationScope(job, event, invoke) : invoke();
  };
};

/** The maintenance function's run over the process's Sluice, as functions/maintenance.ts logs it. */
export const maintenanceHandler = async (): Promise<unknown> =>
  instrumented({ function: 'maintenance' }, async () => {
    const report = await sluiceFromEnv().maintenance.run();
    telemetryFromEnv().log(report.errors.length > 0 ? 'warn' : 'info', 'maintenance run', {
      maintenance: report,
    });
    return report;
  });
