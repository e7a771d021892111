/**
 * A task's lease item `ST#{application}#{task}`: whoever takes the task over bumps its epoch, and
 * every write of the task's state is conditioned on the epoch it took, so an instance that lost the
 * task (a zombie) changes nothing, under either processing guarantee.
 */
import type { ItemKey, MetadataStore, TransactOp } from '../../lib/ports/metadata-store.js';
import { TransactionCanceledError } from '../../lib/ports/metadata-store.js';
import { SluiceError } from '../../protocol/errors.js';
import type { MetadataStateBackend } from '../state/metadata-backend.js';
import type { StateWrite } from '../state/backend.js';

/** The commit of a task that another instance has taken over: it wrote nothing. */
export class TaskFencedError extends SluiceError {
  constructor(task: string, epoch: number) {
    super('INVALID_PRODUCER_EPOCH', `task ${task} was taken over: epoch ${epoch} is fenced`, {
      retriable: false,
    });
    this.name = 'TaskFencedError';
  }
}

/** DynamoDB allows 100 items per transaction; one is the lease's condition. */
const STATE_OPS_PER_TRANSACTION = 99;

export class TaskLease {
  readonly key: ItemKey;
  epoch = 0;
  readonly store: MetadataStore;

  constructor(
    readonly backend: MetadataStateBackend,
    readonly taskId: string,
  ) {
    this.store = backend.store;
    this.key = { pk: `ST#${backend.applicationId}#${taskId}`, sk: 'LEASE' };
  }

  /** Takes the task over; returns the lease item as it is now. */
  async acquire(): Promise<Record<string, unknown>> {
    const lease = await this.store.update(this.key, [{ set: 'epoch', add: 1, initial: 0 }], {
      returnValues: 'allNew',
    });
    this.epoch = Number(lease?.['epoch'] ?? 0);
    return lease ?? {};
  }

  /** The transaction ops of state writes. */
  stateOps(writes: StateWrite[]): TransactOp[] {
    return writes.map((w): TransactOp =>
      w.entry === null
        ? { delete: { pk: this.backend.pk(this.taskId, w.store), sk: this.backend.sk(w.key) } }
        : { put: this.backend.itemOf(this.taskId, w.store, w.entry) },
    );
  }

  /** Runs a transaction whose first op conditions on the lease; a failed lease condition is fencing. */
  async transact(ops: TransactOp[]): Promise<void> {
    try {
      await this.store.transact(ops);
    } catch (error) {
      if (error instanceof TransactionCanceledError && error.reasons[0] === 'ConditionalCheckFailed')
        throw new TaskFencedError(this.taskId, this.epoch);
      throw error;
    }
  }

  /** At-least-once state writes: fenced chunks of one transaction each (not atomic across chunks). */
  async writeFenced(writes: StateWrite[]): Promise<void> {
    const ops = this.stateOps(writes);
    for (let i = 0; i < ops.length; i += STATE_OPS_PER_TRANSACTION) {
      await this.transact([
        { check: this.key, condition: { path: 'epoch', op: '=', value: this.epoch } },
        ...ops.slice(i, i + STATE_OPS_PER_TRANSACTION),
      ]);
    }
  }
}
