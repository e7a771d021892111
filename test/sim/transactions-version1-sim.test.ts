/**
 * Transactions under crashes and store faults, as Kafka clients whose EndTxn is v0-v4 run them
 * (transaction version 1: one epoch for every transaction of an instance, sequences going on), with the
 * same checker as the KIP-890 run (test/support/txn-sim.ts, txn-checker.ts).
 */
import { describe, expect, it } from 'vitest';
import { checkTransactions } from '../support/txn-checker.js';
import { runTransactionSim } from '../support/txn-sim.js';

const SEEDS = Number(process.env['TXN_SIM_SEEDS'] ?? 300);

describe('transactions simulation, transaction version 1', () => {
  it(
    `keeps every transaction all-or-none, fenced and below the LSO over ${SEEDS} seeds`,
    { timeout: 600_000 },
    async () => {
      const failures: string[] = [];
      let committed = 0;
      let aborted = 0;
      let sameEpochEnds = 0;
      for (let seed = 1; seed <= SEEDS; seed++) {
        const result = await runTransactionSim({ seed, transactionVersion: 1 });
        const violations = checkTransactions(result);
        if (violations.length > 0) failures.push(`seed ${seed}: ${violations.slice(0, 3).join('; ')}`);
        for (const o of result.outcomes) {
          if (o.acked === 'commit') committed++;
          else if (o.acked === 'abort') aborted++;
        }
        // Markers at the epoch of the transactional batches they end: no bump happened.
        sameEpochEnds += result.log.filter(
          (b, i) =>
            b.control !== undefined &&
            result.log
              .slice(0, i)
              .some(
                (d) =>
                  d.control === undefined &&
                  d.isTransactional &&
                  d.partition === b.partition &&
                  d.producerId === b.producerId &&
                  d.producerEpoch === b.producerEpoch,
              ),
        ).length;
      }
      expect(failures).toEqual([]);
      expect(committed).toBeGreaterThan(SEEDS);
      expect(aborted).toBeGreaterThan(SEEDS / 10);
      expect(sameEpochEnds).toBeGreaterThan(SEEDS);
    },
  );
});
