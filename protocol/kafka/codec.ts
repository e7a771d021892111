/**
 * Reads and writes any Kafka message from its schema table (schema.ts): fixed-width integers
 * big-endian, strings/bytes/arrays with int16/int32 lengths, or in flexible versions compact
 * (unsigned varint length + 1, 0 = null) followed by tagged fields. Decoded messages are plain
 * objects keyed by the field names; absent fields take their defaults.
 */
import type { Field, FieldType, Primitive } from './schema.js';
import { inVersions } from './schema.js';

/** A message that does not parse: the connection that sent it is closed. */
export class KafkaProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KafkaProtocolError';
  }
}

export type Message = Record<string, unknown>;

const utf8 = new TextDecoder('utf-8', { fatal: true });
const utf8Encoder = new TextEncoder();
export const ZERO_UUID = '00000000000000000000000000000000';

export class Reader {
  private pos: number;
  private readonly view: DataView;
  constructor(
    private readonly buf: Uint8Array,
    start = 0,
    private readonly end = buf.length,
  ) {
    this.pos = start;
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  get offset(): number {
    return this.pos;
  }
  get remaining(): number {
    return this.end - this.pos;
  }

  private need(n: number): number {
    if (n < 0 || this.pos + n > this.end)
      throw new KafkaProtocolError(
        `truncated message: ${n} bytes wanted at ${this.pos}, ${this.end - this.pos} left`,
      );
    const at = this.pos;
    this.pos += n;
    return at;
  }

  int8(): number {
    return this.view.getInt8(this.need(1));
  }
  int16(): number {
    return this.view.getInt16(this.need(2));
  }
  uint16(): number {
    return this.view.getUint16(this.need(2));
  }
  int32(): number {
    return this.view.getInt32(this.need(4));
  }
  int64(): number {
    return Number(this.view.getBigInt64(this.need(8)));
  }
  float64(): number {
    return this.view.getFloat64(this.need(8));
  }
  bool(): boolean {
    return this.view.getUint8(this.need(1)) !== 0;
  }
  uuid(): string {
    return Buffer.from(this.bytesOf(16)).toString('hex');
  }
  unsignedVarint(): number {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const b = this.view.getUint8(this.need(1));
      value += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) {
        if (value > 0xffffffff) throw new KafkaProtocolError('unsigned varint out of range');
        return value;
      }
    }
    throw new KafkaProtocolError('unsigned varint longer than 5 bytes');
  }
  /** `n` bytes as a view into the frame (no copy). */
  bytesOf(n: number): Uint8Array {
    const at = this.need(n);
    return this.buf.subarray(at, at + n);
  }
  skip(n: number): void {
    this.need(n);
  }
  /** A length: int16/int32, or in compact form unsigned varint − 1. −1 is null. */
  length(compact: boolean, short: boolean): number {
    const n = compact ? this.unsignedVarint() - 1 : short ? this.int16() : this.int32();
    if (n < -1) throw new KafkaProtocolError(`negative length ${n}`);
    // A length can never exceed what is left: refuse before allocating anything for it.
    if (n > this.remaining)
      throw new KafkaProtocolError(`length ${n} exceeds the ${this.remaining} bytes left`);
    return n;
  }
  string(compact: boolean): string | null {
    const n = this.length(compact, true);
    if (n < 0) return null;
    try {
      return utf8.decode(this.bytesOf(n));
    } catch {
      throw new KafkaProtocolError('string is not valid UTF-8');
    }
  }
}

export class Writer {
  private buf: Uint8Array;
  private view: DataView;
  private pos = 0;
  constructor(initial = 256) {
    this.buf = new Uint8Array(initial);
    this.view = new DataView(this.buf.buffer);
  }
  private room(n: number): number {
    if (this.pos + n > this.buf.length) {
      const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
      next.set(this.buf.subarray(0, this.pos));
      this.buf = next;
      this.view = new DataView(next.buffer);
    }
    const at = this.pos;
    this.pos += n;
    return at;
  }
  get length(): number {
    return this.pos;
  }
  int8(v: number): void {
    const at = this.room(1);
    this.view.setInt8(at, v);
  }
  int16(v: number): void {
    const at = this.room(2);
    this.view.setInt16(at, v);
  }
  uint16(v: number): void {
    const at = this.room(2);
    this.view.setUint16(at, v);
  }
  int32(v: number): void {
    const at = this.room(4);
    this.view.setInt32(at, v);
  }
  int64(v: number): void {
    const at = this.room(8);
    this.view.setBigInt64(at, BigInt(v));
  }
  float64(v: number): void {
    const at = this.room(8);
    this.view.setFloat64(at, v);
  }
  bool(v: boolean): void {
    const at = this.room(1);
    this.view.setUint8(at, v ? 1 : 0);
  }
  uuid(v: string): void {
    if (!/^[0-9a-f]{32}$/.test(v)) throw new Error(`uuid must be 32 hex digits: ${v}`);
    this.raw(Buffer.from(v, 'hex'));
  }
  unsignedVarint(v: number): void {
    let value = v;
    while (value >= 0x80) {
      const at = this.room(1);
      this.view.setUint8(at, (value & 0x7f) | 0x80);
      value = Math.floor(value / 128);
    }
    const at = this.room(1);
    this.view.setUint8(at, value);
  }
  raw(bytes: Uint8Array): void {
    const at = this.room(bytes.length); // may replace this.buf: take the position first
    this.buf.set(bytes, at);
  }
  length_(n: number, compact: boolean, short: boolean): void {
    if (compact) this.unsignedVarint(n + 1);
    else if (short) this.int16(n);
    else this.int32(n);
  }
  string(v: string | null, compact: boolean): void {
    if (v === null) return this.length_(-1, compact, true);
    const bytes = utf8Encoder.encode(v);
    this.length_(bytes.length, compact, true);
    this.raw(bytes);
  }
  /** Reserves an int32 at the current position, for a size known later. */
  reserveInt32(): number {
    return this.room(4);
  }
  setInt32(at: number, v: number): void {
    this.view.setInt32(at, v);
  }
  finish(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}

const isArray = (t: FieldType): boolean =>
  typeof t === 'object' && ('array' in t ? t.array !== undefined : false);

function defaultOf(field: Field, version: number): unknown {
  if (field.default !== undefined) return field.default;
  if (inVersions(version, field.nullable)) return null;
  const t = field.type;
  if (isArray(t)) return [];
  if (typeof t === 'object') return fillDefaults((t as { struct: Field[] }).struct, version);
  switch (t) {
    case 'bool':
      return false;
    case 'string':
      return '';
    case 'uuid':
      return ZERO_UUID;
    case 'bytes':
    case 'records':
      return new Uint8Array(0);
    default:
      return 0;
  }
}

function fillDefaults(fields: Field[], version: number): Message {
  const out: Message = {};
  for (const field of fields) out[field.name] = defaultOf(field, version);
  return out;
}

function readPrimitive(r: Reader, t: Primitive, flexible: boolean, nullable: boolean, name: string): unknown {
  switch (t) {
    case 'int8':
      return r.int8();
    case 'int16':
      return r.int16();
    case 'uint16':
      return r.uint16();
    case 'int32':
      return r.int32();
    case 'int64':
      return r.int64();
    case 'float64':
      return r.float64();
    case 'bool':
      return r.bool();
    case 'uuid':
      return r.uuid();
    case 'string': {
      const s = r.string(flexible);
      if (s === null && !nullable) throw new KafkaProtocolError(`${name} is null but not nullable`);
      return s;
    }
    case 'bytes':
    case 'records': {
      const n = r.length(flexible, false);
      if (n < 0) {
        if (!nullable) throw new KafkaProtocolError(`${name} is null but not nullable`);
        return null;
      }
      return r.bytesOf(n);
    }
  }
}

function readType(
  r: Reader,
  t: FieldType,
  version: number,
  flexible: boolean,
  nullable: boolean,
  name: string,
): unknown {
  if (typeof t === 'string') return readPrimitive(r, t, flexible, nullable, name);
  if (isArray(t)) {
    const n = r.length(flexible, false);
    if (n < 0) {
      if (!nullable) throw new KafkaProtocolError(`${name} is null but not nullable`);
      return null;
    }
    const items: unknown[] = [];
    for (let i = 0; i < n; i++) {
      items.push(
        'struct' in t
          ? readFields(r, t.struct, version, flexible)
          : readPrimitive(r, t.array as Primitive, flexible, false, name),
      );
    }
    return items;
  }
  // A nullable struct (ConsumerGroupHeartbeat's assignment) starts with a presence byte: -1 is null.
  if (nullable && r.int8() < 0) return null;
  return readFields(r, (t as { struct: Field[] }).struct, version, flexible);
}

/** Reads a struct's fields at `version`, then its tagged fields when flexible. */
export function readFields(r: Reader, fields: Field[], version: number, flexible: boolean): Message {
  const out: Message = {};
  for (const field of fields) {
    if (field.tag !== undefined || !inVersions(version, field.versions)) {
      out[field.name] = defaultOf(field, version);
      continue;
    }
    out[field.name] = readType(
      r,
      field.type,
      version,
      flexible,
      inVersions(version, field.nullable),
      field.name,
    );
  }
  if (flexible) {
    const count = r.unsignedVarint();
    let lastTag = -1;
    for (let i = 0; i < count; i++) {
      const tag = r.unsignedVarint();
      if (tag <= lastTag) throw new KafkaProtocolError('tagged fields out of order');
      lastTag = tag;
      const size = r.unsignedVarint();
      if (size > r.remaining) throw new KafkaProtocolError(`tagged field ${tag} claims ${size} bytes`);
      const field = fields.find((x) => x.tag === tag && inVersions(version, x.taggedVersions));
      if (!field) {
        r.skip(size);
        continue;
      }
      const start = r.offset;
      const sub = new Reader(r.bytesOf(size));
      out[field.name] = readType(
        sub,
        field.type,
        version,
        true,
        inVersions(version, field.nullable),
        field.name,
      );
      if (sub.remaining !== 0 || r.offset !== start + size)
        throw new KafkaProtocolError(`tagged field ${field.name} has trailing bytes`);
    }
  }
  return out;
}

function writePrimitive(w: Writer, t: Primitive, value: unknown, flexible: boolean, name: string): void {
  switch (t) {
    case 'int8':
      return w.int8(Number(value));
    case 'int16':
      return w.int16(Number(value));
    case 'uint16':
      return w.uint16(Number(value));
    case 'int32':
      return w.int32(Number(value));
    case 'int64':
      return w.int64(Number(value));
    case 'float64':
      return w.float64(Number(value));
    case 'bool':
      return w.bool(Boolean(value));
    case 'uuid':
      return w.uuid(String(value));
    case 'string':
      if (value !== null && typeof value !== 'string') throw new Error(`${name} must be a string`);
      return w.string(value, flexible);
    case 'bytes':
    case 'records': {
      if (value === null) return w.length_(-1, flexible, false);
      if (!(value instanceof Uint8Array)) throw new Error(`${name} must be bytes`);
      w.length_(value.length, flexible, false);
      return w.raw(value);
    }
  }
}

function writeType(
  w: Writer,
  t: FieldType,
  value: unknown,
  version: number,
  flexible: boolean,
  name: string,
): void {
  if (typeof t === 'string') return writePrimitive(w, t, value, flexible, name);
  if (isArray(t)) {
    if (value === null) return w.length_(-1, flexible, false);
    if (!Array.isArray(value)) throw new Error(`${name} must be an array`);
    w.length_(value.length, flexible, false);
    for (const item of value) {
      if ('struct' in t) writeFields(w, t.struct, (item ?? {}) as Message, version, flexible);
      else writePrimitive(w, t.array as Primitive, item, flexible, name);
    }
    return;
  }
  writeFields(w, (t as { struct: Field[] }).struct, (value ?? {}) as Message, version, flexible);
}

const isDefault = (field: Field, value: unknown, version: number): boolean => {
  const d = defaultOf(field, version);
  if (value === undefined || value === d) return true;
  if (Array.isArray(value) && Array.isArray(d)) return value.length === 0 && d.length === 0;
  return false;
};

/** Writes a struct's fields at `version`, then its tagged fields (those not at their default) when flexible. */
export function writeFields(
  w: Writer,
  fields: Field[],
  message: Message,
  version: number,
  flexible: boolean,
): void {
  for (const field of fields) {
    if (field.tag !== undefined || !inVersions(version, field.versions)) continue;
    const value = message[field.name];
    if (typeof field.type === 'object' && !isArray(field.type) && inVersions(version, field.nullable)) {
      w.int8(value === null || value === undefined ? -1 : 1);
      if (value === null || value === undefined) continue;
    }
    writeType(
      w,
      field.type,
      value === undefined ? defaultOf(field, version) : value,
      version,
      flexible,
      field.name,
    );
  }
  if (!flexible) return;
  const present = fields
    .filter(
      (x) =>
        x.tag !== undefined &&
        inVersions(version, x.taggedVersions) &&
        !isDefault(x, message[x.name], version),
    )
    .sort((a, b) => a.tag! - b.tag!);
  w.unsignedVarint(present.length);
  for (const field of present) {
    const sub = new Writer(64);
    writeType(sub, field.type, message[field.name], version, true, field.name);
    const bytes = sub.finish();
    w.unsignedVarint(field.tag!);
    w.unsignedVarint(bytes.length);
    w.raw(bytes);
  }
}

/** Every field of `fields` at its default for `version` (a message to fill in). */
export const emptyMessage = (fields: Field[], version: number): Message => fillDefaults(fields, version);
