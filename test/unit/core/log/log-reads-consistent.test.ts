/**
 * The log's reads that decide what to write, or what offset to answer, ask for strongly consistent
 * reads: an eventually consistent partition item, producer history or time mark could be a moment old
 * (a commit just made, a mark just written). The in-memory store answers consistently whatever is
 * asked, so these tests pin what each read asks for.
 */
import { describe, expect, it, vi } from 'vitest';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import { keys, pad } from '../../../../lib/core/keys.js';
import { readPartitionState } from '../../../../lib/core/log/context.js';
import { materializeTail } from '../../../../lib/core/log/materialize.js';
import { decodePartitionState, initialPartitionState } from '../../../../lib/core/log/partition-codec.js';
import { findMaterializedBatch } from '../../../../lib/core/log/producer-history.js';
import { firstEntryReaching } from '../../../../lib/core/log/time-index.js';
import type { Topic } from '../../../../lib/core/topics/model.js';

const TOPIC: Topic = {
  name: 't',
  topicId: 'topic',
  partitions: 1,
  replicationFactor: 1,
  configs: {},
  createdAt: 0,
};

const setup = () => {
  const store = new MemoryMetadataStore();
  return { store, gets: vi.spyOn(store, 'get'), queries: vi.spyOn(store, 'query') };
};

describe('reads of the log', () => {
  it('of the partition item ask for a consistent read', async () => {
    const s = setup();
    await expect(readPartitionState(s.store, TOPIC, 0)).rejects.toThrow();
    expect(s.gets.mock.calls).toEqual([[keys.partitionState(TOPIC.topicId, 0), { consistent: true }]]);
  });

  it('of a materializer read the partition item consistently, and only when it was not given one', async () => {
    const s = setup();
    const options = { now: 0, producerExpirationMs: 1 };
    expect(await materializeTail(s.store, TOPIC.topicId, 0, options)).toBe(0);
    expect(s.gets.mock.calls).toEqual([[keys.partitionState(TOPIC.topicId, 0), { consistent: true }]]);
    const state = decodePartitionState(initialPartitionState(TOPIC.topicId, TOPIC.name, 0, ['s0']));
    s.gets.mockClear();
    expect(await materializeTail(s.store, TOPIC.topicId, 0, { ...options, state })).toBe(0);
    expect(s.gets).not.toHaveBeenCalled();
  });

  it('of the producer history search its newest items first, consistently', async () => {
    const s = setup();
    const batch = { producerId: 7, producerEpoch: 1, firstSequence: 0, lastSequence: 0 };
    expect(await findMaterializedBatch(s.store, TOPIC.topicId, 0, batch)).toBeUndefined();
    expect(s.queries.mock.calls).toEqual([
      [
        {
          pk: keys.partitionPk(TOPIC.topicId, 0),
          sk: { beginsWith: keys.producerBatchesPrefix(7, 1) },
          reverse: true,
          limit: 4,
          consistent: true,
        },
      ],
    ]);
  });

  it('of the time index ask for the 8 marks from the timestamp on, consistently', async () => {
    const s = setup();
    const state = decodePartitionState(initialPartitionState(TOPIC.topicId, TOPIC.name, 0, ['s0']));
    expect(await firstEntryReaching(s.store, TOPIC.topicId, 0, state, 1_234)).toBeUndefined();
    expect(await firstEntryReaching(s.store, TOPIC.topicId, 0, state, -5)).toBeUndefined();
    const marks = s.queries.mock.calls.filter(([input]) => 'between' in (input.sk ?? {}));
    expect(marks.map(([input]) => input)).toEqual(
      [1_234, 0].map((ts) => ({
        pk: keys.partitionPk(TOPIC.topicId, 0),
        sk: { between: [`${keys.timePrefix}${pad(ts, 15)}`, `${keys.timePrefix}~`] },
        limit: 8,
        consistent: true,
      })),
    );
  });
});
