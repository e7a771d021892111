export * from './metadata-store.js';
export * from './object-store.js';
export * from './storage-errors.js';
export * from './clock.js';
export * from './meter.js';
export * from './telemetry.js';
export type { ConnectionNotifier, PostOutcome } from './connections.js';
