import type { MetadataStore } from '../../lib/ports/metadata-store.js';

/**
 * The store with its reads recorded as `get <key kind> <consistent>` and `query <prefix kind>
 * <consistent>` (the kind is the sort key's part before the first `#`): tests of a pass that must read
 * strongly consistently assert the exact list.
 */
export const recordReads = (inner: MetadataStore): { store: MetadataStore; reads: string[] } => {
  const reads: string[] = [];
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      if (name === 'get')
        return (key: { sk: string }, options?: { consistent?: boolean }) => {
          reads.push(`get ${key.sk.split('#')[0]} ${String(options?.consistent)}`);
          return target.get(key as never, options);
        };
      if (name === 'query')
        return (input: { sk?: { beginsWith?: string }; consistent?: boolean }) => {
          reads.push(`query ${input.sk?.beginsWith?.split('#')[0]} ${String(input.consistent)}`);
          return target.query(input as never);
        };
      return (value as (...args: unknown[]) => unknown).bind(target);
    },
  });
  return { store, reads };
};
