/**
 * Compiles the metadata store's Condition and UpdateAction trees into DynamoDB expression strings.
 * Every attribute name becomes a `#n` placeholder and every value a `:v` placeholder, so reserved
 * words and odd characters in names never reach the expression parser.
 */
import type { AttributeValue as DynamoValue } from '@aws-sdk/client-dynamodb';
import type {
  AttributeValue,
  Condition,
  KeyCondition,
  Path,
  UpdateAction,
} from '../../ports/metadata-store.js';
import { pathParts } from '../../ports/metadata-store.js';
import { marshalValue } from './marshal.js';

export class ExpressionNames {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, DynamoValue> = {};
  private readonly byName = new Map<string, string>();
  private valueCount = 0;

  /** `['producers', '42', 's']` → `#n0.#n1.#n2`; each part is a map key, never a list index. */
  path(path: Path): string {
    return pathParts(path)
      .map((part) => this.name(part))
      .join('.');
  }

  name(name: string): string {
    let placeholder = this.byName.get(name);
    if (placeholder === undefined) {
      placeholder = `#n${this.byName.size}`;
      this.byName.set(name, placeholder);
      this.names[placeholder] = name;
    }
    return placeholder;
  }

  value(value: AttributeValue): string {
    const placeholder = `:v${this.valueCount++}`;
    this.values[placeholder] = marshalValue(value);
    return placeholder;
  }

  /** The placeholder maps in the shape the SDK wants, omitted when empty (DynamoDB rejects `{}`). */
  attributes(): {
    ExpressionAttributeNames?: Record<string, string>;
    ExpressionAttributeValues?: Record<string, DynamoValue>;
  } {
    return {
      ...(this.byName.size > 0 ? { ExpressionAttributeNames: this.names } : {}),
      ...(this.valueCount > 0 ? { ExpressionAttributeValues: this.values } : {}),
    };
  }
}

export const conditionExpression = (condition: Condition, x: ExpressionNames): string => {
  if ('and' in condition) return junction(condition.and, 'AND', x);
  if ('or' in condition) return junction(condition.or, 'OR', x);
  if ('not' in condition) return `(NOT ${conditionExpression(condition.not, x)})`;
  if ('exists' in condition) return `attribute_exists(${x.path(condition.exists)})`;
  if ('notExists' in condition) return `attribute_not_exists(${x.path(condition.notExists)})`;
  const path = x.path(condition.path);
  if ('contains' in condition) return `contains(${path}, ${x.value(condition.contains)})`;
  const operand = 'otherPath' in condition ? x.path(condition.otherPath) : x.value(condition.value);
  return `${path} ${condition.op} ${operand}`;
};

const junction = (parts: readonly Condition[], op: 'AND' | 'OR', x: ExpressionNames): string => {
  // DynamoDB has no literal true/false; an empty AND holds and an empty OR does not, as in the memory store.
  if (parts.length === 0) {
    const pk = x.name('pk');
    return op === 'AND'
      ? `(attribute_exists(${pk}) OR attribute_not_exists(${pk}))`
      : `(attribute_exists(${pk}) AND attribute_not_exists(${pk}))`;
  }
  return `(${parts.map((c) => conditionExpression(c, x)).join(` ${op} `)})`;
};

/** The UpdateExpression for actions, or undefined when there is nothing to do. */
export const updateExpression = (
  actions: readonly UpdateAction[],
  x: ExpressionNames,
): string | undefined => {
  const sets: string[] = [];
  const removes: string[] = [];
  for (const action of actions) {
    if ('remove' in action) removes.push(x.path(action.remove));
    else if ('removeHead' in action) {
      // Indexes in one REMOVE all refer to the list as it was before the update.
      const list = x.path(action.removeHead);
      for (let i = 0; i < action.count; i++) removes.push(`${list}[${i}]`);
    } else {
      const target = x.path(action.set);
      if ('value' in action) sets.push(`${target} = ${x.value(action.value)}`);
      else if ('ifNotExists' in action)
        sets.push(`${target} = if_not_exists(${target}, ${x.value(action.ifNotExists)})`);
      else if ('copyOf' in action && action.keepExisting === true)
        sets.push(`${target} = if_not_exists(${target}, ${x.path(action.copyOf)})`);
      else if ('copyOf' in action) sets.push(`${target} = ${x.path(action.copyOf)}`);
      else if ('add' in action) {
        const operand = x.path(action.from ?? action.set);
        const base =
          action.initial === undefined ? operand : `if_not_exists(${operand}, ${x.value(action.initial)})`;
        sets.push(`${target} = ${base} + ${x.value(action.add)}`);
      } else sets.push(`${target} = list_append(${target}, ${x.value([...action.append])})`);
    }
  }
  const clauses = [
    ...(sets.length > 0 ? [`SET ${sets.join(', ')}`] : []),
    ...(removes.length > 0 ? [`REMOVE ${removes.join(', ')}`] : []),
  ];
  return clauses.length > 0 ? clauses.join(' ') : undefined;
};

export const keyConditionExpression = (
  pk: string,
  sk: KeyCondition | undefined,
  x: ExpressionNames,
): string => {
  const partition = `${x.name('pk')} = ${x.value(pk)}`;
  if (sk === undefined) return partition;
  const sort = x.name('sk');
  if ('beginsWith' in sk) return `${partition} AND begins_with(${sort}, ${x.value(sk.beginsWith)})`;
  if ('between' in sk) {
    return `${partition} AND ${sort} BETWEEN ${x.value(sk.between[0])} AND ${x.value(sk.between[1])}`;
  }
  if ('gte' in sk) return `${partition} AND ${sort} >= ${x.value(sk.gte)}`;
  if ('lte' in sk) return `${partition} AND ${sort} <= ${x.value(sk.lte)}`;
  if ('gt' in sk) return `${partition} AND ${sort} > ${x.value(sk.gt)}`;
  return `${partition} AND ${sort} < ${x.value(sk.lt)}`;
};
