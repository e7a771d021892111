/** Lambda entry point: the scheduled maintenance run (EventBridge). */
import { sluiceFromEnv } from './runtime.js';

export const handler = async (): Promise<unknown> => {
  const report = await sluiceFromEnv().maintenance.run();
  console.log(JSON.stringify({ level: report.errors.length > 0 ? 'warn' : 'info', maintenance: report }));
  return report;
};
