/**
 * In-memory metadata store with DynamoDB's semantics (conditions, update expressions evaluated against
 * the old item, sorted range queries, all-or-nothing transactions). Single-threaded JS makes every
 * operation atomic; tests wrap it in the fault injector to make it misbehave.
 */
import type {
  Item,
  ItemKey,
  KeyCondition,
  MetadataStore,
  QueryInput,
  QueryPage,
  TransactOp,
  UpdateAction,
  UpdateOptions,
  WriteOptions,
} from '../../ports/metadata-store.js';
import { ConditionFailedError, TransactionCanceledError } from '../../ports/metadata-store.js';
import { itemSize, readUnitsFor, StorageMeter, writeUnitsFor } from '../../ports/meter.js';
import { invalidRequest } from '../../../protocol/errors.js';
import { applyUpdate, checkOperators, clone, evaluate } from './expressions.js';

const MAX_ITEM_BYTES = 400 * 1024;

export class MemoryMetadataStore implements MetadataStore {
  private readonly partitions = new Map<string, Map<string, Item>>();

  constructor(readonly meter: StorageMeter = new StorageMeter()) {}

  async get(key: ItemKey, options: { consistent?: boolean } = {}): Promise<Item | undefined> {
    const item = this.read(key);
    this.meter.add({
      metadataReads: 1,
      readUnits: readUnitsFor(item ? itemSize(item) : 1, options.consistent ?? false),
    });
    return clone(item);
  }

  async put(item: Item, options: WriteOptions = {}): Promise<void> {
    const before = this.read(item);
    this.check(options.condition, before);
    this.write(clone(item), before);
  }

  async update(
    key: ItemKey,
    actions: readonly UpdateAction[],
    options: UpdateOptions = {},
  ): Promise<Item | undefined> {
    const before = this.read(key);
    this.check(options.condition, before);
    const after = applyUpdate(key, before, actions);
    this.write(after, before);
    const returned =
      options.returnValues === 'allOld' ? before : options.returnValues === 'allNew' ? after : undefined;
    return clone(returned);
  }

  async delete(key: ItemKey, options: WriteOptions = {}): Promise<void> {
    const before = this.read(key);
    this.check(options.condition, before);
    this.partitions.get(key.pk)?.delete(key.sk);
    this.meter.add({ metadataWrites: 1, writeUnits: writeUnitsFor(before ? itemSize(before) : 1) });
  }

  async query(input: QueryInput): Promise<QueryPage> {
    const rows = [...(this.partitions.get(input.pk)?.values() ?? [])]
      .filter((item) => matchesKey(item.sk, input.sk))
      .sort((a, b) => compareKeys(a.sk, b.sk));
    if (input.reverse) rows.reverse();
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
    const start =
      after === undefined
        ? rows
        : rows.filter((r) => (input.reverse ? compareKeys(r.sk, after) < 0 : compareKeys(r.sk, after) > 0));
    const limit = input.limit ?? Number.POSITIVE_INFINITY;
    // DynamoDB also pages at 1 MB; mirror that so callers handle cursors either way.
    const page: Item[] = [];
    let bytes = 0;
    for (const row of start) {
      if (page.length >= limit || bytes >= 1024 * 1024) break;
      page.push(row);
      bytes += itemSize(row);
    }
    this.meter.add({ metadataReads: 1, readUnits: readUnitsFor(bytes, input.consistent ?? false) });
    const last = page.at(-1);
    const more = last !== undefined && start.length > page.length;
    return { items: page.map((i) => clone(i)), ...(more ? { cursor: encodeCursor(last.sk) } : {}) };
  }

  async transact(ops: readonly TransactOp[]): Promise<void> {
    if (ops.length > 100) throw invalidRequest('a transaction holds at most 100 operations');
    const keys = new Set(ops.map((op) => keyString(opKey(op))));
    if (keys.size !== ops.length) throw invalidRequest('a transaction may touch each item only once');
    // The whole request is validated before any condition is evaluated, as DynamoDB does.
    for (const op of ops) if (op.condition) checkOperators(op.condition);
    const reasons = ops.map(
      (op) =>
        (op.condition && !evaluate(op.condition, this.read(opKey(op)))
          ? 'ConditionalCheckFailed'
          : 'None') as 'None' | 'ConditionalCheckFailed',
    );
    if (reasons.some((r) => r !== 'None')) throw new TransactionCanceledError(reasons);
    const results = ops.map((op) => {
      const before = this.read(opKey(op));
      if ('put' in op) return { key: opKey(op), before, after: clone(op.put) as Item | undefined };
      if ('update' in op)
        return {
          key: opKey(op),
          before,
          after: applyUpdate(op.update, before, op.actions) as Item | undefined,
        };
      if ('delete' in op) return { key: opKey(op), before, after: undefined };
      return { key: opKey(op), before, after: before, checkOnly: true };
    });
    for (const r of results) {
      // A ConditionCheck changes nothing but is billed as a transactional write of the item it reads.
      if ('checkOnly' in r) {
        this.meter.add({ writeUnits: 2 * writeUnitsFor(r.before ? itemSize(r.before) : 1) });
        continue;
      }
      if (r.after) this.write(r.after, r.before, 2);
      else {
        this.partitions.get(r.key.pk)?.delete(r.key.sk);
        this.meter.add({
          metadataWrites: 1,
          writeUnits: 2 * writeUnitsFor(r.before ? itemSize(r.before) : 1),
        });
      }
    }
  }

  async batchWrite(writes: { puts?: readonly Item[]; deletes?: readonly ItemKey[] }): Promise<void> {
    for (const item of writes.puts ?? []) await this.put(item);
    for (const key of writes.deletes ?? []) await this.delete(key);
  }

  /** Every item, for tests and checkers. */
  dump(): Item[] {
    return [...this.partitions.values()].flatMap((p) => [...p.values()].map((i) => clone(i)));
  }

  private read(key: ItemKey): Item | undefined {
    return this.partitions.get(key.pk)?.get(key.sk);
  }

  private check(condition: WriteOptions['condition'], before: Item | undefined): void {
    if (condition && !evaluate(condition, before)) throw new ConditionFailedError(clone(before));
  }

  private write(after: Item, before: Item | undefined, factor = 1): void {
    const size = itemSize(after);
    if (size > MAX_ITEM_BYTES)
      throw invalidRequest(`item ${after.pk}/${after.sk} is ${size} bytes, over DynamoDB's 400 KB`);
    let partition = this.partitions.get(after.pk);
    if (!partition) this.partitions.set(after.pk, (partition = new Map()));
    partition.set(after.sk, after);
    this.meter.add({
      metadataWrites: 1,
      writeUnits: factor * writeUnitsFor(Math.max(size, before ? itemSize(before) : 0)),
    });
  }
}

const opKey = (op: TransactOp): ItemKey =>
  'put' in op
    ? { pk: op.put.pk, sk: op.put.sk }
    : 'update' in op
      ? op.update
      : 'delete' in op
        ? op.delete
        : op.check;

const keyString = (key: ItemKey): string => `${key.pk}\u0000${key.sk}`;

/** A character whose UTF-16 order can differ from its code point order: a surrogate or U+E000–U+FFFF. */
const HIGH = /[\uD800-\uFFFF]/;

/**
 * DynamoDB orders sort keys by their UTF-8 bytes, which is code point order. JavaScript's `<` compares
 * UTF-16 units, which differs only where a character above U+FFFF (a surrogate pair, D800–DFFF) meets
 * one in U+E000–U+FFFF at the first difference: then both strings hold such a character, and they are
 * compared code point by code point.
 */
const compareKeys = (a: string, b: string): number => {
  if (!HIGH.test(a) || !HIGH.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
};

const matchesKey = (sk: string, cond: KeyCondition | undefined): boolean => {
  if (!cond) return true;
  if ('beginsWith' in cond) return sk.startsWith(cond.beginsWith);
  if ('between' in cond)
    return compareKeys(sk, cond.between[0]) >= 0 && compareKeys(sk, cond.between[1]) <= 0;
  if ('gte' in cond) return compareKeys(sk, cond.gte) >= 0;
  if ('lte' in cond) return compareKeys(sk, cond.lte) <= 0;
  if ('gt' in cond) return compareKeys(sk, cond.gt) > 0;
  return compareKeys(sk, cond.lt) < 0;
};

const encodeCursor = (sk: string): string => Buffer.from(sk, 'utf8').toString('base64url');
const decodeCursor = (cursor: string): string => Buffer.from(cursor, 'base64url').toString('utf8');
