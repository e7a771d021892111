/**
 * Lambda entry point of the wait notifier: invoked by the metadata table's DynamoDB Stream (filtered
 * to partition state items, as the Connect runtime's trigger is; NEW_AND_OLD_IMAGES), it tells the
 * connections registered at offsets the partitions' high watermarks moved over
 * (lib/http/wait-socket.ts notifyStreamBatch) through the WebSocket API's stage (SLUICE_WAIT_ENDPOINT).
 * A failed batch is retried by the trigger; telling twice is harmless.
 */
import { ApiGatewayConnections } from '../lib/adapters/aws/connection-notifier.js';
import { unmarshalStreamImage } from '../lib/adapters/aws/marshal.js';
import { notifyStreamBatch } from '../lib/http/wait-socket.js';
import { createLogServices, createWaiting } from '../lib/services.js';
import { ENV } from '../lib/config/environment.js';
import { depsFromEnv, instrumented, required, telemetryFromEnv } from './environment.js';

/** The parts of a DynamoDB Streams record (Lambda's event) the notifier reads. */
export interface StreamEventRecord {
  eventSource?: string;
  dynamodb?: {
    Keys?: Record<string, { S?: string } | undefined>;
    OldImage?: Record<string, unknown>;
    NewImage?: Record<string, unknown>;
  };
}

let waiters: ReturnType<typeof createWaiting>['waiters'] | undefined;

export const handler = async (event: { Records?: StreamEventRecord[] }): Promise<void> =>
  instrumented({ function: 'wait-notifier' }, async () => {
    if (!waiters) {
      const deps = depsFromEnv();
      const notifier = new ApiGatewayConnections({ endpoint: required(ENV.waitEndpoint) });
      waiters = createWaiting(deps, createLogServices(deps), notifier).waiters;
    }
    const records = (event.Records ?? [])
      .filter((r) => r.eventSource === undefined || r.eventSource === 'aws:dynamodb')
      .map((r) => ({
        pk: r.dynamodb?.Keys?.['pk']?.S,
        sk: r.dynamodb?.Keys?.['sk']?.S,
        oldImage: unmarshalStreamImage(r.dynamodb?.OldImage),
        newImage: unmarshalStreamImage(r.dynamodb?.NewImage),
      }));
    const report = await notifyStreamBatch(waiters, records);
    if (report.notified + report.gone > 0) telemetryFromEnv().log('info', 'waiters told', { ...report });
  });
