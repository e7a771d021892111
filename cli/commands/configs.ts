/**
 * `configs`, after kafka-configs.sh for client quotas: `--alter --add-config producer_byte_rate=1024
 * --entity-type users --entity-name ARN`, `--delete-config`, `--describe`, `--entity-default`, and
 * Kafka's shortcuts `--user`, `--client`, `--user-defaults`, `--client-defaults` for an entity of both.
 */
import type { ClientQuotaEntity, ClientQuotaEntry, ClientQuotaType } from '../api.js';
import type { CommandSpec } from '../command.js';
import { Options, UsageError } from '../command.js';

const QUOTA_KEYS: readonly ClientQuotaType[] = [
  'producer_byte_rate',
  'consumer_byte_rate',
  'request_percentage',
  'controller_mutation_rate',
];

const ENTITY_TYPES = { users: 'user', clients: 'client-id' } as const;

/** The entity the options name: a name or the default (null) per type; `any` types are left out. */
const entityOf = (options: Options, describe: boolean): ClientQuotaEntity => {
  const entity: ClientQuotaEntity = {};
  const types = options.list('entity-type');
  const names = options.list('entity-name');
  const byDefault = options.flag('entity-default');
  for (const type of types) {
    if (!(type in ENTITY_TYPES))
      throw new UsageError(`--entity-type must be users or clients, got ${JSON.stringify(type)}`, configs);
  }
  if (types.length > 2 || new Set(types).size !== types.length)
    throw new UsageError('--entity-type takes users and/or clients, each once', configs);
  if (names.length > types.length || (byDefault && names.length === types.length && types.length > 0))
    throw new UsageError('give each --entity-type one --entity-name, or --entity-default', configs);
  if (byDefault && types.length === 2 && names.length === 0)
    throw new UsageError(
      '--entity-default with two entity types: use --user-defaults/--client-defaults',
      configs,
    );
  types.forEach((type, i) => {
    if (!isEntityType(type)) return; // refused above
    const key = ENTITY_TYPES[type];
    const name = names[i];
    if (name !== undefined) entity[key] = name;
    else if (byDefault) entity[key] = null;
    else if (!describe)
      throw new UsageError(`--entity-type ${type} needs --entity-name or --entity-default`, configs);
  });
  const shortcut = (key: 'user' | 'client-id', nameOption: string, defaultOption: string) => {
    const name = options.string(nameOption);
    const isDefault = options.flag(defaultOption);
    if (name === undefined && !isDefault) return;
    if (key in entity) throw new UsageError(`--${nameOption} repeats an --entity-type`, configs);
    if (name !== undefined && isDefault)
      throw new UsageError(`give --${nameOption} or --${defaultOption}, not both`, configs);
    entity[key] = name ?? null;
  };
  shortcut('user', 'user', 'user-defaults');
  shortcut('client-id', 'client', 'client-defaults');
  return entity;
};

const isQuotaKey = (key: string): key is ClientQuotaType => QUOTA_KEYS.some((known) => known === key);
const isEntityType = (type: string): type is keyof typeof ENTITY_TYPES => Object.hasOwn(ENTITY_TYPES, type);

/** `producer_byte_rate=1024,consumer_byte_rate=2048` (one option or several). */
const parseAdd = (items: string[]): { key: ClientQuotaType; value: number }[] =>
  items
    .flatMap((item) => item.split(','))
    .filter(Boolean)
    .map((pair) => {
      const eq = pair.indexOf('=');
      const key = pair.slice(0, eq);
      const value = Number(pair.slice(eq + 1));
      if (eq <= 0 || !isQuotaKey(key))
        throw new UsageError(
          `--add-config takes ${QUOTA_KEYS.join('|')}=N, got ${JSON.stringify(pair)}`,
          configs,
        );
      if (!Number.isFinite(value) || value <= 0)
        throw new UsageError(
          `${key} must be a positive number, got ${JSON.stringify(pair.slice(eq + 1))}`,
          configs,
        );
      return { key, value };
    });

const parseDelete = (items: string[]): ClientQuotaType[] =>
  items
    .flatMap((item) => item.split(','))
    .filter(Boolean)
    .map((key) => {
      if (!isQuotaKey(key))
        throw new UsageError(
          `--delete-config takes ${QUOTA_KEYS.join(', ')}, got ${JSON.stringify(key)}`,
          configs,
        );
      return key;
    });

/** kafka-configs.sh's words: `user-principal 'alice', client-id 'app'` (`<default>` for a default). */
export const describeEntity = (entity: ClientQuotaEntity): string =>
  [
    ...('user' in entity ? [`user-principal '${entity.user ?? '<default>'}'`] : []),
    ...('client-id' in entity ? [`client-id '${entity['client-id'] ?? '<default>'}'`] : []),
  ].join(', ');

const describeValues = (entry: ClientQuotaEntry): string =>
  Object.entries(entry.values)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => `${key}=${value}`)
    .join(', ');

export const configs: CommandSpec = {
  words: ['configs'],
  summary: 'Set and show client quotas, as kafka-configs.sh does (--entity-type users|clients).',
  args: [],
  options: {
    alter: { type: 'boolean', description: 'change the quotas of the entity' },
    describe: { type: 'boolean', description: 'show quotas (of the entity, or every one)' },
    'add-config': {
      type: 'string',
      multiple: true,
      valueName: 'K=V[,K=V]',
      description: `set quotas: ${QUOTA_KEYS.join(', ')}`,
    },
    'delete-config': { type: 'string', multiple: true, valueName: 'K[,K]', description: 'remove quotas' },
    'entity-type': { type: 'string', multiple: true, valueName: 'users|clients', description: 'entity type' },
    'entity-name': {
      type: 'string',
      multiple: true,
      valueName: 'NAME',
      description: 'a user (IAM principal ARN, ANONYMOUS unsigned) or client id, per --entity-type in order',
    },
    'entity-default': { type: 'boolean', description: 'the default user or client id' },
    user: { type: 'string', valueName: 'ARN', description: 'the user part of an entity (Kafka shortcut)' },
    client: {
      type: 'string',
      valueName: 'ID',
      description: 'the client id part of an entity (Kafka shortcut)',
    },
    'user-defaults': { type: 'boolean', description: 'the default user part of an entity' },
    'client-defaults': { type: 'boolean', description: 'the default client id part of an entity' },
  },
  examples: [
    'sluice configs --alter --add-config producer_byte_rate=1048576 --entity-type clients --entity-name billing',
    'sluice configs --alter --add-config consumer_byte_rate=2097152 --entity-type users --entity-default',
    'sluice configs --alter --delete-config producer_byte_rate --entity-type clients --entity-name billing',
    'sluice configs --describe --entity-type clients',
  ],
  async run(ctx, { values }) {
    const options = new Options(values, configs);
    const alter = options.flag('alter');
    const describe = options.flag('describe');
    if (alter === describe) throw new UsageError('give one of --alter and --describe', configs);
    const entity = entityOf(options, describe);
    if (describe) {
      const entries = await ctx.api.describeClientQuotas({
        ...('user' in entity ? { user: entity.user ?? null } : {}),
        ...('client-id' in entity ? { clientId: entity['client-id'] ?? null } : {}),
        strict: false,
      });
      if (ctx.json) return void (await ctx.print(JSON.stringify({ entries })));
      if (entries.length === 0) return void ctx.note('No quota configs match.');
      for (const entry of entries)
        await ctx.print(`Quota configs for ${describeEntity(entry.entity)} are ${describeValues(entry)}`);
      return;
    }
    if (Object.keys(entity).length === 0)
      throw new UsageError(
        '--alter needs an entity: --entity-type with --entity-name or --entity-default',
        configs,
      );
    const ops = [
      ...parseAdd(options.list('add-config')),
      ...parseDelete(options.list('delete-config')).map((key) => ({ key, value: null })),
    ];
    if (ops.length === 0) throw new UsageError('--alter needs --add-config or --delete-config', configs);
    const [entry] = await ctx.api.alterClientQuotas([{ entity, ops }]);
    if (ctx.json) return void (await ctx.print(JSON.stringify({ entity, values: entry?.values ?? {} })));
    await ctx.print(`Completed updating config for ${describeEntity(entity)}.`);
  },
};
