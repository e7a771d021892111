/**
 * The fetch API's limits: part of the protocol, so the core enforces them and the edges that speak
 * Fetch (the HTTP routes, the Kafka gateway) and the SDK share the numbers without reaching the core.
 */
export const MAX_WAIT_MS = 20_000;
export const MAX_FETCH_BYTES = 4 * 1024 * 1024;
/** Partitions one multi-partition fetch may name (a member owning more sends several). */
export const MAX_FETCH_PARTITIONS = 1000;
