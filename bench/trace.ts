/**
 * Per-request traces for the latency benchmark: where a produced message's time goes, from the moment
 * it is handed to the producer to its acknowledgement. The benchmark producer opens a trace per batch;
 * the SDK's HTTP call runs inside it (AsyncLocalStorage follows the SDK's promise chain) and carries the
 * trace id in a header; the in-process local stack runs the handler inside the same trace
 * (local/runtime.ts `setInvocationScope`) and a storage layer outside the latency model records
 * every S3 and DynamoDB call as a span. Benchmarks only: nothing here is in a deployed bundle.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { MetadataCall, ObjectCall, ObjectOp } from '../lib/adapters/forwarding.js';
import { ForwardingMetadataStore, ForwardingObjectStore } from '../lib/adapters/forwarding.js';
import type { ItemKey } from '../lib/ports/metadata-store.js';
import type * as RuntimeModule from '../local/runtime.js';
import type { StorageLayer } from '../local/runtime.js';
import type { FetchLike } from '../sdk/transport.js';

/** What a storage call was for, as far as the produce path goes. */
export type SpanKind = 'put' | 'commit' | 'read' | 'write';

export interface Span {
  kind: SpanKind;
  label: string;
  startMs: number;
  endMs: number;
}

/** One batch's life; times are performance.now() in this process (client and stack share it). */
export interface RequestTrace {
  id: number;
  /** When each of the batch's messages was handed to the producer. */
  handedAt: readonly number[];
  sealedAt: number;
  /** Every HTTP attempt of the batch (a retry adds one). */
  http: { startMs: number; endMs: number; status: number }[];
  handler: { startMs: number; endMs: number }[];
  spans: Span[];
  ackedAt?: number;
}

const context = new AsyncLocalStorage<RequestTrace>();
const open = new Map<number, RequestTrace>();
let nextId = 1;
export const TRACE_HEADER = 'x-sluice-bench-trace';

/** Runs `send` (the SDK call of one batch) inside a new trace, returned with its result. */
export const traced = <T>(
  handedAt: readonly number[],
  send: () => Promise<T>,
): [RequestTrace, Promise<T>] => {
  const trace: RequestTrace = {
    id: nextId++,
    handedAt,
    sealedAt: performance.now(),
    http: [],
    handler: [],
    spans: [],
  };
  open.set(trace.id, trace);
  const result = context.run(trace, send).finally(() => {
    trace.ackedAt = performance.now();
    open.delete(trace.id);
  });
  return [trace, result];
};

/** The SDK's fetch, recording each attempt and sending the trace id to the stack. */
export const tracedFetch =
  (inner: FetchLike): FetchLike =>
  async (url, init) => {
    const trace = context.getStore();
    if (!trace) return inner(url, init);
    const attempt = { startMs: performance.now(), endMs: 0, status: 0 };
    trace.http.push(attempt);
    const response = await inner(url, {
      ...init,
      headers: { ...(init.headers as Record<string, string> | undefined), [TRACE_HEADER]: String(trace.id) },
    });
    attempt.endMs = performance.now();
    attempt.status = response.status;
    return response;
  };

type Runtime = Pick<
  typeof RuntimeModule,
  'currentStorageLayer' | 'setStorageLayer' | 'setInvocationScope' | 'resetSluice'
>;

/**
 * Installs the stack side: handlers run inside the trace named by the header, and the stores (outside
 * the latency model, so spans include the modelled wait) record spans. `base` replaces the stack's own
 * layer while tracing. Returns the uninstaller.
 */
export const installTracing = (runtime: Runtime, base?: StorageLayer): (() => void) => {
  const previous = runtime.currentStorageLayer();
  const layer = base ?? previous;
  runtime.setInvocationScope((_job, event, invoke) => {
    const id = Number(event.headers?.[TRACE_HEADER] ?? event.headers?.[TRACE_HEADER.toUpperCase()]);
    const trace = open.get(id);
    if (!trace) return invoke();
    const span = { startMs: performance.now(), endMs: 0 };
    trace.handler.push(span);
    return context.run(trace, invoke).finally(() => (span.endMs = performance.now()));
  });
  runtime.setStorageLayer((storage) => {
    const inner = layer ? layer(storage) : storage;
    return {
      store: new TracedMetadataStore(inner.store),
      objectStores: inner.objectStores.map((s) => new TracedObjectStore(s)),
    };
  });
  return () => {
    runtime.setInvocationScope(undefined);
    runtime.setStorageLayer(previous);
  };
};

const record = async <T>(kind: SpanKind, label: string, op: () => Promise<T>): Promise<T> => {
  const trace = context.getStore();
  if (!trace) return op();
  const span: Span = { kind, label, startMs: performance.now(), endMs: 0 };
  trace.spans.push(span);
  try {
    return await op();
  } finally {
    span.endMs = performance.now();
  }
};

/** An item's kind by its sort key's prefix (`STATE`, `B#`, `T#`, `S#`, `K#`, …). */
const itemKind = (key: ItemKey): string => {
  const sk = String(key['sk'] ?? '');
  return sk.includes('#') ? `${sk.slice(0, sk.indexOf('#'))}#` : sk;
};

const isCommit = (call: MetadataCall): boolean =>
  call.op === 'update' &&
  call.key?.sk === 'STATE' &&
  (call.actions ?? []).some((a) => 'append' in a && a.set === 'tail');

/** What a metadata call was for, and its span's label. */
const metadataSpan = (call: MetadataCall): [SpanKind, string] => {
  if (isCommit(call)) return ['commit', 'ddb.update STATE (commit)'];
  const kind: SpanKind = call.op === 'get' || call.op === 'query' ? 'read' : 'write';
  const keyed = call.op === 'get' || call.op === 'put' || call.op === 'update' || call.op === 'delete';
  return [kind, keyed && call.key ? `ddb.${call.op} ${itemKind(call.key)}` : `ddb.${call.op}`];
};

class TracedMetadataStore extends ForwardingMetadataStore {
  protected override around<T>(call: MetadataCall, run: () => Promise<T>): Promise<T> {
    const [kind, label] = metadataSpan(call);
    return record(kind, label, run);
  }
}

const objectSpanKinds: Record<ObjectOp, SpanKind> = {
  put: 'put',
  get: 'read',
  delete: 'write',
  list: 'read',
};

class TracedObjectStore extends ForwardingObjectStore {
  protected override around<T>(call: ObjectCall, run: () => Promise<T>): Promise<T> {
    return record(objectSpanKinds[call.op], `s3.${call.op} ${this.inner.id}`, run);
  }
}
