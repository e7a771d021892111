/**
 * What the local stack does with the functions' telemetry (functions/telemetry.ts) instead of writing
 * it to stdout for CloudWatch: log records are printed as one readable line each, and the EMF
 * documents are kept (the newest MAX_DOCUMENTS) so tests and people can read back the metrics a
 * request emitted, at `GET /_local/metrics` on the local gateway (never deployed: API Gateway has no
 * such route).
 */
import type { TelemetrySink } from '../functions/telemetry.js';

/** One EMF document as kept: its sequence number (for `?after=`) and the document itself. */
export interface CollectedEmf {
  seq: number;
  document: Record<string, unknown>;
}

const MAX_DOCUMENTS = 10_000;

/** How a child process (the local Connect invocation) marks an EMF document on its stdout. */
export const EMF_LINE_PREFIX = 'EMF ';

export class LocalTelemetry implements TelemetrySink {
  private documents: CollectedEmf[] = [];
  private seq = 0;

  constructor(private readonly print: (line: string) => void) {}

  log(record: Record<string, unknown>): void {
    this.print(readable(record));
  }

  emf(line: string): void {
    this.documents.push({ seq: ++this.seq, document: JSON.parse(line) as Record<string, unknown> });
    if (this.documents.length > MAX_DOCUMENTS)
      this.documents.splice(0, this.documents.length - MAX_DOCUMENTS);
  }

  /** The documents kept with a sequence number above `after`. */
  read(after = 0): CollectedEmf[] {
    return this.documents.filter((d) => d.seq > after);
  }

  /** The sequence number of the newest document (0 before the first). */
  last(): number {
    return this.seq;
  }
}

const KEYS_FIRST = ['function', 'API', 'topic', 'partition', 'group', 'connector', 'requestId'];
const HIDDEN = new Set(['timestamp', 'level', 'message', 'service', 'sampling_rate', 'xray_trace_id']);

/** `12:00:01.234 ERROR request failed  function=produce API=Produce topic=orders … {rest}` */
export const readable = (record: Record<string, unknown>): string => {
  const time = typeof record['timestamp'] === 'string' ? record['timestamp'].slice(11, 23) : '';
  const level = String(record['level'] ?? 'INFO').padEnd(5);
  const keys = KEYS_FIRST.filter((k) => record[k] !== undefined).map((k) => `${k}=${String(record[k])}`);
  const rest = Object.fromEntries(
    Object.entries(record).filter(([k]) => !HIDDEN.has(k) && !KEYS_FIRST.includes(k)),
  );
  const extra = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : '';
  return `${time} ${level} ${String(record['message'] ?? '')}  ${keys.join(' ')}${extra}`.trimEnd();
};
