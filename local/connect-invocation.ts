/**
 * One invocation of the connect-worker function as its own process, as the local stack's timer starts
 * it: the same handler Lambda runs, configured by the same environment. A separate process can be
 * killed (even with SIGKILL) mid-task exactly as a Lambda invocation can die.
 */
import { handler } from '../functions/connect-worker.js';
import { setTelemetrySink } from '../functions/environment.js';
import { EMF_LINE_PREFIX, readable } from './telemetry-sink.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// Log records readably, EMF documents marked, for the parent's console and its /_local/metrics.
setTelemetrySink({
  log: (record) => process.stdout.write(`${readable(record)}\n`),
  emf: (line) => process.stdout.write(`${EMF_LINE_PREFIX}${line}\n`),
});
try {
  await handler();
  process.exit(0);
} catch (error) {
  console.error(`connect invocation failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
