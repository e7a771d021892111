/**
 * Lambda entry point and composition root of the scheduled maintenance run (EventBridge): segments,
 * compaction, retention, garbage collection, the sweeps of expired group members and timed-out
 * transactions, and the consumer lag report.
 */
import type { Maintenance } from '../lib/core/maintenance.js';
import type { SluiceDeps } from '../lib/services.js';
import { createGroups, createLogServices, createMaintenance, createTransactions } from '../lib/services.js';
import { depsFromEnv, instrumented, telemetryFromEnv } from './environment.js';

export const maintenanceOf = (deps: SluiceDeps): Maintenance => {
  const core = createLogServices(deps);
  const groups = createGroups(deps, core);
  const transactions = createTransactions(deps, core, groups);
  return createMaintenance(deps, core, groups, transactions);
};

let maintenance: Maintenance | undefined;

export const handler = async (): Promise<unknown> =>
  instrumented({ function: 'maintenance' }, async () => {
    maintenance ??= maintenanceOf(depsFromEnv());
    const report = await maintenance.run();
    telemetryFromEnv().log(report.errors.length > 0 ? 'warn' : 'info', 'maintenance run', {
      maintenance: report,
    });
    return report;
  });
