/**
 * How a caught-up consumer waits (docs/api.md "Waiting on a WebSocket"): one WebSocket that is asked
 * `hello` once and answers its connection id and a token; the consumer's fetches name them, and the
 * server registers each partition a fetch leaves caught up on the connection. The socket then sends a
 * `ready` frame when a registered partition's log passes the registered offset. No function runs while
 * the consumer waits, and a wake costs no frame in. The consumer falls back to the long poll whenever
 * the socket cannot be opened or refuses `hello`.
 */
import { WebSocket } from 'ws';
import type { HelloFrame, ReadyFrame, WaitSocketFrame } from '../lib/wire/types.js';

/** How a wait ended: told, the re-check timer, the caller's signal, or no usable socket. */
export type WaitOutcome = 'ready' | 'timeout' | 'aborted' | 'unavailable';

/** What a fetch names to register its caught-up partitions (POST /v1/fetch's `wait`). */
export interface WaitConnection {
  connectionId: string;
  token: string;
}

/** A registration told: its partition's log has passed `fetchOffset` (absent: some offset of it). */
export type ReadyPartition = ReadyFrame['partitions'][number];

export interface WaitChannel {
  /** The connection to name in fetches (opened and greeted on first use), or undefined: long-poll. */
  connection(): Promise<WaitConnection | undefined>;
  /** The registrations told since the last call (the frames that came meanwhile, in order). */
  takeReady(): ReadyPartition[];
  /**
   * Waits for a `ready` frame (at once when one came since the last takeReady), `timeoutMs`, `signal`,
   * or the socket closing (`unavailable`).
   */
  wait(options: { signal: AbortSignal; timeoutMs: number }): Promise<WaitOutcome>;
  close(): void;
}

export interface WebSocketChannelOptions {
  /** `ws://` or `wss://` URL of the wait socket (GET /v1/cluster's waitUrl). */
  url: string;
  /** Headers of the upgrade request (a SigV4 signature for API Gateway's IAM authorizer), made per connection. */
  headers?: (url: string) => Promise<Record<string, string>>;
  /** How long opening the socket and its hello may take before the consumer long-polls instead (default 5000 ms). */
  connectTimeoutMs?: number;
}

/** A wait channel over one WebSocket, opened on first use and again after it closes. */
export class WebSocketWaitChannel implements WaitChannel {
  private socket: WebSocket | undefined;
  private greeted: WaitConnection | undefined;
  private opening: Promise<WaitConnection | undefined> | undefined;
  private ready: ReadyPartition[] = [];
  /** The wait under way: told by the socket's frames and its closing. */
  private current: ((outcome: WaitOutcome) => void) | undefined;
  /** The hello under way: told by the hello frame, an error frame or the closing. */
  private hello: ((frame: HelloFrame | undefined) => void) | undefined;

  constructor(private readonly options: WebSocketChannelOptions) {}

  connection(): Promise<WaitConnection | undefined> {
    if (this.socket?.readyState === WebSocket.OPEN && this.greeted) return Promise.resolve(this.greeted);
    this.opening ??= this.connect().finally(() => (this.opening = undefined));
    return this.opening;
  }

  takeReady(): ReadyPartition[] {
    const taken = this.ready;
    this.ready = [];
    return taken;
  }

  wait({ signal, timeoutMs }: { signal: AbortSignal; timeoutMs: number }): Promise<WaitOutcome> {
    if (signal.aborted) return Promise.resolve('aborted');
    if (this.ready.length > 0) return Promise.resolve('ready');
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN) return Promise.resolve('unavailable');
    return new Promise<WaitOutcome>((resolve) => {
      const timer = setTimeout(() => done('timeout'), timeoutMs);
      const onAbort = () => done('aborted');
      const done = (outcome: WaitOutcome) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (this.current === done) this.current = undefined;
        resolve(outcome);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.current?.('aborted');
      this.current = done;
    });
  }

  close(): void {
    this.current?.('aborted');
    this.socket?.terminate();
    this.socket = undefined;
    this.greeted = undefined;
  }

  private async connect(): Promise<WaitConnection | undefined> {
    let headers: Record<string, string>;
    try {
      headers = (await this.options.headers?.(this.options.url)) ?? {};
    } catch {
      return undefined;
    }
    const timeoutMs = this.options.connectTimeoutMs ?? 5_000;
    const socket = new WebSocket(this.options.url, { headers, handshakeTimeout: timeoutMs });
    const opened = await new Promise<boolean>((resolve) => {
      socket.once('open', () => resolve(true));
      socket.once('error', () => resolve(false));
      socket.once('unexpected-response', () => resolve(false));
    });
    if (!opened) {
      socket.terminate();
      return undefined;
    }
    socket.on('error', () => undefined);
    socket.on('message', (data: Buffer) => this.onFrame(String(data)));
    socket.on('close', () => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      this.greeted = undefined;
      this.hello?.(undefined);
      this.current?.('unavailable');
    });
    this.socket = socket;
    const hello = await new Promise<HelloFrame | undefined>((resolve) => {
      const timer = setTimeout(() => settle(undefined), timeoutMs);
      const settle = (frame: HelloFrame | undefined) => {
        clearTimeout(timer);
        this.hello = undefined;
        resolve(frame);
      };
      this.hello = settle;
      socket.send(JSON.stringify({ action: 'hello' }), (error) => {
        if (error) settle(undefined);
      });
    });
    if (!hello) {
      if (this.socket === socket) this.close();
      return undefined;
    }
    // A new connection: nothing registered on it yet, nothing told.
    this.ready = [];
    this.greeted = { connectionId: hello.connectionId, token: hello.token };
    return this.greeted;
  }

  private onFrame(text: string): void {
    let frame: WaitSocketFrame;
    try {
      frame = JSON.parse(text) as WaitSocketFrame;
    } catch {
      return;
    }
    if (frame?.type === 'hello' && typeof frame.connectionId === 'string' && typeof frame.token === 'string')
      this.hello?.(frame);
    else if (frame?.type === 'ready' && Array.isArray(frame.partitions)) {
      this.ready.push(...frame.partitions);
      this.current?.('ready');
    }
    // A refused hello: the consumer long-polls.
    else if (frame?.type === 'error') this.hello?.(undefined);
  }
}
