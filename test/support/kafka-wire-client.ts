/**
 * A bare Kafka protocol client for tests: one socket, requests encoded with the gateway's own message
 * tables, answers matched by correlation id. Real clients (kafkajs, librdkafka) are tested elsewhere;
 * this one says exactly which version and which fields go on the wire.
 */
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import type { Message } from '../../protocol/kafka/codec.js';
import { decodeResponse, encodeRequest } from '../../protocol/kafka/frame.js';
import type { MessageSchema } from '../../protocol/kafka/schema.js';

export interface KafkaWire {
  // Tests read fields of many shapes; the assertions check them.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  send(schema: MessageSchema, version: number, body: Message): Promise<any>;
  close(): void;
}

export const kafkaWire = async (bootstrap: string, clientId = 'wire-test'): Promise<KafkaWire> => {
  const [host, port] = bootstrap.split(':');
  const socket: Socket = await new Promise((resolve, reject) => {
    const s = connect(Number(port), host ?? '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
  const waiting = new Map<number, (frame: Uint8Array | Error) => void>();
  let buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    while (buffer.length >= 4) {
      const size = buffer.readInt32BE(0);
      if (buffer.length < 4 + size) break;
      const frame = new Uint8Array(buffer.subarray(4, 4 + size));
      buffer = buffer.subarray(4 + size);
      const correlationId = Buffer.from(frame).readInt32BE(0);
      waiting.get(correlationId)?.(frame);
      waiting.delete(correlationId);
    }
  });
  const failAll = (why: string) => {
    for (const [id, settle] of waiting) {
      waiting.delete(id);
      settle(new Error(why));
    }
  };
  socket.on('close', () => failAll('the gateway closed the connection'));
  socket.on('error', (error) => failAll(error.message));
  let next = 1;
  return {
    send: (schema, version, body) =>
      new Promise((resolve, reject) => {
        const correlationId = next++;
        waiting.set(correlationId, (frame) => {
          if (frame instanceof Error) return reject(frame);
          try {
            resolve(decodeResponse(frame, schema, version).body);
          } catch (error) {
            reject(error as Error);
          }
        });
        socket.write(
          encodeRequest(
            { apiKey: schema.apiKey, apiVersion: version, correlationId, clientId },
            schema,
            body,
          ),
        );
      }),
    close: () => socket.destroy(),
  };
};
