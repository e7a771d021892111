/**
 * One client connection: cuts the byte stream into frames (int32 size + body), runs pipelined
 * requests concurrently up to a bound, and writes the answers in request order, as Kafka requires.
 * Memory stays bounded whatever the client sends: a frame larger than socket.request.max.bytes closes
 * the connection before anything is buffered for it, reading pauses while too many requests are in
 * flight, while the client does not read its answers, or while all connections together hold more
 * than queued.max.request.bytes.
 */
import type { Socket } from 'node:net';
import { KafkaProtocolError } from '../protocol/kafka/codec.js';
import type { ConnectionContext, GatewayContext } from './api.js';
import { dispatch } from './dispatch.js';

export interface ConnectionLimits {
  /** socket.request.max.bytes: the largest request frame accepted. */
  maxRequestBytes: number;
  /** Requests of one connection handled at once; reading pauses beyond it. */
  maxInFlightRequests: number;
  /** connections.max.idle.ms: a connection with nothing in flight and no bytes for this long closes. */
  connectionsMaxIdleMs: number;
  /** Unsent answer bytes after which reading pauses until the client reads. */
  maxPendingResponseBytes: number;
}

/** queued.max.request.bytes across all connections: frames being read or handled. */
export class RequestMemory {
  private used = 0;
  private readonly waiting: (() => void)[] = [];
  peak = 0;
  constructor(readonly limit: number) {}
  get inUse(): number {
    return this.used;
  }
  tryReserve(n: number): boolean {
    if (this.used > 0 && this.used + n > this.limit) return false;
    this.used += n;
    this.peak = Math.max(this.peak, this.used);
    return true;
  }
  release(n: number): void {
    this.used -= n;
    for (const wake of this.waiting.splice(0)) wake();
  }
  onRelease(wake: () => void): void {
    this.waiting.push(wake);
  }
}

export interface ConnectionEvents {
  log(line: string): void;
  closed(connection: Connection): void;
}

const HEADER_MIN_BYTES = 10; // api key, version, correlation id, client id length

export class Connection implements ConnectionContext {
  readonly attributes = new Map<string, unknown>();
  private readonly abort = new AbortController();
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** The size of the frame being read, once known and reserved. */
  private reserved = 0;
  private readonly slots: { answer: Uint8Array | null | undefined; bytes: number }[] = [];
  private inFlight = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly order = new Map<string, Promise<unknown>>();
  private waitingForMemory = false;
  /** The most requests this connection has had in flight at once (for tests and stats). */
  peakInFlight = 0;

  constructor(
    readonly id: number,
    private readonly socket: Socket,
    private readonly gateway: GatewayContext,
    private readonly limits: ConnectionLimits,
    private readonly memory: RequestMemory,
    private readonly events: ConnectionEvents,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('drain', () => this.maybeResume());
    socket.on('error', () => undefined);
    socket.on('close', () => this.onClose());
    this.touch();
  }

  get remoteAddress(): string {
    return `${this.socket.remoteAddress ?? '?'}:${this.socket.remotePort ?? 0}`;
  }
  get closed(): AbortSignal {
    return this.abort.signal;
  }

  inOrder<T>(key: string, task: () => Promise<T>): Promise<T> {
    const before = this.order.get(key) ?? Promise.resolve();
    const run = before.then(task, task);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.order.set(key, settled);
    void settled.then(() => {
      if (this.order.get(key) === settled) this.order.delete(key);
    });
    return run;
  }

  close(reason: string): void {
    if (this.socket.destroyed) return;
    this.events.log(`connection ${this.id} from ${this.remoteAddress} closed: ${reason}`);
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    this.touch();
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    this.readFrames();
  }

  private readFrames(): void {
    while (!this.socket.destroyed) {
      if (
        this.inFlight >= this.limits.maxInFlightRequests ||
        this.socket.writableLength > this.limits.maxPendingResponseBytes
      ) {
        this.socket.pause();
        return;
      }
      if (this.buffered < 4) return;
      const size = this.peekSize();
      if (size < HEADER_MIN_BYTES || size > this.limits.maxRequestBytes) {
        this.close(`a frame of ${size} bytes (socket.request.max.bytes is ${this.limits.maxRequestBytes})`);
        return;
      }
      if (this.reserved === 0) {
        if (!this.memory.tryReserve(size)) {
          this.socket.pause();
          if (!this.waitingForMemory) {
            this.waitingForMemory = true;
            this.memory.onRelease(() => {
              this.waitingForMemory = false;
              this.maybeResume();
            });
          }
          return;
        }
        this.reserved = size;
      }
      if (this.buffered < 4 + size) {
        this.socket.resume();
        return;
      }
      const frame = this.take(4 + size).subarray(4);
      this.reserved = 0;
      this.start(frame, size);
    }
  }

  private peekSize(): number {
    if (this.chunks[0]!.length < 4) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0]!.readInt32BE(0);
  }

  private take(n: number): Buffer {
    const first = this.chunks[0]!;
    let out: Buffer;
    if (first.length >= n) {
      out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
    } else {
      const all = Buffer.concat(this.chunks);
      out = all.subarray(0, n);
      this.chunks = all.length > n ? [all.subarray(n)] : [];
    }
    this.buffered -= n;
    return out;
  }

  private start(frame: Buffer, bytes: number): void {
    const slot: { answer: Uint8Array | null | undefined; bytes: number } = { answer: undefined, bytes };
    this.slots.push(slot);
    this.inFlight++;
    this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
    dispatch(frame, this.gateway, this).then(
      (answer) => {
        slot.answer = answer;
        this.finish(slot);
      },
      (error: unknown) => {
        this.finish(slot);
        if (error instanceof KafkaProtocolError) this.close(error.message);
        else this.close(`internal error: ${(error as Error)?.message ?? String(error)}`);
      },
    );
  }

  private finish(slot: { answer: Uint8Array | null | undefined; bytes: number }): void {
    this.inFlight--;
    this.memory.release(slot.bytes);
    slot.bytes = 0;
    if (slot.answer === undefined) slot.answer = null;
    // Answers leave in request order: write every finished slot at the head of the queue.
    while (this.slots.length > 0 && this.slots[0]!.answer !== undefined && this.slots[0]!.bytes === 0) {
      const head = this.slots.shift()!;
      if (head.answer && !this.socket.destroyed) this.socket.write(head.answer);
    }
    this.touch();
    this.maybeResume();
  }

  private maybeResume(): void {
    if (this.socket.destroyed) return;
    if (
      this.inFlight < this.limits.maxInFlightRequests &&
      this.socket.writableLength <= this.limits.maxPendingResponseBytes
    ) {
      this.socket.resume();
      this.readFrames();
    }
  }

  private touch(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.inFlight === 0)
        this.close(`idle for connections.max.idle.ms (${this.limits.connectionsMaxIdleMs} ms)`);
      else this.touch();
    }, this.limits.connectionsMaxIdleMs);
    this.idleTimer.unref();
  }

  private onClose(): void {
    clearTimeout(this.idleTimer);
    this.abort.abort();
    if (this.reserved > 0) this.memory.release(this.reserved);
    this.reserved = 0;
    this.chunks = [];
    this.events.closed(this);
  }
}
