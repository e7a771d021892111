/**
 * A minimal Kafka protocol client over one socket for tests: sends requests encoded by the gateway's
 * own schema tables and reads answers by correlation id. Real clients (kcat, kafkajs, librdkafka,
 * kafka-python) are what the integration tests use; this one exists to send what they never would.
 */
import type { Socket } from 'node:net';
import { connect } from 'node:net';
import type { Message } from '../../protocol/kafka/codec.js';
import { decodeResponse, encodeRequest } from '../../protocol/kafka/frame.js';
import type { MessageSchema } from '../../protocol/kafka/schema.js';

export class KafkaWire {
  private buffer = Buffer.alloc(0);
  private readonly frames: Buffer[] = [];
  private waiters: (() => void)[] = [];
  private nextCorrelation = 1;
  closed = false;
  private readonly closedPromise: Promise<void>;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      while (this.buffer.length >= 4 && this.buffer.length >= 4 + this.buffer.readInt32BE(0)) {
        const size = this.buffer.readInt32BE(0);
        this.frames.push(this.buffer.subarray(4, 4 + size));
        this.buffer = this.buffer.subarray(4 + size);
      }
      this.wake();
    });
    socket.on('error', () => undefined);
    this.closedPromise = new Promise((resolve) =>
      socket.on('close', () => {
        this.closed = true;
        this.wake();
        resolve();
      }),
    );
  }

  static open(port: number, host = '127.0.0.1'): Promise<KafkaWire> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, host, () => resolve(new KafkaWire(socket)));
      socket.once('error', reject);
    });
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** The next answer frame (without its size), or null once the connection is closed. */
  async nextFrame(timeoutMs = 10_000): Promise<Buffer | null> {
    const deadline = Date.now() + timeoutMs;
    while (this.frames.length === 0) {
      if (this.closed) return null;
      if (Date.now() > deadline) throw new Error('no answer in time');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.frames.shift()!;
  }

  /** Encodes and writes a request; returns its correlation id. */
  write(
    schema: MessageSchema,
    version: number,
    body: Message,
    correlationId = this.nextCorrelation++,
  ): number {
    this.socket.write(
      encodeRequest(
        { apiKey: schema.apiKey, apiVersion: version, correlationId, clientId: 'wire-test' },
        schema,
        body,
      ),
    );
    return correlationId;
  }

  async request(
    schema: MessageSchema,
    version: number,
    body: Message,
  ): Promise<{ correlationId: number; body: Message }> {
    const id = this.write(schema, version, body);
    const frame = await this.nextFrame();
    if (!frame) throw new Error('the connection closed');
    const answer = decodeResponse(frame, schema, version);
    if (answer.correlationId !== id) throw new Error(`correlation ${answer.correlationId}, expected ${id}`);
    return answer;
  }

  /** Resolves true once the gateway closes the connection, false if it is still open after `ms`. */
  async closesWithin(ms: number): Promise<boolean> {
    return Promise.race([
      this.closedPromise.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), ms)),
    ]);
  }

  end(): void {
    this.socket.destroy();
  }
}
