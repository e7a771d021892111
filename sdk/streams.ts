/**
 * Interactive queries of a Streams application's state stores (API.md "Streams"), after Kafka
 * Streams' ReadOnlyKeyValueStore.get/range/all, ReadOnlyWindowStore.fetch(key, from, to) and
 * ReadOnlySessionStore.fetch(key). Keys are given as the store's key serde writes them: text for a
 * String serde, JSON text for JSON, base64 for bytes.
 */
import { SluiceError } from './errors.js';
import type { Retrier } from './retry.js';
import type { Transport } from './transport.js';
import { path } from './transport.js';
import type { StoreKeyValue, StoreRange, StoreWindows, StreamsApplication } from './types.js';

export interface StoreRangeOptions {
  /** Inclusive lower bound (absent: from the first key). */
  from?: string;
  /** Inclusive upper bound (absent: to the last key). */
  to?: string;
  /** Entries per page (server default 1000, at most 10000). */
  limit?: number;
}

export class StreamsQueries {
  constructor(
    private readonly transport: Transport,
    private readonly retry: Retrier,
    readonly applicationId: string,
  ) {}

  /** The application's state stores and its tasks, with the member running each (kafka-streams-groups --describe). */
  describe(): Promise<StreamsApplication> {
    return this.read<StreamsApplication>(path`/v1/streams/${this.applicationId}`);
  }

  /** ReadOnlyKeyValueStore.get: the key's committed value, or undefined when the store lacks it. */
  async get(store: string, key: string): Promise<StoreKeyValue | undefined> {
    const answer = await this.query(store, key);
    if (answer !== undefined && 'windows' in answer)
      throw new SluiceError(
        'INVALID_REQUEST',
        `store ${store} is a window or session store: read its windows with windows()`,
        { retriable: false },
      );
    return answer;
  }

  /**
   * The key route as it answers: a key-value store's value, or a window or session store's windows
   * of the key; undefined when a key-value store lacks the key (for tools that do not know the kind).
   */
  async query(store: string, key: string): Promise<StoreKeyValue | StoreWindows | undefined> {
    try {
      return await this.read<StoreKeyValue | StoreWindows>(this.keyPath(store, key));
    } catch (error) {
      if (error instanceof SluiceError && error.code === 'NOT_FOUND') return undefined;
      throw error;
    }
  }

  /** ReadOnlyKeyValueStore.range(from, to) / all(): one page; pass `next` as `from` for the next. */
  range(store: string, { from, to, limit }: StoreRangeOptions = {}): Promise<StoreRange> {
    return this.read<StoreRange>(path`/v1/streams/${this.applicationId}/stores/${store}/keys`, {
      from,
      to,
      limit,
    });
  }

  /**
   * ReadOnlyWindowStore.fetch(key, from, to): windows starting in [from, to]; for a session store the
   * sessions ending at or after `from` and starting at or before `to`. Both bounds default to open.
   */
  windows(
    store: string,
    key: string,
    { from, to }: { from?: number; to?: number } = {},
  ): Promise<StoreWindows> {
    // windowStart is always sent, so a key-value store answers 400 instead of a value.
    return this.read<StoreWindows>(this.keyPath(store, key), { windowStart: from ?? 0, windowEnd: to });
  }

  private keyPath(store: string, key: string): string {
    return path`/v1/streams/${this.applicationId}/stores/${store}/keys/${key}`;
  }

  private read<T>(p: string, query?: Record<string, string | number | undefined>): Promise<T> {
    return this.retry(() => this.transport.json<T>({ method: 'GET', path: p, ...(query ? { query } : {}) }));
  }
}
