/**
 * Kafka Connect's REST API under /v1/connect: the same paths, bodies and status codes as a Connect
 * worker (201 on create, 202 on pause/resume and on a restart that names tasks, 204 on stop, delete
 * and a plain restart). Errors carry Sluice's envelope plus Connect's `error_code`.
 */
import { SluiceError, invalidRequest } from '../protocol/errors.js';
import { STATUS_BY_CODE } from '../lib/http/status.js';
import type { ErrorCode } from '../protocol/errors.js';
import { rejectUnknownFields } from '../lib/http/body.js';
import type { RouteDefinition } from '../lib/http/define-route.js';
import { bindRoutes, defineRoute } from '../lib/http/define-route.js';
import { CONNECTOR_ERRORS, queryParam } from '../lib/http/routes/errors.js';
import type { HttpRequest, Route } from '../lib/http/types.js';
import { json } from '../lib/http/types.js';
import { checkConfigSize, parseConfigMap, validateConnectorConfig } from './connector-config.js';
import { CONVERTERS } from './converters.js';
import type { ConnectOffsetMap } from '../lib/wire/connect.js';
import type { Herder, OffsetEntry } from './herder.js';
import { PLUGINS, findPlugin } from './plugins.js';
import { TRANSFORMS } from './transforms/chain.js';
import { PREDICATES } from './transforms/routing.js';
import '../lib/http/validators/connect.js';

const BASE = '/v1/connect';

const connectorName = (request: HttpRequest): string => request.params['connector'] ?? '';

const queryOnly = (request: HttpRequest, allowed: readonly string[] = []): void => {
  const unknown = Object.keys(request.query).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) throw invalidRequest(`unknown query parameter(s): ${unknown.join(', ')}`);
};

const flag = (request: HttpRequest, name: string, fallback: boolean): boolean => {
  const value = request.query[name];
  if (value === undefined) return fallback;
  if (value === 'true' || value === '') return true;
  if (value === 'false') return false;
  throw invalidRequest(`query parameter ${name} must be true or false`);
};

const taskId = (request: HttpRequest): number => {
  const raw = request.params['task'] ?? '';
  if (!/^\d{1,6}$/.test(raw)) throw invalidRequest(`task id ${raw} is not a non-negative integer`);
  return Number(raw);
};

const parseOffsets = (body: Record<string, unknown>): OffsetEntry[] => {
  rejectUnknownFields(body, ['offsets']);
  const offsets = body['offsets'];
  if (!Array.isArray(offsets) || offsets.length === 0)
    throw invalidRequest('offsets must be a non-empty list of {"partition": {...}, "offset": {...} | null}');
  return offsets.map((entry, i) => {
    // The body was parsed from JSON: an object in it holds only JSON values.
    const isMap = (v: unknown): v is ConnectOffsetMap =>
      v !== null && typeof v === 'object' && !Array.isArray(v);
    if (!isMap(entry) || !isMap(entry['partition']) || !(entry['offset'] === null || isMap(entry['offset'])))
      throw invalidRequest(`offsets[${i}] must be {"partition": {...}, "offset": {...} | null}`);
    return { partition: entry['partition'], offset: entry['offset'] };
  });
};

export interface ConnectRoutesOptions {
  herder: Herder;
}

/**
 * Kafka Connect answers errors as `{"error_code": <HTTP status>, "message": …}`; Connect's clients read
 * those two top-level fields, so every error gets both beside Sluice's own envelope.
 */
const withErrorCode = (error: unknown): unknown => {
  if (!(error instanceof SluiceError)) return error;
  return new SluiceError(error.code, error.message, {
    cause: error,
    retriable: error.retriable,
    details: {
      ...error.details,
      error_code: error.details?.['error_code'] ?? STATUS_BY_CODE[error.code],
      message: error.message,
    },
  });
};

/**
 * Kafka Connect's REST API has no Kafka ACLs of its own; a connector is cluster configuration, so
 * reading it is DESCRIBE and changing it ALTER on the cluster (the route path still scopes the policy).
 */
const connectRoute = (
  operation: 'DESCRIBE' | 'ALTER',
  route: Omit<
    RouteDefinition<ConnectRoutesOptions>,
    'job' | 'acl' | 'public' | 'errors' | 'mapError' | 'path'
  > & { path: string; errors?: ErrorCode[] },
): RouteDefinition<ConnectRoutesOptions> =>
  defineRoute<ConnectRoutesOptions>({
    errors: CONNECTOR_ERRORS,
    ...route,
    path: `${BASE}${route.path}`,
    job: 'connect',
    acl: { operation, resourceType: 'CLUSTER' },
    mapError: withErrorCode,
  });

const C = '/connectors/{connector}';

export const CONNECT_ROUTES = [
  connectRoute('DESCRIBE', {
    method: 'GET',
    path: '/connectors',
    id: 'listConnectors',
    summary: 'Connect: the connectors.',
    query: [queryParam('expand', 'string', 'status and/or info')],
    ok: { 200: 'ConnectorList' },
    errors: ['CLUSTER_AUTHORIZATION_FAILED'],
    handler:
      ({ herder }) =>
      async (request) => {
        queryOnly(request, ['expand']);
        const expand = (request.query['expand'] ?? '').split(',').filter(Boolean);
        const bad = expand.filter((e) => e !== 'status' && e !== 'info');
        if (bad.length > 0) throw invalidRequest(`expand must be status and/or info, not ${bad.join(', ')}`);
        return json(200, expand.length === 0 ? await herder.names() : await herder.expanded(expand));
      },
  }),
  connectRoute('ALTER', {
    method: 'POST',
    path: '/connectors',
    id: 'createConnector',
    summary: 'Connect: create a connector.',
    body: 'CreateConnector',
    ok: { 201: 'ConnectorInfo' },
    errors: ['ALREADY_EXISTS', 'INVALID_CONFIG', 'CLUSTER_AUTHORIZATION_FAILED'],
    handler:
      ({ herder }) =>
      async (request, body = {}) => {
        queryOnly(request);
        const name = body['name'] as string;
        if (name.length === 0) throw invalidRequest('name must be a non-empty string');
        const initial = body['initial_state'] as string | undefined;
        const info = await herder.create(name, parseConfigMap(body['config'] ?? {}), initial);
        return json(201, info, { location: `${BASE}/connectors/${encodeURIComponent(name)}` });
      },
  }),
  connectRoute('DESCRIBE', {
    method: 'GET',
    path: C,
    id: 'describeConnector',
    summary: 'Connect: a connector, its config and tasks.',
    ok: { 200: 'ConnectorInfo' },
    handler:
      ({ herder }) =>
      async (request) => {
        queryOnly(request);
        return json(200, await herder.info(connectorName(request)));
      },
  }),
  connectRoute('ALTER', {
    method: 'DELETE',
    path: C,
    id: 'deleteConnector',
    summary: 'Connect: delete a connector.',
    ok: { 204: 'empty' },
    handler:
      ({ herder }) =>
      async (request) => {
        queryOnly(request);
        await herder.delete(connectorName(request));
        return { status: 204 };
      },
  }),
  connectRoute('DESCRIBE', {
    method: 'GET',
    path: `${C}/config`,
    id: 'connectorConfig',
    summary: "Connect: a connector's config.",
    ok: { 200: 'ConnectorConfig' },
    handler:
      ({ herder }) =>
      async (request) => {
        queryOnly(request);
        return json(200, await herder.config(connectorName(request)));
      },
  }),
  connectRoute('ALTER', {
    method: 'PUT',
    path: `${C}/config`,
    id: 'putConnectorConfig',
    summary: 'Connect: create or replace a config.',
    body: 'ConnectorConfig',
    ok: { 200: 'ConnectorInfo', 201: 'ConnectorInfo' },
    errors: [...CONNECTOR_ERRORS, 'INVALID_CONFIG'],
    handler:
      ({ herder }) =>
      async (request, body = {}) => {
        queryOnly(request);
        const { created, info } = await herder.putConfig(connectorName(request), parseConfigMap(body));
        return json(created ? 201 : 200, info);
      },
  }),
  connectRoute('DESCRIBE', {
    method: 'GET',
    path: `${C}/status`,
    id: 'connectorStatus',
    summary: "Connect: a connector's and its tasks' states.",
    ok: { 200: 'ConnectorStatus' },
    handler:
      ({ herder }) =>
      async (request) => {
        queryOnly(request);
        return json(200, await herder.status(connectorName(request)));
      },
  }),
  connectRoute('DESCRIBE', {
    method: 'GET',
    path: `${C}/tasks`,
    id: 'connectorTasks',
    summary: "Connect: a connector's tasks and their configs.",
    ok: { 200: 'ConnectTaskList' },
    handler:
      ({ herder }) =>
      async (request) => {
        queryOnly(request);
        return json(200, await herder.tasks(connectorName(request)));
      },
  }),
  connectRoute('DESCRIBE', {
    method: 'GET',
    path: `${C}/tasks/{task}/status`,
    id: 'taskStatus',
    summary: "Connect: one task's state.",
    ok: { 200: 'ConnectTaskStatus' },
    handler:
      ({ herder }) =>
      async (request) => {
        queryOnly(request);
        return json(200, await herder.taskStatus(connectorName(request), taskId(request)));
      },
  }),
  connectRoute('ALTER', {
    method: 'POST',
    path: `${C}/tasks/{task}/restart`,
    id: 'restartTask',
    summary: 'Connect: restart one task.',
    ok: { 204: 'empty' },
    handler:
      ({ herder }) =>
      async (request) => {
        queryOnly(request);
        await herder.restartTask(connectorName(request), taskId(request));
        return { status: 204 };
      },
  }),
  connectRoute('ALTER', {
    method: 'PUT',
    path: `${C}/pause`,
    id: 'pauseConnector',
    summary: 'Connect: pause (202).',
    ok: { 202: 'empty' },
    handler:
      ({ herder }) =>
      async (request) => {
        queryOnly(request);
        await herder.setTargetState(connectorName(request), 'PAUSED');
        return { status: 202 };
      },
  }),
  connectRoute('ALTER', {
    method: 'PUT',
    path: `${C}/resume`,
    id: 'resumeConnector',
    summary: 'Connect: resume (202).',
    ok: { 202: 'empty' },
    handler:
      ({ herder }) =>
      async (request) => {
        queryOnly(request);
        await herder.setTargetState(connectorName(request), 'STARTED');
        return { status: 202 };
      },
  }),
  connectRoute('ALTER', {
    method: 'PUT',
    path: `${C}/stop`,
    id: 'stopConnector',
    summary: 'Connect: stop (KIP-875).',
    ok: { 204: 'empty' },
    handler:
      ({ herder }) =>
      async (request) => {
        queryOnly(request);
        await herder.setTargetState(connectorName(request), 'STOPPED');
        return { status: 204 };
      },
  }),
  connectRoute('ALTER', {
    method: 'POST',
    path: `${C}/restart`,
    id: 'restartConnector',
    summary: 'Connect: restart, with includeTasks and onlyFailed.',
    query: [
      queryParam('includeTasks', 'string', 'true: restart the tasks too'),
      queryParam('onlyFailed', 'string', 'true: only what is FAILED'),
    ],
    ok: { 202: 'ConnectorStatus', 204: 'empty' },
    handler:
      ({ herder }) =>
      async (request) => {
        queryOnly(request, ['includeTasks', 'onlyFailed']);
        const status = await herder.restart(
          connectorName(request),
          flag(request, 'includeTasks', false),
          flag(request, 'onlyFailed', false),
        );
        return status ? json(202, status) : { status: 204 };
      },
  }),
  connectRoute('DESCRIBE', {
    method: 'GET',
    path: `${C}/offsets`,
    id: 'connectorOffsets',
    summary: "Connect: a connector's offsets (KIP-875).",
    ok: { 200: 'ConnectorOffsets' },
    handler:
      ({ herder }) =>
      async (request) => {
        queryOnly(request);
        return json(200, await herder.offsets(connectorName(request)));
      },
  }),
  connectRoute('ALTER', {
    method: 'PATCH',
    path: `${C}/offsets`,
    id: 'alterConnectorOffsets',
    summary: 'Connect: alter offsets, only while STOPPED.',
    body: 'ConnectorOffsets',
    ok: { 200: 'ConnectMessage' },
    handler:
      ({ herder }) =>
      async (request, body = {}) => {
        queryOnly(request);
        await herder.alterOffsets(connectorName(request), parseOffsets(body));
        return json(200, { message: 'The offsets for this connector have been altered successfully' });
      },
  }),
  connectRoute('ALTER', {
    method: 'DELETE',
    path: `${C}/offsets`,
    id: 'resetConnectorOffsets',
    summary: 'Connect: reset offsets, only while STOPPED.',
    ok: { 200: 'ConnectMessage' },
    handler:
      ({ herder }) =>
      async (request) => {
        queryOnly(request);
        await herder.resetOffsets(connectorName(request));
        return json(200, { message: 'The offsets for this connector have been reset successfully' });
      },
  }),
  connectRoute('DESCRIBE', {
    method: 'GET',
    path: '/connector-plugins',
    id: 'connectorPlugins',
    summary: 'Connect: the plugins.',
    query: [queryParam('connectorsOnly', 'string', 'false: transforms and predicates too')],
    ok: { 200: 'ConnectorPlugins' },
    errors: ['CLUSTER_AUTHORIZATION_FAILED'],
    handler: () => async (request) => {
      queryOnly(request, ['connectorsOnly']);
      const plugins = PLUGINS.map((p) => ({ class: p.class, type: p.type, version: p.version }));
      if (flag(request, 'connectorsOnly', true)) return json(200, plugins);
      return json(200, [
        ...plugins,
        ...TRANSFORMS.map((t) => ({ class: t.class, type: 'transformation' })),
        ...PREDICATES.map((p) => ({ class: p.class, type: 'predicate' })),
        ...CONVERTERS.map((c) => ({ class: c, type: 'converter' })),
      ]);
    },
  }),
  connectRoute('DESCRIBE', {
    method: 'PUT',
    path: '/connector-plugins/{plugin}/config/validate',
    id: 'validateConnectorConfig',
    summary: "Connect: validate a config, in Connect's error_count / configs shape.",
    body: 'ConnectorConfig',
    ok: { 200: 'ConfigValidation' },
    handler:
      () =>
      async (request, body = {}) => {
        queryOnly(request);
        const name = request.params['plugin'] ?? '';
        const plugin = findPlugin(name);
        if (!plugin)
          throw new SluiceError(
            'NOT_FOUND',
            `Failed to find any class that implements Connector and which name matches ${name}`,
            {
              details: { error_code: 404 },
            },
          );
        const config = parseConfigMap(body);
        checkConfigSize(config);
        const given = config['connector.class'];
        if (given !== undefined && findPlugin(given) !== plugin)
          throw new SluiceError(
            'INVALID_REQUEST',
            `Included connector type ${given} does not match request type ${name}`,
            {
              details: { error_code: 400 },
            },
          );
        return json(200, validateConnectorConfig(plugin, { ...config, 'connector.class': plugin.class }));
      },
  }),
];

/** The Connect routes alone over one herder. */
export const connectRoutes = (herder: Herder): Route[] => bindRoutes(CONNECT_ROUTES, { herder });
