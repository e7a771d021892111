import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { partitionForKey } from '../../../protocol/partitioner.js';
import type { BatchOutcome } from '../../../sdk/record-accumulator.js';
import { RecordAccumulator } from '../../../sdk/record-accumulator.js';
import { SluiceError } from '../../../sdk/errors.js';
import type { Message } from '../../../sdk/types.js';

interface Sent {
  partition: number;
  values: (string | null)[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** A sender whose requests stay open until the test answers them; offsets count per partition. */
const manualSender = () => {
  const sent: Sent[] = [];
  const next = new Map<number, number>();
  const send = (partition: number, messages: Message[]) =>
    new Promise<{ baseOffset: number; lastOffset: number }>((resolve, reject) => {
      sent.push({
        partition,
        values: messages.map((m) => (m.value === null ? null : String(m.value))),
        resolve: () => {
          const base = next.get(partition) ?? 0;
          next.set(partition, base + messages.length);
          resolve({ baseOffset: base, lastOffset: base + messages.length - 1 });
        },
        reject,
      });
    });
  return { sent, send };
};

const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe('RecordAccumulator', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('sends a batch when its first record has waited linger.ms, however slowly records arrive', async () => {
    const { sent, send } = manualSender();
    const acc = new RecordAccumulator({ partitions: 1, send, lingerMs: 100 });
    await acc.append({ value: 'a' });
    await vi.advanceTimersByTimeAsync(60);
    await acc.append({ value: 'b' });
    expect(sent).toHaveLength(0);
    // 100 ms after `a`, not 100 ms after `b`.
    await vi.advanceTimersByTimeAsync(40);
    expect(sent.map((s) => s.values)).toEqual([['a', 'b']]);
  });

  it('puts keys where the Java client does and keyless records on one sticky partition per batch', async () => {
    const { sent, send } = manualSender();
    const outcomes: BatchOutcome[] = [];
    const acc = new RecordAccumulator({
      partitions: 3,
      send,
      maxBatchRecords: 2,
      stickyStart: 1,
      onBatch: (o) => outcomes.push(o),
    });
    const keyed = ['user-1', 'user-2', 'user-3'];
    for (const key of keyed)
      expect(acc.partitionOf({ key, value: 'x' })).toBe(partitionForKey(new TextEncoder().encode(key), 3));
    expect(await acc.append({ value: 'k0' })).toBe(0);
    expect(await acc.append({ value: 'k1' })).toBe(1);
    // The full batch of partition 1 was sent; keyless records move on to partition 2.
    expect(await acc.append({ value: 'k2' })).toBe(2);
    expect(await acc.append({ value: 'pinned', partition: 0 })).toBe(3);
    await acc.append({ value: 'k3' });
    expect(sent.map((s) => [s.partition, s.values])).toEqual([
      [1, ['k0', 'k1']],
      [2, ['k2', 'k3']],
    ]);
    const flushed = acc.flush();
    await settle();
    expect(sent.map((s) => s.partition)).toEqual([1, 2, 0]);
    for (const s of sent) s.resolve();
    await flushed;
    expect(outcomes).toEqual([
      { partition: 1, indices: [0, 1], baseOffset: 0, lastOffset: 1 },
      { partition: 2, indices: [2, 4], baseOffset: 0, lastOffset: 1 },
      { partition: 0, indices: [3], baseOffset: 0, lastOffset: 0 },
    ]);
    expect(() => acc.partitionOf({ value: 'x', partition: 3 })).toThrow(SluiceError);
  });

  it('cuts a batch before the record that would take it past batch.size', async () => {
    const { sent, send } = manualSender();
    // 61 bytes of batch header, 21 + value bytes per record.
    const acc = new RecordAccumulator({ partitions: 1, send, batchSize: 61 + 3 * 121 });
    for (let i = 0; i < 4; i++) await acc.append({ value: String(i).repeat(100) });
    expect(sent.map((s) => s.values.length)).toEqual([3]);
    void acc.flush();
    await settle();
    // One batch per partition in flight: the second waits for the first answer.
    expect(sent).toHaveLength(1);
    sent[0]!.resolve();
    await settle();
    expect(sent.map((s) => s.values.length)).toEqual([3, 1]);
  });

  it('fails the later batches of a failed partition without sending them; other partitions go on', async () => {
    const { sent, send } = manualSender();
    const outcomes: BatchOutcome[] = [];
    const acc = new RecordAccumulator({
      partitions: 2,
      send,
      maxBatchRecords: 1,
      onBatch: (o) => outcomes.push(o),
    });
    await acc.append({ value: 'a', partition: 0 });
    await acc.append({ value: 'b', partition: 0 });
    await acc.append({ value: 'c', partition: 1 });
    const error = new SluiceError('MESSAGE_TOO_LARGE', 'too big', { retriable: false, status: 413 });
    sent[0]!.reject(error);
    await settle();
    sent[1]!.resolve();
    await acc.flush();
    expect(sent.map((s) => s.values)).toEqual([['a'], ['c']]);
    expect(outcomes).toEqual([
      { partition: 0, indices: [0], error },
      { partition: 0, indices: [1], error },
      { partition: 1, indices: [2], baseOffset: 0, lastOffset: 0 },
    ]);
  });

  it('makes append wait while buffer.memory bytes are unsent', async () => {
    const { sent, send } = manualSender();
    const acc = new RecordAccumulator({ partitions: 1, send, maxBatchRecords: 1, bufferMemory: 200 });
    await acc.append({ value: 'x'.repeat(100) });
    await acc.append({ value: 'y'.repeat(100) });
    let third = false;
    const appending = acc.append({ value: 'z' }).then(() => (third = true));
    await settle();
    expect(third).toBe(false);
    sent[0]!.resolve();
    await appending;
    expect(third).toBe(true);
  });
});
