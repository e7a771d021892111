/** An ObjectStore decorator that injects faults (see injector.ts) into any object store. */
import type { ObjectCall } from '../forwarding.js';
import { ForwardingObjectStore } from '../forwarding.js';
import type { ObjectStore } from '../../ports/object-store.js';
import type { FaultInjector } from './injector.js';

export class FaultyObjectStore extends ForwardingObjectStore {
  constructor(
    inner: ObjectStore,
    readonly injector: FaultInjector,
  ) {
    super(inner);
  }

  protected override around<T>(call: ObjectCall, run: () => Promise<T>): Promise<T> {
    return this.injector.around({ store: 'object', ...call }, run);
  }
}
