/**
 * One more app instance for `npm run bench:quotas`: the local stack's HTTP server (the same handlers
 * `npm start` serves) over the emulators, table and buckets another stack already runs, found through
 * AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL_DYNAMODB and SLUICE_* in the environment. Prints its URL as one
 * JSON line and stops on SIGTERM.
 */
import { startLocalStack } from '../local/stack.js';

const stack = await startLocalStack({ port: 0, maintenanceIntervalMs: 0 });
process.stdout.write(`${JSON.stringify({ url: stack.url })}\n`);
const stop = () => {
  void stack.stop().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
