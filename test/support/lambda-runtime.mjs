// One execution environment of the Lambda Invoke emulator (lambda-emulator.ts): a worker thread that
// loads a real handler module once (TypeScript through tsx, as the bundle would be plain JS in Lambda),
// then runs one event at a time, as Lambda's Node.js runtime does: async handlers, or callback
// handlers (three parameters), with a context object; a thrown error becomes Lambda's error object.
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();

const errorObject = (error) => ({
  errorType: error instanceof Error ? error.name : typeof error,
  errorMessage: error instanceof Error ? error.message : String(error),
  trace: error instanceof Error && error.stack ? error.stack.split('\n') : [],
});

let handler;
let initError;
try {
  const mod = await import(workerData.handlerUrl);
  handler = mod[workerData.exportName];
  if (typeof handler !== 'function')
    initError = {
      errorType: 'Runtime.HandlerNotFound',
      errorMessage: `${workerData.handlerName} is undefined or not exported`,
      trace: [],
    };
} catch (error) {
  initError = { ...errorObject(error), errorType: 'Runtime.ImportModuleError' };
}

const run = (event, context) => {
  if (handler.length < 3) return Promise.resolve(handler(event, context));
  return new Promise((resolve, reject) => {
    const returned = handler(event, context, (error, value) => (error ? reject(error) : resolve(value)));
    if (returned && typeof returned.then === 'function') returned.then(resolve, reject);
  });
};

parentPort.on('message', async ({ requestId, body, deadline }) => {
  if (initError) return parentPort.postMessage({ requestId, ok: false, error: initError });
  const context = {
    functionName: workerData.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: workerData.functionArn,
    memoryLimitInMB: String(workerData.memoryMb),
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${workerData.functionName}`,
    logStreamName: `emulator/${workerData.functionName}`,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  try {
    const result = await run(JSON.parse(body), context);
    parentPort.postMessage({
      requestId,
      ok: true,
      body: JSON.stringify(result === undefined ? null : result),
    });
  } catch (error) {
    parentPort.postMessage({ requestId, ok: false, error: errorObject(error) });
  }
});
parentPort.postMessage({ ready: true });
