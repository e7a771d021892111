/**
 * Fault injection for simulations and soak tests: seeded decorators over any MetadataStore or
 * ObjectStore, a manual clock, and the spec parsed from SLUICE_FAULTS. No AWS imports.
 */
import type { Clock } from '../../ports/clock.js';
import type { MetadataStore } from '../../ports/metadata-store.js';
import type { ObjectStore } from '../../ports/object-store.js';
import type { FaultSpec } from './injector.js';
import { FaultInjector } from './injector.js';
import { FaultyMetadataStore } from './metadata-store.js';
import { FaultyObjectStore } from './object-store.js';

export * from './injector.js';
export * from './manual-clock.js';
export * from './random.js';
export { FaultyMetadataStore } from './metadata-store.js';
export { FaultyObjectStore } from './object-store.js';

/**
 * Wraps a deployment's stores in one injector each (metadata seeded with spec.seed, object store i
 * with seed + 1 + i), so a spec replays the same schedule per store.
 */
export const withFaults = (
  spec: FaultSpec,
  stores: { store: MetadataStore; objectStores: readonly ObjectStore[] },
  clock?: Clock,
): { store: FaultyMetadataStore; objectStores: FaultyObjectStore[]; injectors: FaultInjector[] } => {
  const metadata = new FaultyMetadataStore(stores.store, new FaultInjector(spec, clock));
  const objectStores = stores.objectStores.map(
    (s, i) => new FaultyObjectStore(s, new FaultInjector({ ...spec, seed: spec.seed + 1 + i }, clock)),
  );
  return {
    store: metadata,
    objectStores,
    injectors: [metadata.injector, ...objectStores.map((s) => s.injector)],
  };
};
