/**
 * Keeps a task's lease alive while it works: a renewal every third of the lease, fenced by the
 * lease epoch, so a task that was paused, stopped, restarted or taken over learns it at once (the
 * renewal throws ConditionFailedError) and a dead one loses the lease within one lease length.
 */
import type { Clock } from '../../lib/ports/clock.js';
import type { ConnectStateStore, Lease } from '../state-store.js';

export class LeaseKeeper {
  constructor(
    private lease: Lease,
    private readonly state: ConnectStateStore,
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  get current(): Lease {
    return this.lease;
  }

  /** Renews when a third of the lease is used up. */
  async keep(): Promise<Lease> {
    const now = this.clock.now();
    if (now >= this.lease.until - (this.ttlMs * 2) / 3) await this.renew();
    return this.lease;
  }

  /** Renews now (before a commit that must not happen once fenced). */
  async renew(): Promise<Lease> {
    this.lease = await this.state.renew(this.lease, this.clock.now() + this.ttlMs);
    return this.lease;
  }
}
