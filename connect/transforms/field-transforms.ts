/**
 * Kafka's field-level SMTs on schemaless records (JSON maps), with Kafka's class names and settings:
 * InsertField, ReplaceField, MaskField, Cast and ValueToKey. `$Key` / `$Value` pick the side.
 */
import type { ConfigKey } from '../config-def.js';
import { listOf } from '../config-def.js';
import type { ConnectRecord, SinkRecord } from '../plugin.js';
import type { TransformFactory } from './types.js';
import { TransformError } from './types.js';

type Side = 'key' | 'value';
type JsonMap = Record<string, unknown>;

const isMap = (v: unknown): v is JsonMap => v !== null && typeof v === 'object' && !Array.isArray(v);

const requireMap = (record: ConnectRecord, side: Side, smt: string): JsonMap | null => {
  const data = record[side];
  if (data === null || data === undefined) return null;
  if (!isMap(data))
    throw new TransformError(`${smt} requires a map ${side} (schemaless), got ${typeof data}`);
  return data;
};

const withSide = (record: ConnectRecord, side: Side, data: unknown): ConnectRecord => ({
  ...record,
  [side]: data,
});

const sided = (name: string, make: (side: Side) => Omit<TransformFactory, 'class'>): TransformFactory[] =>
  (['Key', 'Value'] as const).map((suffix) => ({
    class: `org.apache.kafka.connect.transforms.${name}$${suffix}`,
    ...make(suffix === 'Key' ? 'key' : 'value'),
  }));

const key = (name: string, documentation: string, fallback?: string): ConfigKey => ({
  name,
  type: 'STRING',
  ...(fallback !== undefined ? { default: fallback } : {}),
  importance: 'MEDIUM',
  documentation,
  group: 'Transform',
});

const insertField = sided('InsertField', (side) => ({
  configKeys: [
    key('topic.field', 'Field name for the record topic', ''),
    key('partition.field', 'Field name for the Kafka partition', ''),
    key('offset.field', 'Field name for the Kafka offset (sink connectors only)', ''),
    key('timestamp.field', 'Field name for the record timestamp', ''),
    key('static.field', 'Field name for a static value', ''),
    key('static.value', 'The static value', ''),
  ],
  create: (config) => (record) => {
    const data = requireMap(record, side, 'InsertField');
    if (data === null) return record; // a tombstone stays a tombstone
    const out: JsonMap = { ...data };
    const field = (name: string): string => config[name] ?? '';
    if (field('topic.field')) out[field('topic.field')] = record.topic;
    if (field('partition.field')) out[field('partition.field')] = record.kafkaPartition ?? null;
    if (field('offset.field')) {
      const offset = (record as Partial<SinkRecord>).kafkaOffset;
      if (offset === undefined) throw new TransformError('InsertField offset.field needs a sink record');
      out[field('offset.field')] = offset;
    }
    if (field('timestamp.field')) out[field('timestamp.field')] = record.timestamp;
    if (field('static.field')) out[field('static.field')] = field('static.value');
    return withSide(record, side, out);
  },
}));

const parseRenames = (spec: string): Map<string, string> => {
  const renames = new Map<string, string>();
  for (const pair of listOf(spec)) {
    const [from, to, ...rest] = pair.split(':');
    if (!from || !to || rest.length > 0) throw new TransformError(`invalid rename mapping: ${pair}`);
    renames.set(from, to);
  }
  return renames;
};

const replaceField = sided('ReplaceField', (side) => ({
  configKeys: [
    key('exclude', 'Fields to exclude', ''),
    key('include', 'Fields to include; if set, only these are kept', ''),
    {
      ...key('renames', 'Field rename mappings, old:new', ''),
      validate: (v) => {
        try {
          parseRenames(v);
          return undefined;
        } catch (e) {
          return (e as Error).message;
        }
      },
    },
  ],
  create: (config) => {
    const exclude = new Set(listOf(config['exclude'] ?? ''));
    const include = new Set(listOf(config['include'] ?? ''));
    const renames = parseRenames(config['renames'] ?? '');
    return (record) => {
      const data = requireMap(record, side, 'ReplaceField');
      if (data === null) return record;
      const out: JsonMap = {};
      for (const [name, value] of Object.entries(data)) {
        if (exclude.has(name) || (include.size > 0 && !include.has(name))) continue;
        out[renames.get(name) ?? name] = value;
      }
      return withSide(record, side, out);
    };
  },
}));

/** MaskField's schemaless replacements: the "empty" value of each type. */
const maskOf = (value: unknown, replacement: string | undefined): unknown => {
  if (replacement !== undefined && replacement !== '') {
    if (typeof value === 'number') {
      const n = Number(replacement);
      if (Number.isNaN(n)) throw new TransformError(`replacement ${replacement} is not a number`);
      return n;
    }
    if (typeof value === 'string') return replacement;
    throw new TransformError(`MaskField replacement is not supported for ${typeof value} fields`);
  }
  if (typeof value === 'string') return '';
  if (typeof value === 'number') return 0;
  if (typeof value === 'boolean') return false;
  if (Array.isArray(value)) return [];
  if (isMap(value)) return {};
  return null;
};

const maskField = sided('MaskField', (side) => ({
  configKeys: [
    { ...key('fields', 'Names of fields to mask'), type: 'LIST' },
    key('replacement', 'Custom value replacement for string and numeric fields', ''),
  ],
  create: (config) => {
    const fields = listOf(config['fields'] ?? '');
    const replacement = config['replacement'];
    return (record) => {
      const data = requireMap(record, side, 'MaskField');
      if (data === null) return record;
      const out: JsonMap = { ...data };
      for (const f of fields) if (f in out) out[f] = maskOf(out[f], replacement);
      return withSide(record, side, out);
    };
  },
}));

const CAST_TYPES = ['int8', 'int16', 'int32', 'int64', 'float32', 'float64', 'boolean', 'string'] as const;
type CastType = (typeof CAST_TYPES)[number];
const INT_BITS: Partial<Record<CastType, number>> = { int8: 8, int16: 16, int32: 32 };

const castValue = (value: unknown, type: CastType): unknown => {
  if (value === null || value === undefined) return null;
  if (type === 'string') return typeof value === 'string' ? value : JSON.stringify(value);
  if (type === 'boolean') {
    if (typeof value === 'boolean') return value;
    if (typeof value === 'number') return value !== 0;
    if (value === 'true' || value === 'false') return value === 'true';
    throw new TransformError(`cannot cast ${JSON.stringify(value)} to boolean`);
  }
  const n = typeof value === 'boolean' ? (value ? 1 : 0) : typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || Number.isNaN(n))
    throw new TransformError(`cannot cast ${JSON.stringify(value)} to ${type}`);
  if (type === 'float32') return Math.fround(n);
  if (type === 'float64') return n;
  const t = Math.trunc(n);
  const bits = INT_BITS[type];
  // Java's narrowing conversion wraps, as Cast does on a Number.
  if (bits === undefined) return t;
  return (t << (32 - bits)) >> (32 - bits);
};

const parseCastSpec = (spec: string): { whole?: CastType; fields: Map<string, CastType> } => {
  const fields = new Map<string, CastType>();
  const parts = listOf(spec);
  const isType = (t: string): t is CastType => (CAST_TYPES as readonly string[]).includes(t);
  if (parts.length === 1 && !parts[0]!.includes(':')) {
    if (!isType(parts[0]!)) throw new TransformError(`unknown cast type ${parts[0]}`);
    return { whole: parts[0], fields };
  }
  for (const part of parts) {
    const [field, type] = part.split(':');
    if (!field || !type || !isType(type)) throw new TransformError(`invalid cast spec: ${part}`);
    fields.set(field, type);
  }
  return { fields };
};

const cast = sided('Cast', (side) => ({
  configKeys: [
    {
      ...key('spec', 'field:type pairs, or one type for the whole key/value'),
      type: 'LIST',
      validate: (v) => {
        try {
          parseCastSpec(v);
          return undefined;
        } catch (e) {
          return (e as Error).message;
        }
      },
    },
  ],
  create: (config) => {
    const spec = parseCastSpec(config['spec'] ?? '');
    return (record) => {
      if (spec.whole) return withSide(record, side, castValue(record[side], spec.whole));
      const data = requireMap(record, side, 'Cast');
      if (data === null) return record;
      const out: JsonMap = { ...data };
      for (const [f, type] of spec.fields) if (f in out) out[f] = castValue(out[f], type);
      return withSide(record, side, out);
    };
  },
}));

const valueToKey: TransformFactory = {
  class: 'org.apache.kafka.connect.transforms.ValueToKey',
  configKeys: [{ ...key('fields', 'Field names on the value to extract as the record key'), type: 'LIST' }],
  create: (config) => {
    const fields = listOf(config['fields'] ?? '');
    return (record) => {
      const data = requireMap(record, 'value', 'ValueToKey');
      if (data === null) throw new TransformError('ValueToKey needs a value; got a tombstone');
      const k: JsonMap = {};
      for (const f of fields) {
        if (!(f in data)) throw new TransformError(`ValueToKey: field ${f} is not in the value`);
        k[f] = data[f];
      }
      return { ...record, key: k };
    };
  },
};

export const FIELD_TRANSFORMS: readonly TransformFactory[] = [
  ...insertField,
  ...replaceField,
  ...maskField,
  ...cast,
  valueToKey,
];
