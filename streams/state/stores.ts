/**
 * Typed stores over a task's state: key–value, window (key, window start) and session
 * (key, start, end). Keys are encoded so that the backend's string order is Kafka's store order
 * within a key: hex of the serialized key bytes, then fixed-width decimal times.
 */
import type { Serde } from '../serdes.js';
import type { Window } from '../windows.js';
import { KEY_END } from './backend.js';
import type { TaskStores } from './task-stores.js';

export interface ValueAndTimestamp<V> {
  value: V;
  timestamp: number;
}

const TIME_WIDTH = 15;
/** Reserved key (sorts after every encoded key) where a processor keeps its observed stream time. */
const STREAM_TIME_KEY = `${KEY_END}stream-time`;

export const encodeKey = <K>(serde: Serde<K>, key: K): string =>
  Buffer.from(serde.serialize(key)).toString('hex');
export const decodeKey = <K>(serde: Serde<K>, hex: string): K =>
  serde.deserialize(new Uint8Array(Buffer.from(hex, 'hex')));
export const encodeTime = (ms: number): string => String(ms).padStart(TIME_WIDTH, '0');

export class KeyValueStore<K, V> {
  constructor(
    protected readonly stores: TaskStores,
    readonly name: string,
    protected readonly keySerde: Serde<K>,
    protected readonly valueSerde: Serde<V>,
  ) {}

  async get(key: K): Promise<ValueAndTimestamp<V> | null> {
    return this.read(await this.stores.get(this.name, encodeKey(this.keySerde, key)));
  }

  put(key: K, value: V | null, timestamp: number): void {
    const k = encodeKey(this.keySerde, key);
    this.stores.put(
      this.name,
      k,
      value === null ? null : { key: k, value: this.valueSerde.serialize(value), timestamp },
    );
  }

  /** Every entry in key-byte order. */
  async all(): Promise<{ key: K; value: V; timestamp: number }[]> {
    const entries = await this.stores.range(this.name, '', KEY_END);
    return entries.map((e) => ({
      key: decodeKey(this.keySerde, e.key),
      value: this.valueSerde.deserialize(e.value),
      timestamp: e.timestamp,
    }));
  }

  protected read(entry: { value: Uint8Array; timestamp: number } | null): ValueAndTimestamp<V> | null {
    return entry === null
      ? null
      : { value: this.valueSerde.deserialize(entry.value), timestamp: entry.timestamp };
  }
}

export class WindowStore<K, V> extends KeyValueStore<K, V> {
  async fetchWindow(key: K, start: number): Promise<ValueAndTimestamp<V> | null> {
    return this.read(await this.stores.get(this.name, windowKey(encodeKey(this.keySerde, key), start)));
  }

  putWindow(key: K, window: Window, value: V | null, timestamp: number, retainUntilMs: number): void {
    const k = windowKey(encodeKey(this.keySerde, key), window.start);
    this.stores.put(
      this.name,
      k,
      value === null
        ? null
        : { key: k, value: this.valueSerde.serialize(value), timestamp, expiresAtMs: retainUntilMs },
    );
  }

  /** A key's entries with start in [from, to], by start time. */
  async fetchRange(
    key: K,
    from: number,
    to: number,
  ): Promise<{ start: number; value: V; timestamp: number }[]> {
    const prefix = encodeKey(this.keySerde, key);
    const entries = await this.stores.range(
      this.name,
      windowKey(prefix, Math.max(0, from)),
      windowKey(prefix, to + 1),
    );
    return entries.map((e) => ({
      start: Number(e.key.slice(prefix.length + 1, prefix.length + 1 + TIME_WIDTH)),
      value: this.valueSerde.deserialize(e.value),
      timestamp: e.timestamp,
    }));
  }
}

/**
 * The window store of a stream–stream join: several records of one key may share a timestamp, so
 * each entry's key carries a sequence number after the time (Kafka's retainDuplicates).
 */
export class JoinWindowStore<K, V> extends KeyValueStore<K, V> {
  async add(key: K, value: V, timestamp: number, retainUntilMs: number): Promise<void> {
    const prefix = windowKey(encodeKey(this.keySerde, key), timestamp);
    const sequenceKey = `${KEY_END}sequence`;
    const last = await this.stores.get(this.name, sequenceKey);
    const sequence = last === null ? 0 : Number(new TextDecoder().decode(last.value)) + 1;
    this.stores.put(this.name, sequenceKey, {
      key: sequenceKey,
      value: new TextEncoder().encode(String(sequence)),
      timestamp,
    });
    const k = `${prefix}|${encodeTime(sequence)}`;
    this.stores.put(this.name, k, {
      key: k,
      value: this.valueSerde.serialize(value),
      timestamp,
      expiresAtMs: retainUntilMs,
    });
  }

  /** A key's records with timestamps in [from, to], in time then arrival order. */
  async fetchRange(key: K, from: number, to: number): Promise<ValueAndTimestamp<V>[]> {
    const prefix = encodeKey(this.keySerde, key);
    const entries = await this.stores.range(
      this.name,
      windowKey(prefix, Math.max(0, from)),
      windowKey(prefix, to + 1),
    );
    return entries.map((e) => ({ value: this.valueSerde.deserialize(e.value), timestamp: e.timestamp }));
  }
}

export interface Session<V> {
  window: Window;
  value: V;
}

export class SessionStore<K, V> extends KeyValueStore<K, V> {
  /** A key's sessions that end at or after `earliestEnd` and start at or before `latestStart`. */
  async findSessions(key: K, earliestEnd: number, latestStart: number): Promise<Session<V>[]> {
    const prefix = encodeKey(this.keySerde, key);
    const entries = await this.stores.range(this.name, `${prefix}|`, `${prefix}|${KEY_END}`);
    return entries
      .map((e) => {
        const [start, end] = e.key
          .slice(prefix.length + 1)
          .split('|')
          .map(Number) as [number, number];
        return { window: { start, end }, value: this.valueSerde.deserialize(e.value) };
      })
      .filter((s) => s.window.end >= earliestEnd && s.window.start <= latestStart);
  }

  putSession(key: K, window: Window, value: V | null, retainUntilMs: number): void {
    const k = `${encodeKey(this.keySerde, key)}|${encodeTime(window.start)}|${encodeTime(window.end)}`;
    this.stores.put(
      this.name,
      k,
      value === null
        ? null
        : {
            key: k,
            value: this.valueSerde.serialize(value),
            timestamp: window.end,
            expiresAtMs: retainUntilMs,
          },
    );
  }
}

/**
 * A processor's observed stream time (the largest timestamp it has seen), kept in its store so that a
 * task that moves or restarts does not accept records its predecessor had already judged late.
 */
export class StreamTime {
  constructor(
    private readonly stores: TaskStores,
    private readonly store: string,
  ) {}

  async get(): Promise<number> {
    const entry = await this.stores.get(this.store, STREAM_TIME_KEY);
    return entry === null ? -1 : entry.timestamp;
  }

  async observe(timestamp: number): Promise<number> {
    const before = await this.get();
    if (timestamp <= before) return before;
    this.stores.put(this.store, STREAM_TIME_KEY, {
      key: STREAM_TIME_KEY,
      value: new Uint8Array(0),
      timestamp,
    });
    return timestamp;
  }
}

const windowKey = (prefix: string, start: number): string => `${prefix}|${encodeTime(start)}`;
