/**
 * Kafka's consumer-side rule for read_committed (its CompletedFetch with the aborted-transactions list):
 * a producer's transactional batches from an aborted transaction's first offset up to its ABORT marker
 * are dropped; control batches are never records. Shared by the server's JSON fetch and the SDK's
 * consumer, which both read whole stored batches.
 */
import type { BatchHeader } from './types.js';

export interface AbortedTransaction {
  producerId: number;
  /** The transaction's first offset in the partition. */
  firstOffset: number;
}

export class AbortedFilter {
  private readonly pending: AbortedTransaction[];
  private readonly aborting = new Set<number>();

  constructor(aborted: readonly AbortedTransaction[]) {
    this.pending = [...aborted].sort((a, b) => a.firstOffset - b.firstOffset);
  }

  /** Whether the batch's records reach the reader; batches must be shown in offset order. */
  keeps(header: BatchHeader, baseOffset: number): boolean {
    while (this.pending.length > 0 && this.pending[0]!.firstOffset <= baseOffset)
      this.aborting.add(this.pending.shift()!.producerId);
    if (header.isControl) {
      // Only an ABORT marker ends an aborted run; its type is in the record key, and a COMMIT marker of
      // an aborting producer cannot occur (the run would not be aborted), so any marker ends it.
      this.aborting.delete(header.producerId);
      return false;
    }
    return !(header.isTransactional && this.aborting.has(header.producerId));
  }
}
