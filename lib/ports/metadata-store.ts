/**
 * The metadata store: a small, strongly consistent key-value table (DynamoDB's data model, cut down
 * to what Sluice needs). Every mutation that orders or fences takes a condition and fails with a
 * typed ConditionFailedError carrying the current item, so callers never need a second read.
 */
import { SluiceError } from '../../protocol/errors.js';

export type AttributeValue =
  string | number | boolean | null | Uint8Array | AttributeValue[] | { [name: string]: AttributeValue };

export interface ItemKey {
  pk: string;
  sk: string;
}

export type Item = ItemKey & { [name: string]: AttributeValue };

/** A document path: `'nextOffset'` or `['producers', '42', 'seq']` for nested map members. */
export type Path = string | readonly string[];

export type Comparison = '=' | '<>' | '<' | '<=' | '>' | '>=';

export type Condition =
  | { exists: Path }
  | { notExists: Path }
  | { path: Path; op: Comparison; value: AttributeValue }
  /** Compares two attributes of the same item, both read before the write. */
  | { path: Path; op: Comparison; otherPath: Path }
  /** True when the list (or string) at path contains value. */
  | { path: Path; contains: AttributeValue }
  | { and: readonly Condition[] }
  | { or: readonly Condition[] }
  | { not: Condition };

/**
 * Update actions. Every operand is evaluated against the item *before* the update (DynamoDB's
 * semantics), which is what lets one update both read and advance a counter atomically.
 */
export type UpdateAction =
  | { set: Path; value: AttributeValue }
  /** Sets path to value only when path is absent. */
  | { set: Path; ifNotExists: AttributeValue }
  /**
   * Sets path to the pre-update value of another attribute; with `keepExisting`, only when path is
   * absent (`if_not_exists(path, other)`).
   */
  | { set: Path; copyOf: Path; keepExisting?: boolean }
  /**
   * Sets path to (pre-update value of `from`, default path) + add. The operand must exist unless
   * `initial` is given: then an absent operand counts as `initial` (`if_not_exists(from, :initial) + :add`).
   */
  | { set: Path; add: number; from?: Path; initial?: number }
  /** Sets path to list_append(path, values); the list must exist. */
  | { set: Path; append: readonly AttributeValue[] }
  | { remove: Path }
  /** Removes the first `count` elements of the list at path. */
  | { removeHead: Path; count: number };

export type ReturnValues = 'none' | 'allOld' | 'allNew';

export interface WriteOptions {
  condition?: Condition;
}

export interface UpdateOptions extends WriteOptions {
  returnValues?: ReturnValues;
}

export type KeyCondition =
  | { beginsWith: string }
  | { between: readonly [string, string] }
  | { gte: string }
  | { lte: string }
  | { gt: string }
  | { lt: string };

export interface QueryInput {
  pk: string;
  sk?: KeyCondition;
  /** Descending sort-key order when true. */
  reverse?: boolean;
  limit?: number;
  /** Opaque cursor from a previous page. */
  cursor?: string;
  consistent?: boolean;
}

export interface QueryPage {
  items: Item[];
  /** Present when more items may follow. */
  cursor?: string;
}

export type TransactOp =
  | { put: Item; condition?: Condition }
  | { update: ItemKey; actions: readonly UpdateAction[]; condition?: Condition }
  | { delete: ItemKey; condition?: Condition }
  | { check: ItemKey; condition: Condition };

export interface MetadataStore {
  get(key: ItemKey, options?: { consistent?: boolean }): Promise<Item | undefined>;
  put(item: Item, options?: WriteOptions): Promise<void>;
  update(key: ItemKey, actions: readonly UpdateAction[], options?: UpdateOptions): Promise<Item | undefined>;
  delete(key: ItemKey, options?: WriteOptions): Promise<void>;
  query(input: QueryInput): Promise<QueryPage>;
  /** All-or-nothing; fails with TransactionCanceledError. At most 100 ops. */
  transact(ops: readonly TransactOp[]): Promise<void>;
  /** Unconditional puts and deletes in as few requests as the backend allows; not atomic. */
  batchWrite(writes: { puts?: readonly Item[]; deletes?: readonly ItemKey[] }): Promise<void>;
}

/** A write's condition did not hold; `current` is the item as it was (absent if it did not exist). */
export class ConditionFailedError extends SluiceError {
  readonly current: Item | undefined;
  constructor(current: Item | undefined, options: { cause?: unknown } = {}) {
    super('UNKNOWN_SERVER_ERROR', 'conditional write failed', { ...options, retriable: false });
    this.name = 'ConditionFailedError';
    this.current = current;
  }
}

/** A transaction was cancelled; `reasons[i]` says why op i failed ('None' where it did not). */
export class TransactionCanceledError extends SluiceError {
  readonly reasons: readonly ('None' | 'ConditionalCheckFailed' | 'TransactionConflict' | 'Other')[];
  constructor(reasons: TransactionCanceledError['reasons'], options: { cause?: unknown } = {}) {
    const conflict = reasons.includes('TransactionConflict');
    super('UNKNOWN_SERVER_ERROR', `transaction cancelled: ${reasons.join(', ')}`, {
      ...options,
      retriable: conflict,
    });
    this.name = 'TransactionCanceledError';
    this.reasons = reasons;
  }

  get conditionFailed(): boolean {
    return this.reasons.includes('ConditionalCheckFailed');
  }
}

/** Path helper: `['a','b']` → `'a.b'` for messages and memory lookups. */
export const pathParts = (path: Path): readonly string[] => (typeof path === 'string' ? [path] : path);
