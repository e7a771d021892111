/** An ObjectStore decorator that injects faults (see injector.ts) into any object store. */
import type { ByteRange, ObjectListPage, ObjectStore } from '../../ports/object-store.js';
import type { FaultInjector } from './injector.js';

export class FaultyObjectStore implements ObjectStore {
  constructor(
    readonly inner: ObjectStore,
    readonly injector: FaultInjector,
  ) {}

  get id(): string {
    return this.inner.id;
  }

  get location(): string {
    return this.inner.location;
  }

  put(key: string, body: Uint8Array): Promise<void> {
    return this.injector.around({ store: 'object', op: 'put', key }, () => this.inner.put(key, body));
  }

  get(key: string, range?: ByteRange): Promise<Uint8Array> {
    return this.injector.around({ store: 'object', op: 'get', key }, () => this.inner.get(key, range));
  }

  delete(keys: readonly string[]): Promise<void> {
    return this.injector.around(
      { store: 'object', op: 'delete', ...(keys[0] !== undefined ? { key: keys[0] } : {}) },
      () => this.inner.delete(keys),
    );
  }

  list(prefix: string, options?: { cursor?: string; limit?: number }): Promise<ObjectListPage> {
    return this.injector.around({ store: 'object', op: 'list', key: prefix }, () =>
      this.inner.list(prefix, options),
    );
  }
}
