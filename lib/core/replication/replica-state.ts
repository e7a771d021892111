/**
 * What the partition item says about its replicas, read the one way every caller reads it: the high
 * watermark, each store's log end offset (LEO), the out-of-sync replicas. The rest of the log asks
 * these instead of reading `nextOffset` (the leader's LEO) as the high watermark.
 */
import type { PartitionState } from '../log/partition-state.js';

/** Offsets below this are committed: every in-sync store holds them. Consumers never see past it. */
export const highWatermarkOf = (state: Pick<PartitionState, 'highWatermark'>): number => state.highWatermark;

/** A store's LEO; a replica the item does not know yet holds nothing. */
export const logEndOffsetOf = (state: Pick<PartitionState, 'logEndOffsets'>, store: string): number =>
  state.logEndOffsets[store] ?? 0;

/** The smallest LEO over the given stores (an ISR): what the high watermark may be raised to. */
export const minLogEndOffset = (
  state: Pick<PartitionState, 'logEndOffsets'>,
  stores: readonly string[],
): number => Math.min(...stores.map((s) => logEndOffsetOf(state, s)));

/** Replicas out of the ISR (Kafka's OSR), in assignment order. */
export const outOfSyncReplicas = (state: Pick<PartitionState, 'replicas' | 'isr'>): string[] =>
  state.replicas.filter((r) => !state.isr.includes(r));

/** Every replica's LEO, in assignment order, for `GET /v1/topics/{t}`. */
export const logEndOffsets = (
  state: Pick<PartitionState, 'replicas' | 'logEndOffsets'>,
): Record<string, number> => Object.fromEntries(state.replicas.map((r) => [r, logEndOffsetOf(state, r)]));
