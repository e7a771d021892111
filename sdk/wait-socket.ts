/**
 * How a caught-up consumer waits (docs/api.md "Waiting on a WebSocket"): it registers its partitions
 * and positions over one WebSocket and is sent one `ready` frame when any of them has data, instead
 * of holding a long poll (a function billed while it waits). The consumer falls back to the long poll
 * whenever the socket cannot be opened or refuses a registration.
 */
import { WebSocket } from 'ws';
import type { WaitFrame, WaitSocketFrame } from '../lib/wire/types.js';

/** How a wait ended: told, the re-check timer, the caller's signal, or no usable socket. */
export type WaitOutcome = 'ready' | 'timeout' | 'aborted' | 'unavailable';

export interface WaitChannel {
  /** Registers `frame` (replacing the last registration) and waits to be told, or `timeoutMs`, or `signal`. */
  wait(frame: WaitFrame, options: { signal: AbortSignal; timeoutMs: number }): Promise<WaitOutcome>;
  close(): void;
}

export interface WebSocketChannelOptions {
  /** `ws://` or `wss://` URL of the wait socket (GET /v1/cluster's waitUrl). */
  url: string;
  /** Headers of the upgrade request (a SigV4 signature for API Gateway's IAM authorizer), made per connection. */
  headers?: (url: string) => Promise<Record<string, string>>;
  /** How long opening the socket may take before the consumer long-polls instead (default 5000 ms). */
  connectTimeoutMs?: number;
}

/** A wait channel over one WebSocket, opened on first use and again after it closes. */
export class WebSocketWaitChannel implements WaitChannel {
  private socket: WebSocket | undefined;
  private opening: Promise<WebSocket | undefined> | undefined;
  /** The wait under way: told by the socket's frames and its closing. */
  private current: ((outcome: WaitOutcome) => void) | undefined;

  constructor(private readonly options: WebSocketChannelOptions) {}

  async wait(frame: WaitFrame, { signal, timeoutMs }: { signal: AbortSignal; timeoutMs: number }) {
    if (signal.aborted) return 'aborted';
    const socket = await this.open();
    if (!socket) return 'unavailable';
    if (signal.aborted) return 'aborted';
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
      socket.send(JSON.stringify(frame), (error) => {
        if (error) done('unavailable');
      });
    });
  }

  close(): void {
    this.current?.('aborted');
    this.socket?.terminate();
    this.socket = undefined;
  }

  private open(): Promise<WebSocket | undefined> {
    if (this.socket?.readyState === WebSocket.OPEN) return Promise.resolve(this.socket);
    this.opening ??= this.connect().finally(() => (this.opening = undefined));
    return this.opening;
  }

  private async connect(): Promise<WebSocket | undefined> {
    let headers: Record<string, string>;
    try {
      headers = (await this.options.headers?.(this.options.url)) ?? {};
    } catch {
      return undefined;
    }
    const socket = new WebSocket(this.options.url, {
      headers,
      handshakeTimeout: this.options.connectTimeoutMs ?? 5_000,
    });
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
      if (this.socket === socket) this.socket = undefined;
      this.current?.('unavailable');
    });
    this.socket = socket;
    return socket;
  }

  private onFrame(text: string): void {
    let frame: WaitSocketFrame;
    try {
      frame = JSON.parse(text) as WaitSocketFrame;
    } catch {
      return;
    }
    // A refused registration: the long poll answers the same partitions with their own errors.
    if (frame?.type === 'ready') this.current?.('ready');
    else if (frame?.type === 'error') this.current?.('unavailable');
  }
}
