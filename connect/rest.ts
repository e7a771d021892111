/**
 * Kafka Connect's REST API under /v1/connect: the same paths, bodies and status codes as a Connect
 * worker (201 on create, 202 on pause/resume and on a restart that names tasks, 204 on stop, delete
 * and a plain restart). Errors carry Sluice's envelope plus Connect's `error_code`.
 */
import { SluiceError, invalidRequest } from '../protocol/errors.js';
import { STATUS_BY_CODE } from '../lib/http/status.js';
import { readJson, readJsonObject, rejectUnknownFields } from '../lib/http/body.js';
import type { HttpRequest, Route } from '../lib/http/types.js';
import { json } from '../lib/http/types.js';
import { checkConfigSize, parseConfigMap, validateConnectorConfig } from './connector-config.js';
import { CONVERTERS } from './converters.js';
import type { Herder, OffsetEntry } from './herder.js';
import { PLUGINS, findPlugin } from './plugins.js';
import { TRANSFORMS } from './transforms/chain.js';
import { PREDICATES } from './transforms/routing.js';

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
    const isMap = (v: unknown): v is Record<string, unknown> =>
      v !== null && typeof v === 'object' && !Array.isArray(v);
    if (!isMap(entry) || !isMap(entry['partition']) || !(entry['offset'] === null || isMap(entry['offset'])))
      throw invalidRequest(`offsets[${i}] must be {"partition": {...}, "offset": {...} | null}`);
    return { partition: entry['partition'], offset: entry['offset'] };
  });
};

export const connectRoutes = (herder: Herder): Route[] => {
  // Kafka Connect answers errors as `{"error_code": <HTTP status>, "message": …}`; Connect's clients
  // read those two top-level fields, so every error gets both beside Sluice's own envelope.
  const route = (method: Route['method'], path: string, handler: Route['handler']): Route => ({
    method,
    pattern: `${BASE}${path}`,
    handler: async (request) => {
      try {
        return await handler(request);
      } catch (error) {
        if (!(error instanceof SluiceError)) throw error;
        throw new SluiceError(error.code, error.message, {
          cause: error,
          retriable: error.retriable,
          details: {
            ...error.details,
            error_code: error.details?.['error_code'] ?? STATUS_BY_CODE[error.code],
            message: error.message,
          },
        });
      }
    },
  });
  return [
    route('GET', '/connectors', async (request) => {
      queryOnly(request, ['expand']);
      const expand = (request.query['expand'] ?? '').split(',').filter(Boolean);
      const bad = expand.filter((e) => e !== 'status' && e !== 'info');
      if (bad.length > 0) throw invalidRequest(`expand must be status and/or info, not ${bad.join(', ')}`);
      return json(200, expand.length === 0 ? await herder.names() : await herder.expanded(expand));
    }),
    route('POST', '/connectors', async (request) => {
      queryOnly(request);
      const body = readJsonObject(request);
      rejectUnknownFields(body, ['name', 'config', 'initial_state']);
      const name = body['name'];
      if (typeof name !== 'string' || name.length === 0)
        throw invalidRequest('name must be a non-empty string');
      const initial = body['initial_state'];
      if (initial !== undefined && typeof initial !== 'string')
        throw invalidRequest('initial_state must be a string');
      const info = await herder.create(name, parseConfigMap(body['config'] ?? {}), initial);
      return json(201, info, { location: `${BASE}/connectors/${encodeURIComponent(name)}` });
    }),
    route('GET', '/connectors/{connector}', async (request) => {
      queryOnly(request);
      return json(200, await herder.info(connectorName(request)));
    }),
    route('DELETE', '/connectors/{connector}', async (request) => {
      queryOnly(request);
      await herder.delete(connectorName(request));
      return { status: 204 };
    }),
    route('GET', '/connectors/{connector}/config', async (request) => {
      queryOnly(request);
      return json(200, await herder.config(connectorName(request)));
    }),
    route('PUT', '/connectors/{connector}/config', async (request) => {
      queryOnly(request);
      const { created, info } = await herder.putConfig(
        connectorName(request),
        parseConfigMap(readJson(request)),
      );
      return json(created ? 201 : 200, info);
    }),
    route('GET', '/connectors/{connector}/status', async (request) => {
      queryOnly(request);
      return json(200, await herder.status(connectorName(request)));
    }),
    route('GET', '/connectors/{connector}/tasks', async (request) => {
      queryOnly(request);
      return json(200, await herder.tasks(connectorName(request)));
    }),
    route('GET', '/connectors/{connector}/tasks/{task}/status', async (request) => {
      queryOnly(request);
      return json(200, await herder.taskStatus(connectorName(request), taskId(request)));
    }),
    route('POST', '/connectors/{connector}/tasks/{task}/restart', async (request) => {
      queryOnly(request);
      await herder.restartTask(connectorName(request), taskId(request));
      return { status: 204 };
    }),
    route('PUT', '/connectors/{connector}/pause', async (request) => {
      queryOnly(request);
      await herder.setTargetState(connectorName(request), 'PAUSED');
      return { status: 202 };
    }),
    route('PUT', '/connectors/{connector}/resume', async (request) => {
      queryOnly(request);
      await herder.setTargetState(connectorName(request), 'STARTED');
      return { status: 202 };
    }),
    route('PUT', '/connectors/{connector}/stop', async (request) => {
      queryOnly(request);
      await herder.setTargetState(connectorName(request), 'STOPPED');
      return { status: 204 };
    }),
    route('POST', '/connectors/{connector}/restart', async (request) => {
      queryOnly(request, ['includeTasks', 'onlyFailed']);
      const status = await herder.restart(
        connectorName(request),
        flag(request, 'includeTasks', false),
        flag(request, 'onlyFailed', false),
      );
      return status ? json(202, status) : { status: 204 };
    }),
    route('GET', '/connectors/{connector}/offsets', async (request) => {
      queryOnly(request);
      return json(200, await herder.offsets(connectorName(request)));
    }),
    route('PATCH', '/connectors/{connector}/offsets', async (request) => {
      queryOnly(request);
      await herder.alterOffsets(connectorName(request), parseOffsets(readJsonObject(request)));
      return json(200, { message: 'The offsets for this connector have been altered successfully' });
    }),
    route('DELETE', '/connectors/{connector}/offsets', async (request) => {
      queryOnly(request);
      await herder.resetOffsets(connectorName(request));
      return json(200, { message: 'The offsets for this connector have been reset successfully' });
    }),
    route('GET', '/connector-plugins', async (request) => {
      queryOnly(request, ['connectorsOnly']);
      const plugins = PLUGINS.map((p) => ({ class: p.class, type: p.type, version: p.version }));
      if (flag(request, 'connectorsOnly', true)) return json(200, plugins);
      return json(200, [
        ...plugins,
        ...TRANSFORMS.map((t) => ({ class: t.class, type: 'transformation' })),
        ...PREDICATES.map((p) => ({ class: p.class, type: 'predicate' })),
        ...CONVERTERS.map((c) => ({ class: c, type: 'converter' })),
      ]);
    }),
    route('PUT', '/connector-plugins/{plugin}/config/validate', async (request) => {
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
      const config = parseConfigMap(readJson(request));
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
    }),
  ];
};
