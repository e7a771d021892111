/** Lambda entry point: the scheduled maintenance run (EventBridge). */
import { instrumented, sluiceFromEnv, telemetryFromEnv } from './runtime.js';

export const handler = async (): Promise<unknown> =>
  instrumented({ function: 'maintenance' }, async () => {
    const report = await sluiceFromEnv().maintenance.run();
    telemetryFromEnv().log(report.errors.length > 0 ? 'warn' : 'info', 'maintenance run', {
      maintenance: report,
    });
    return report;
  });
