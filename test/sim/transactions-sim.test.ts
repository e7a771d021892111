/**
 * Transactions under crashes and store faults, 300 seeds (test/support/txn-sim.ts, txn-checker.ts).
 */
import { describe, expect, it } from 'vitest';
import { checkTransactions } from '../support/txn-checker.js';
import { runTransactionSim } from '../support/txn-sim.js';

const SEEDS = Number(process.env['TXN_SIM_SEEDS'] ?? 300);

describe('transactions simulation', () => {
  it(
    `keeps every transaction all-or-none, fenced and below the LSO over ${SEEDS} seeds`,
    { timeout: 600_000 },
    async () => {
      const failures: string[] = [];
      let committed = 0;
      let aborted = 0;
      let unknown = 0;
      let faults = 0;
      let observations = 0;
      for (let seed = 1; seed <= SEEDS; seed++) {
        // Even seeds move the tail after the produce's answer, as deployed (functions/environment.ts).
        const result = await runTransactionSim({ seed, materializeAfterAck: seed % 2 === 0 });
        const violations = checkTransactions(result);
        if (violations.length > 0) failures.push(`seed ${seed}: ${violations.slice(0, 3).join('; ')}`);
        for (const o of result.outcomes) {
          if (o.acked === 'commit') committed++;
          else if (o.acked === 'abort') aborted++;
          else unknown++;
        }
        faults += result.faults;
        observations += result.observations.length;
      }
      expect(failures).toEqual([]);
      // The runs did what they are for: commits, aborts, crashes, faults and reads in quantity.
      expect(committed).toBeGreaterThan(SEEDS);
      expect(aborted).toBeGreaterThan(SEEDS / 10);
      expect(unknown).toBeGreaterThan(SEEDS / 10);
      expect(faults).toBeGreaterThan(SEEDS);
      expect(observations).toBeGreaterThan(SEEDS * 10);
    },
  );
});
