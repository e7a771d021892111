/**
 * Evaluates the metadata store's conditions and update actions on plain items, with DynamoDB's
 * semantics: every operand reads the item as it was before the update.
 */
import type {
  AttributeValue,
  Comparison,
  Condition,
  Item,
  Path,
  UpdateAction,
} from '../../ports/metadata-store.js';
import { pathParts } from '../../ports/metadata-store.js';
import { invalidRequest } from '../../../protocol/errors.js';

type Doc = { [name: string]: AttributeValue };

export const readPath = (item: Doc | undefined, path: Path): AttributeValue | undefined => {
  let node: AttributeValue | undefined = item;
  for (const part of pathParts(path)) {
    if (node === null || node === undefined || typeof node !== 'object' || node instanceof Uint8Array) {
      return undefined;
    }
    node = Array.isArray(node) ? node[Number(part)] : (node as Doc)[part];
  }
  return node;
};

const compare = (a: AttributeValue | undefined, b: AttributeValue | undefined): number | undefined => {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return undefined;
};

export const deepEqual = (a: AttributeValue | undefined, b: AttributeValue | undefined): boolean => {
  if (a === b) return true;
  if (a instanceof Uint8Array && b instanceof Uint8Array) {
    return a.length === b.length && a.every((x, i) => x === b[i]);
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const ka = Object.keys(a as Doc);
    const kb = Object.keys(b as Doc);
    return ka.length === kb.length && ka.every((k) => deepEqual((a as Doc)[k], (b as Doc)[k]));
  }
  return false;
};

const ORDERINGS: Record<Exclude<Comparison, '=' | '<>'>, (c: number) => boolean> = {
  '<': (c) => c < 0,
  '<=': (c) => c <= 0,
  '>': (c) => c > 0,
  '>=': (c) => c >= 0,
};

const holds = (op: Comparison, a: AttributeValue | undefined, b: AttributeValue | undefined): boolean => {
  if (a === undefined || b === undefined) return op === '<>' ? a !== b : false;
  if (op === '=') return deepEqual(a, b);
  if (op === '<>') return !deepEqual(a, b);
  const c = compare(a, b);
  return c !== undefined && ORDERINGS[op](c);
};

/**
 * DynamoDB parses the whole expression before it reads the item, so an operator it does not know is a
 * ValidationException even where the item is missing or an AND would stop before reaching it. The
 * memory store refuses it the same way: taking it for some other comparison would let a typo pass
 * every test that runs on memory.
 */
export const checkOperators = (condition: Condition): void => {
  if ('and' in condition) return condition.and.forEach(checkOperators);
  if ('or' in condition) return condition.or.forEach(checkOperators);
  if ('not' in condition) return checkOperators(condition.not);
  if (!('op' in condition)) return;
  const op: string = condition.op;
  if (op !== '=' && op !== '<>' && !Object.hasOwn(ORDERINGS, op))
    throw invalidRequest(`unknown comparison operator ${JSON.stringify(op)}`);
};

const holdsOn = (condition: Condition, item: Doc | undefined): boolean => {
  if ('and' in condition) return condition.and.every((c) => holdsOn(c, item));
  if ('or' in condition) return condition.or.some((c) => holdsOn(c, item));
  if ('not' in condition) return !holdsOn(condition.not, item);
  if ('exists' in condition) return readPath(item, condition.exists) !== undefined;
  if ('notExists' in condition) return readPath(item, condition.notExists) === undefined;
  const actual = readPath(item, condition.path);
  if ('contains' in condition) {
    if (Array.isArray(actual)) return actual.some((x) => deepEqual(x, condition.contains));
    return (
      typeof actual === 'string' &&
      typeof condition.contains === 'string' &&
      actual.includes(condition.contains)
    );
  }
  const other = 'otherPath' in condition ? readPath(item, condition.otherPath) : condition.value;
  return holds(condition.op, actual, other);
};

/** Whether `condition` holds on `item`; throws INVALID_REQUEST for an operator DynamoDB would refuse. */
export const evaluate = (condition: Condition, item: Doc | undefined): boolean => {
  checkOperators(condition);
  return holdsOn(condition, item);
};

export const clone = <T extends AttributeValue | undefined>(value: T): T => {
  if (value instanceof Uint8Array) return new Uint8Array(value) as T;
  if (Array.isArray(value)) return value.map((v) => clone(v)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clone(v)])) as T;
  }
  return value;
};

const writePath = (item: Doc, path: Path, value: AttributeValue | undefined): void => {
  const parts = pathParts(path);
  let node: AttributeValue = item;
  for (const [i, part] of parts.entries()) {
    const last = i === parts.length - 1;
    if (node === null || typeof node !== 'object' || node instanceof Uint8Array) {
      throw invalidRequest(`document path ${parts.join('.')} does not exist`);
    }
    if (last) {
      if (Array.isArray(node)) {
        if (value === undefined) node.splice(Number(part), 1);
        else node[Number(part)] = value;
      } else if (value === undefined) delete (node as Doc)[part];
      else (node as Doc)[part] = value;
      return;
    }
    const next: AttributeValue | undefined = Array.isArray(node) ? node[Number(part)] : (node as Doc)[part];
    if (next === undefined) {
      if (value === undefined) return;
      throw invalidRequest(`document path ${parts.join('.')} does not exist`);
    }
    node = next;
  }
};

/** Applies actions to a copy of `before` (which may be undefined: the update creates the item). */
export const applyUpdate = (
  key: { pk: string; sk: string },
  before: Item | undefined,
  actions: readonly UpdateAction[],
): Item => {
  const after: Item = before ? clone(before) : { pk: key.pk, sk: key.sk };
  for (const action of actions) {
    if ('remove' in action) {
      writePath(after, action.remove, undefined);
      continue;
    }
    if ('removeHead' in action) {
      const list = readPath(before, action.removeHead);
      if (Array.isArray(list)) writePath(after, action.removeHead, clone(list.slice(action.count)));
      continue;
    }
    const current = readPath(before, action.set);
    let value: AttributeValue;
    if ('value' in action) value = clone(action.value);
    else if ('ifNotExists' in action)
      value = current === undefined ? clone(action.ifNotExists) : clone(current);
    else if ('copyOf' in action && action.keepExisting === true && current !== undefined)
      value = clone(current);
    else if ('copyOf' in action) {
      const source = readPath(before, action.copyOf);
      if (source === undefined)
        throw invalidRequest(`operand ${pathParts(action.copyOf).join('.')} does not exist`);
      value = clone(source);
    } else if ('add' in action) {
      const base = readPath(before, action.from ?? action.set) ?? action.initial;
      if (typeof base !== 'number')
        throw invalidRequest(`operand ${pathParts(action.from ?? action.set).join('.')} is not a number`);
      value = base + action.add;
    } else {
      if (!Array.isArray(current))
        throw invalidRequest(`list_append operand ${pathParts(action.set).join('.')} is not a list`);
      value = [...clone(current), ...clone([...action.append])];
    }
    writePath(after, action.set, value);
  }
  return after;
};
