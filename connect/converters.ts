/**
 * Kafka Connect's converters between Kafka bytes and the runtime's values: StringConverter (text),
 * JsonConverter without schemas (any JSON value; `schemas.enable=true` envelopes are unwrapped on
 * read and not written), and ByteArrayConverter (bytes as they are).
 */
export const STRING_CONVERTER = 'org.apache.kafka.connect.storage.StringConverter';
export const JSON_CONVERTER = 'org.apache.kafka.connect.json.JsonConverter';
export const BYTES_CONVERTER = 'org.apache.kafka.connect.converters.ByteArrayConverter';
export const CONVERTERS = [STRING_CONVERTER, JSON_CONVERTER, BYTES_CONVERTER] as const;

export interface Converter {
  toConnect(bytes: Uint8Array | null): unknown;
  fromConnect(value: unknown): Uint8Array | null;
}

/** Data a converter cannot read or write: a per-record failure under errors.tolerance. */
export class ConversionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConversionError';
  }
}

const UTF8 = new TextEncoder();
const FROM_UTF8 = new TextDecoder('utf-8', { fatal: true });

const text = (bytes: Uint8Array): string => {
  try {
    return FROM_UTF8.decode(bytes);
  } catch {
    throw new ConversionError('data is not valid UTF-8');
  }
};

const isEnvelope = (v: unknown): v is { schema: unknown; payload: unknown } =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && 'schema' in v && 'payload' in v;

export const createConverter = (className: string): Converter => {
  switch (className) {
    case STRING_CONVERTER:
      return {
        toConnect: (bytes) => (bytes === null ? null : text(bytes)),
        fromConnect: (value) =>
          value === null || value === undefined
            ? null
            : UTF8.encode(typeof value === 'string' ? value : JSON.stringify(value)),
      };
    case JSON_CONVERTER:
      return {
        toConnect: (bytes) => {
          if (bytes === null) return null;
          let parsed: unknown;
          try {
            parsed = JSON.parse(text(bytes));
          } catch (e) {
            if (e instanceof ConversionError) throw e;
            throw new ConversionError(
              `Converting byte[] to Kafka Connect data failed: ${(e as Error).message}`,
            );
          }
          return isEnvelope(parsed) ? parsed.payload : parsed;
        },
        fromConnect: (value) =>
          value === null || value === undefined
            ? null
            : UTF8.encode(
                JSON.stringify(value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value),
              ),
      };
    case BYTES_CONVERTER:
      return {
        toConnect: (bytes) => bytes,
        fromConnect: (value) => {
          if (value === null || value === undefined) return null;
          if (value instanceof Uint8Array) return value;
          if (typeof value === 'string') return UTF8.encode(value);
          throw new ConversionError('ByteArrayConverter needs bytes');
        },
      };
    default:
      throw new ConversionError(`unknown converter ${className}`);
  }
};
