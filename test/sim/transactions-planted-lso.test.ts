/**
 * A planted bug the transactions checker must catch: the last stable offset taken from the high
 * watermark (open transactions ignored), so read_committed reads run into open transactions.
 */
import { describe, expect, it, vi } from 'vitest';
import { checkTransactions } from '../support/txn-checker.js';
import { runTransactionSim } from '../support/txn-sim.js';
import type * as Lso from '../../lib/core/transactions/lso.js';

vi.mock('../../lib/core/transactions/lso.js', async (original) => ({
  ...(await original<typeof Lso>()),
  lastStableOffset: (state: { highWatermark: number }) => state.highWatermark,
}));

const SEEDS = 20;

describe('planted bug: the LSO from the high watermark', () => {
  it('is caught by the checker', { timeout: 300_000 }, async () => {
    let caught = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      if (checkTransactions(await runTransactionSim({ seed })).length > 0) caught++;
    }
    expect(caught).toBeGreaterThanOrEqual(SEEDS * 0.9);
  });
});
