/**
 * The HTTP sink task: records are POSTed as JSON arrays of their values, `batch.max.size` at a time,
 * in offset order. A 5xx, a 429 or a network failure is retried with doubling backoff up to
 * `max.retries`, then fails the task; a 4xx other than 429 means the endpoint refuses those records:
 * each is reported errant (errors.tolerance, DLQ) and the sink goes on. Delivery is at least once: a
 * batch the endpoint took whose answer was lost is sent again.
 */
import type { SinkRecord, SinkTask, TaskContext, TopicPartitionOffset } from '../plugin.js';
import { RetriableConnectError } from '../plugin.js';

export class HttpRefused extends Error {
  constructor(
    readonly status: number,
    body: string,
  ) {
    super(`HTTP ${status}: ${body.slice(0, 500)}`);
    this.name = 'HttpRefused';
  }
}

const parseHeaders = (spec: string): Record<string, string> =>
  Object.fromEntries(
    spec
      .split('|')
      .map((h) => h.trim())
      .filter(Boolean)
      .map((h) => {
        const at = h.indexOf(':');
        return [h.slice(0, at).trim(), h.slice(at + 1).trim()];
      }),
  );

export class HttpSinkTask implements SinkTask {
  private readonly url: string;
  private readonly batchSize: number;
  private readonly headers: Record<string, string>;
  private readonly maxRetries: number;
  private readonly backoffMs: number;
  private readonly timeoutMs: number;

  constructor(
    config: Record<string, string>,
    private readonly context: TaskContext,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {
    this.url = config['http.api.url'] ?? '';
    this.batchSize = Number(config['batch.max.size'] ?? '100');
    this.headers = parseHeaders(config['headers'] ?? '');
    this.maxRetries = Number(config['max.retries'] ?? '5');
    this.backoffMs = Number(config['retry.backoff.ms'] ?? '200');
    this.timeoutMs = Number(config['request.timeout.ms'] ?? '10000');
  }

  async put(records: readonly SinkRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += this.batchSize) {
      const batch = records.slice(i, i + this.batchSize);
      try {
        await this.post(batch);
      } catch (error) {
        if (!(error instanceof HttpRefused)) throw error;
        for (const r of batch) await this.context.reportErrant(r, error);
      }
    }
  }

  async flush(): Promise<TopicPartitionOffset[]> {
    return []; // each put returns only after the endpoint acknowledged its batches
  }

  async close(): Promise<void> {}

  private async post(batch: readonly SinkRecord[]): Promise<void> {
    const body = JSON.stringify(
      batch.map((r) => (r.value instanceof Uint8Array ? Buffer.from(r.value).toString('base64') : r.value)),
    );
    for (let attempt = 0; ; attempt++) {
      let failure: Error;
      try {
        const response = await fetch(this.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...this.headers },
          body,
          signal: AbortSignal.timeout(this.timeoutMs),
        });
        const text = await response.text();
        if (response.ok) return;
        if (response.status >= 400 && response.status < 500 && response.status !== 429)
          throw new HttpRefused(response.status, text);
        failure = new RetriableConnectError(`HTTP ${response.status} from ${this.url}`);
      } catch (error) {
        if (error instanceof HttpRefused) throw error;
        failure =
          error instanceof RetriableConnectError
            ? error
            : new RetriableConnectError(`POST ${this.url} failed: ${(error as Error).message}`, error);
      }
      if (attempt >= this.maxRetries) throw failure;
      await this.sleep(this.backoffMs * 2 ** attempt);
    }
  }
}

export const createHttpSinkTask = async (
  config: Record<string, string>,
  context: TaskContext,
): Promise<SinkTask> => new HttpSinkTask(config, context);
