/**
 * Every route of the route table as one concrete canonical path, and the spellings of that path a
 * router or a policy could read differently: a trailing `/`, `//`, `.` and `..` segments (raw and
 * percent-encoded), over-encoded and lower-case-hex characters, a `\` or an encoded `/` for a
 * separator, and a literal segment in another case. Generic over ROUTE_TABLE, so a route added later
 * is enumerated too (issue 23); the unit, integration and fuzz suites all use it.
 */
import type { RouteSpec } from '../../functions/route-table.js';
import { ROUTE_TABLE } from '../../functions/route-table.js';

/** A value for each path parameter the route table uses; any new one gets `x1`. */
export const SAMPLE_PARAMS: Readonly<Record<string, string>> = {
  topic: 'orders',
  partition: '0',
  group: 'g1',
  app: 'wordcount',
  store: 'counts',
  key: 'hello',
  connector: 'mirror',
  task: '0',
  plugin: 'S3SinkConnector',
};

export const concretePath = (pattern: string, params: Readonly<Record<string, string>> = SAMPLE_PARAMS) =>
  pattern.replace(/\{([a-zA-Z]+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? 'x1'));

export interface PathVariant {
  kind: string;
  path: string;
}

const hex = (c: string) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;

/** The non-canonical spellings of a canonical path (none of them may be routed or authorized). */
export const pathVariants = (path: string): PathVariant[] => {
  const segments = path.slice(1).split('/');
  const join = (parts: string[]) => `/${parts.join('/')}`;
  const out: PathVariant[] = [
    { kind: 'trailing slash', path: `${path}/` },
    { kind: 'two trailing slashes', path: `${path}//` },
    { kind: 'leading //', path: `/${path}` },
    { kind: 'trailing /.', path: `${path}/.` },
    { kind: 'trailing /x/..', path: `${path}/x/..` },
    { kind: 'trailing encoded /.', path: `${path}/%2E` },
  ];
  segments.forEach((segment, i) => {
    const before = segments.slice(0, i);
    const after = segments.slice(i);
    out.push(
      { kind: `// before segment ${i}`, path: join([...before, '', ...after]) },
      { kind: `/./ before segment ${i}`, path: join([...before, '.', ...after]) },
      { kind: `/x/../ before segment ${i}`, path: join([...before, 'x', '..', ...after]) },
      { kind: `/%2e%2e/ before segment ${i}`, path: join([...before, 'x', '%2e%2e', ...after]) },
      { kind: `/%2E/ before segment ${i}`, path: join([...before, '%2E', ...after]) },
      {
        kind: `over-encoded segment ${i}`,
        path: join([...before, hex(segment[0]!) + segment.slice(1), ...after.slice(1)]),
      },
      {
        kind: `lower-case hex in segment ${i}`,
        path: join([...before, hex(segment[0]!).toLowerCase() + segment.slice(1), ...after.slice(1)]),
      },
    );
    if (i > 0) {
      out.push(
        { kind: `\\ for / before segment ${i}`, path: `${join(before)}\\${after.join('/')}` },
        { kind: `%2F for / before segment ${i}`, path: `${join(before)}%2F${after.join('/')}` },
      );
    }
  });
  return out;
};

/** A variant that changes case only in a route's literal segments (a parameter in another case names another resource). */
export const literalCaseVariants = (spec: RouteSpec): PathVariant[] => {
  const literal = spec.pattern.slice(1).split('/');
  const concrete = concretePath(spec.pattern).slice(1).split('/');
  return literal.flatMap((segment, i) =>
    segment.startsWith('{') || segment.toUpperCase() === segment
      ? []
      : [
          {
            kind: `literal ${segment} upper-cased`,
            path: `/${concrete.map((s, j) => (j === i ? s.toUpperCase() : s)).join('/')}`,
          },
        ],
  );
};

/** Every route with its canonical path and the variants that must answer 404 and change nothing. */
export const routeVariants = (table: readonly RouteSpec[] = ROUTE_TABLE) =>
  table.map((spec) => {
    const path = concretePath(spec.pattern);
    const variants = [...pathVariants(path), ...literalCaseVariants(spec)];
    return { spec, key: `${spec.method} ${spec.pattern}`, path, variants: dedupe(variants) };
  });

const dedupe = (variants: PathVariant[]): PathVariant[] => {
  const seen = new Set<string>();
  return variants.filter((v) => (seen.has(v.path) ? false : (seen.add(v.path), true)));
};
