/**
 * The SMT chain of a connector, from Kafka's settings: `transforms=a,b`, `transforms.a.type=<class>`,
 * `transforms.a.<setting>`, `transforms.a.predicate=p`, `transforms.a.negate=true`, and
 * `predicates=p`, `predicates.p.type=<class>`, `predicates.p.<setting>`.
 */
import type { ConfigInfo, ConfigKey } from '../config-def.js';
import { listOf, validateConfig } from '../config-def.js';
import type { ConnectRecord } from '../plugin.js';
import { FIELD_TRANSFORMS } from './field-transforms.js';
import { PREDICATES, ROUTING_TRANSFORMS } from './routing.js';
import type { PredicateFactory, TransformFactory } from './types.js';

export const TRANSFORMS: readonly TransformFactory[] = [...FIELD_TRANSFORMS, ...ROUTING_TRANSFORMS];

export type Chain = (record: ConnectRecord) => ConnectRecord | null;

const prefixed = (config: Record<string, string>, prefix: string): Record<string, string> =>
  Object.fromEntries(
    Object.entries(config)
      .filter(([k]) => k.startsWith(prefix))
      .map(([k, v]) => [k.slice(prefix.length), v]),
  );

const typeKey = (name: string, kind: string, classes: readonly string[]): ConfigKey => ({
  name,
  type: 'CLASS',
  importance: 'HIGH',
  documentation: `Class for the '${name.split('.')[1]}' ${kind}.`,
  group: `${kind === 'transformation' ? 'Transforms' : 'Predicates'}: ${name.split('.')[1]}`,
  validate: (v) => (classes.includes(v) ? undefined : `Class ${v} could not be found.`),
  recommended: classes,
});

/** The validate entries of every transform and predicate setting (errors included). */
export const validateChain = (config: Record<string, string>): ConfigInfo[] => {
  const out: ConfigInfo[] = [];
  const section = (
    kind: 'transformation' | 'predicate',
    root: 'transforms' | 'predicates',
    factories: readonly (TransformFactory | PredicateFactory)[],
  ): void => {
    for (const alias of listOf(config[root] ?? '')) {
      const prefix = `${root}.${alias}.`;
      const type = typeKey(
        `${prefix}type`,
        kind,
        factories.map((f) => f.class),
      );
      const extra: ConfigKey[] =
        kind === 'transformation'
          ? [
              { ...own(prefix, 'predicate', 'The alias of a predicate that decides when this applies', '') },
              {
                ...own(prefix, 'negate', 'Apply when the predicate does not match', 'false'),
                type: 'BOOLEAN',
              },
            ]
          : [];
      const factory = factories.find((f) => f.class === config[`${prefix}type`]);
      const keys: ConfigKey[] = [
        type,
        ...extra,
        ...(factory?.configKeys ?? []).map((k) => ({
          ...k,
          name: `${prefix}${k.name}`,
          group: type.group,
        })),
      ];
      out.push(...validateConfig('', keys, config).configs);
      if (kind === 'transformation') {
        const predicate = config[`${prefix}predicate`];
        const entry = out.find((c) => c.value.name === `${prefix}predicate`);
        if (predicate && !listOf(config['predicates'] ?? '').includes(predicate))
          entry?.value.errors.push(`Predicate ${predicate} is not listed in predicates`);
      }
    }
  };
  section('transformation', 'transforms', TRANSFORMS);
  section('predicate', 'predicates', PREDICATES);
  return out;
};

const own = (prefix: string, name: string, documentation: string, fallback: string): ConfigKey => ({
  name: `${prefix}${name}`,
  type: 'STRING',
  default: fallback,
  importance: 'MEDIUM',
  documentation,
  group: 'Transforms',
});

/** Builds the chain; the config must have passed validateChain. */
export const buildChain = (config: Record<string, string>): Chain => {
  const predicates = new Map(
    listOf(config['predicates'] ?? '').map((alias) => {
      const settings = prefixed(config, `predicates.${alias}.`);
      const factory = PREDICATES.find((f) => f.class === settings['type'])!;
      return [alias, factory.create(settings)] as const;
    }),
  );
  const steps = listOf(config['transforms'] ?? '').map((alias) => {
    const settings = prefixed(config, `transforms.${alias}.`);
    const factory = TRANSFORMS.find((f) => f.class === settings['type'])!;
    const apply = factory.create(settings);
    const predicate = settings['predicate'] ? predicates.get(settings['predicate']) : undefined;
    const negate = settings['negate'] === 'true';
    return (record: ConnectRecord): ConnectRecord | null => {
      if (predicate && predicate(record) === negate) return record;
      return apply(record);
    };
  });
  return (record) => {
    let current: ConnectRecord | null = record;
    for (const step of steps) {
      if (current === null) return null;
      current = step(current);
    }
    return current;
  };
};
