/**
 * The port a Streams application keeps its state behind: items keyed by (task, store, key) of one
 * application. Keys are strings whose order is the stores' order (hex of serialized key bytes, then
 * fixed-width times), so one sorted range read serves key ranges, a key's windows and its sessions.
 */
export interface StoredEntry {
  key: string;
  value: Uint8Array;
  /** Event time of the value (Kafka's timestamped stores). */
  timestamp: number;
  /** Event time after which the entry is of no use (windows); the DynamoDB adapter sets its TTL from it. */
  expiresAtMs?: number;
}

/** One change of a commit: `entry` null deletes the key. */
export interface StateWrite {
  store: string;
  key: string;
  entry: StoredEntry | null;
}

export interface StateBackend {
  get(task: string, store: string, key: string): Promise<StoredEntry | undefined>;
  /** Entries with `from` ≤ key < `to`, in key order. */
  range(task: string, store: string, from: string, to: string): Promise<StoredEntry[]>;
  /** Applies a task's changes of one commit. */
  write(task: string, writes: StateWrite[]): Promise<void>;
}

/** Upper bound for ranges and prefixes: above every character keys use (hex digits, '|', digits). */
export const KEY_END = '~';
