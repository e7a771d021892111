/**
 * A planted bug the transactions checker must catch: the coordinator's marker never reaches one
 * partition (its write is answered as if it had taken effect). Runs the simulation with the bug and
 * expects the checker to report it in every seed where a skipped marker should have closed records.
 */
import { describe, expect, it } from 'vitest';
import type {
  Item,
  ItemKey,
  MetadataStore,
  UpdateAction,
  UpdateOptions,
} from '../../lib/ports/metadata-store.js';
import { checkTransactions } from '../support/txn-checker.js';
import { OUT, runTransactionSim } from '../support/txn-sim.js';

const SEEDS = 40;

/** Drops every marker append to partition 1 of the output topic, answering success. */
const skipMarkersOnPartition1 = (
  inner: MetadataStore,
  fired: { count: number },
  topicId: () => string | undefined,
): MetadataStore => {
  const skipping = Object.create(inner) as MetadataStore;
  skipping.update = (
    key: ItemKey,
    actions: readonly UpdateAction[],
    options?: UpdateOptions,
  ): Promise<Item | undefined> => {
    const id = topicId();
    const marker =
      id !== undefined &&
      key.pk === `P#${id}#1` &&
      key.sk === 'STATE' &&
      actions.some(
        (a) =>
          'append' in a &&
          a.set === 'tail' &&
          a.append.some((e) => typeof e === 'string' && /\|!(a|c)/.test(e)),
      );
    if (marker) {
      // A marker that closes records (not one for a partition the transaction added but never wrote to,
      // whose loss nobody could see) counts as the bug firing.
      if (JSON.stringify(options?.condition ?? {}).includes('{"path":["tx"')) fired.count++;
      return Promise.resolve(undefined);
    }
    return inner.update(key, actions, options);
  };
  return skipping;
};

describe('planted bug: a marker skipped on one partition', () => {
  it('is caught by the checker', { timeout: 300_000 }, async () => {
    let firedSeeds = 0;
    let caught = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const fired = { count: 0 };
      let topicId: string | undefined;
      const result = await runTransactionSim({
        seed,
        wrapStore: (store, sluice) =>
          skipMarkersOnPartition1(store, fired, () => {
            if (topicId === undefined)
              void sluice()
                .catalog.get(OUT)
                .then(
                  (t) => (topicId = t.topicId),
                  () => undefined,
                );
            return topicId;
          }),
      });
      if (fired.count === 0) continue;
      firedSeeds++;
      if (checkTransactions(result).length > 0) caught++;
    }
    expect(firedSeeds).toBeGreaterThan(SEEDS / 2);
    expect(caught).toBe(firedSeeds);
  });
});
