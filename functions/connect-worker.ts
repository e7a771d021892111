/**
 * Lambda entry point: one invocation of the Connect runtime (EventBridge schedule). Every task of
 * every started connector runs for SLUICE_CONNECT_BUDGET_MS under its lease, talking to Sluice through
 * the SDK over the router in this process (no network hop, no signed call back into the API).
 */
import { randomUUID } from 'node:crypto';
import { ConnectStateStore } from '../connect/state-store.js';
import { inProcessFetch } from '../connect/runtime/in-process-fetch.js';
import type { TaskOutcome } from '../connect/runtime/worker.js';
import { ConnectWorker } from '../connect/runtime/worker.js';
import { ENV } from '../infra/config.js';
import { systemClock } from '../lib/ports/clock.js';
import { SluiceClient } from '../sdk/index.js';
import { sluiceFromEnv } from './runtime.js';

const DEFAULT_BUDGET_MS = 45_000;
const DEFAULT_LEASE_MS = 15_000;

/** A worker over this process's Sluice; the id names the container in task statuses. */
export const connectWorkerFromEnv = (): ConnectWorker => {
  const sluice = sluiceFromEnv();
  const positive = (name: string, fallback: number): number => {
    const value = Number(process.env[name] ?? fallback);
    if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
    return value;
  };
  const budgetMs = positive(ENV.connectBudgetMs, DEFAULT_BUDGET_MS);
  const leaseMs = positive(ENV.connectLeaseMs, DEFAULT_LEASE_MS);
  return new ConnectWorker({
    state: new ConnectStateStore(sluice.store),
    client: new SluiceClient({ url: 'http://sluice.internal', fetch: inProcessFetch(sluice.router()) }),
    clock: systemClock,
    workerId: `lambda-${randomUUID().slice(0, 8)}`,
    budgetMs,
    leaseMs,
    log: (entry) => console.error(JSON.stringify(entry)),
  });
};

let worker: ConnectWorker | undefined;

export const handler = async (): Promise<TaskOutcome[]> => {
  worker ??= connectWorkerFromEnv();
  const outcomes = await worker.tick();
  console.log(JSON.stringify({ level: 'info', connect: outcomes }));
  return outcomes;
};
