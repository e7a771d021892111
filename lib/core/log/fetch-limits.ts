/**
 * The fetch API's limits: a leaf module, so the edges that speak Fetch (the HTTP routes, the Kafka
 * gateway) share the core's numbers without importing its reader.
 */
export const MAX_WAIT_MS = 20_000;
export const MAX_FETCH_BYTES = 4 * 1024 * 1024;
/** Partitions one multi-partition fetch may name (a member owning more sends several). */
export const MAX_FETCH_PARTITIONS = 1000;
