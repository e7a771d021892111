/** The SDK's own shapes beside the API's bodies (lib/wire/types.ts, re-exported here). */
export type * from '../lib/wire/types.js';

export type Acks = 'all' | '1';

/** Bytes, or text sent as UTF-8. */
export type Bytes = Uint8Array | string;

/** A record to produce, after kafkajs's message shape. */
export interface Message {
  key?: Bytes | null;
  value: Bytes | null;
  headers?: Record<string, Bytes | null> | { key: string; value: Bytes | null }[];
  /** Pin a partition; otherwise the server's Kafka-compatible partitioner decides. */
  partition?: number;
  /** ms since the epoch (default: the server's time). */
  timestamp?: number;
}

export interface ConsumedRecord {
  topic: string;
  partition: number;
  offset: number;
  timestamp: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: { key: string; value: Uint8Array | null }[];
}
