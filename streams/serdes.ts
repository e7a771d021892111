/**
 * Serdes after Kafka's `Serdes`: a pair of functions between values and record bytes. `null` is a
 * tombstone on every serde and is never passed to the codec.
 */
import { SluiceError } from '../protocol/errors.js';

export interface Serde<T> {
  serialize(value: T): Uint8Array;
  deserialize(bytes: Uint8Array): T;
}

const UTF8_ENCODER = new TextEncoder();
const UTF8_DECODER = new TextDecoder('utf-8', { fatal: true });

const string: Serde<string> = {
  serialize: (value) => {
    if (typeof value !== 'string') throw serdeError(`the String serde cannot serialize a ${typeof value}`);
    return UTF8_ENCODER.encode(value);
  },
  deserialize: (bytes) => {
    try {
      return UTF8_DECODER.decode(bytes);
    } catch (cause) {
      throw serdeError('the String serde read bytes that are not UTF-8', cause);
    }
  },
};

const json: Serde<unknown> = {
  serialize: (value) => {
    const text = JSON.stringify(value);
    if (text === undefined) throw serdeError(`the JSON serde cannot serialize a ${typeof value}`);
    return UTF8_ENCODER.encode(text);
  },
  deserialize: (bytes) => {
    try {
      return JSON.parse(UTF8_DECODER.decode(bytes)) as unknown;
    } catch (cause) {
      throw serdeError('the JSON serde read bytes that are not UTF-8 JSON', cause);
    }
  },
};

const bytes: Serde<Uint8Array> = {
  serialize: (value) => {
    if (!(value instanceof Uint8Array))
      throw serdeError(`the Bytes serde cannot serialize a ${typeof value}`);
    return value;
  },
  deserialize: (b) => b,
};

export const Serdes = {
  String: (): Serde<string> => string,
  /** JSON text in UTF-8; any JSON value. */
  JSON: <T = unknown>(): Serde<T> => json as Serde<T>,
  Bytes: (): Serde<Uint8Array> => bytes,
};

/** Serializes a nullable value: null stays null (a tombstone). */
export const serializeNullable = <T>(serde: Serde<T>, value: T | null): Uint8Array | null =>
  value === null ? null : serde.serialize(value);

export const deserializeNullable = <T>(serde: Serde<T>, data: Uint8Array | null): T | null =>
  data === null ? null : serde.deserialize(data);

const serdeError = (message: string, cause?: unknown): SluiceError =>
  new SluiceError('INVALID_RECORD', message, cause === undefined ? {} : { cause });
