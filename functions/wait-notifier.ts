/**
 * Lambda entry point of the wait notifier: invoked by the metadata table's DynamoDB Stream (filtered
 * to partition state items, as the Connect runtime's trigger is), it tells the connections waiting on
 * the partitions that advanced (lib/http/wait-socket.ts notifyStreamBatch) through the WebSocket API's
 * stage (SLUICE_WAIT_ENDPOINT). A failed batch is retried by the trigger; telling twice is harmless.
 */
import { ApiGatewayConnections } from '../lib/adapters/aws/connection-notifier.js';
import type { StreamRecordLike } from '../lib/http/wait-socket.js';
import { notifyStreamBatch } from '../lib/http/wait-socket.js';
import { createLogServices, createWaiting } from '../lib/services.js';
import { ENV } from '../lib/config/environment.js';
import { depsFromEnv, instrumented, required, telemetryFromEnv } from './environment.js';

let waiters: ReturnType<typeof createWaiting>['waiters'] | undefined;

export const handler = async (event: { Records?: StreamRecordLike[] }): Promise<void> =>
  instrumented({ function: 'wait-notifier' }, async () => {
    if (!waiters) {
      const deps = depsFromEnv();
      const notifier = new ApiGatewayConnections({ endpoint: required(ENV.waitEndpoint) });
      waiters = createWaiting(deps, createLogServices(deps), notifier).waiters;
    }
    const report = await notifyStreamBatch(waiters, event.Records ?? []);
    if (report.notified + report.gone > 0) telemetryFromEnv().log('info', 'waiters told', { ...report });
  });
