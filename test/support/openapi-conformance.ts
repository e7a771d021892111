/**
 * Holds live answers of the router to docs/openapi.json: each answer's status is listed for its
 * route, an error's Kafka code is listed for its status, and a JSON body validates against the
 * documented schema. Returns the problems found (empty when all conform) and the routes seen.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { matchRoute } from '../../functions/route-table.js';
import type { Exchange } from './router-fetch.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Doc = any;
export const OPENAPI_DOC: Doc = JSON.parse(
  readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8'),
);
export const routeName = (method: string, pattern: string): string => `${method.toUpperCase()} ${pattern}`;

const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema({ ...OPENAPI_DOC, $id: 'sluice:openapi' });

export const conformanceProblems = (
  exchanges: readonly Exchange[],
): { problems: string[]; seen: Set<string> } => {
  const doc = OPENAPI_DOC;
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const e of exchanges) {
    const route = matchRoute(e.method, e.path);
    const where = `${e.method} ${e.path} → ${e.status}`;
    if (!route) {
      problems.push(`${where}: no route`);
      continue;
    }
    seen.add(routeName(route.method, route.pattern));
    const op = doc.paths[route.pattern]?.[route.method.toLowerCase()];
    const response = op?.responses?.[String(e.status)];
    if (!response) {
      problems.push(`${where}: status not in docs/openapi.json`);
      continue;
    }
    if (e.status >= 400) {
      const code = (e.body as { error?: { code?: string } } | undefined)?.error?.code;
      if (!code || !response['x-kafka-error-codes'].includes(code))
        problems.push(`${where}: ${code} is not listed for this status`);
    }
    const type = Object.keys(response.content ?? {}).find((t) => e.contentType.includes(t));
    if (response.content && !type) problems.push(`${where}: content type ${e.contentType} not documented`);
    if (type !== 'application/json') continue;
    const pointer = [
      'paths',
      route.pattern,
      route.method.toLowerCase(),
      'responses',
      String(e.status),
      'content',
      type,
      'schema',
    ]
      .map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1'))
      .join('/');
    const validate = ajv.getSchema(`sluice:openapi#/${pointer}`);
    if (!validate) problems.push(`${where}: no schema`);
    else if (!validate(e.body))
      problems.push(`${where}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(e.body)}`);
  }
  return { problems, seen };
};
