/** A metadata store that runs a hook before each update: to race the update, or to fail it. */
import type { MetadataStore } from '../../lib/ports/metadata-store.js';

export const beforeUpdate = (
  store: MetadataStore,
  hook: (actions: Parameters<MetadataStore['update']>[1]) => Promise<void>,
): MetadataStore =>
  new Proxy(store, {
    get(target, name, receiver) {
      if (name === 'update')
        return async (...args: Parameters<MetadataStore['update']>) => {
          await hook(args[1]);
          return target.update(...args);
        };
      const value: unknown = Reflect.get(target, name, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
