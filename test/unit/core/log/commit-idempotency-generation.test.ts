/**
 * A refused commit with an Idempotency-Key is retried for the key's generation only when the generation
 * condition is what failed: more than one pass past the check's generation. At exactly one pass past
 * the condition held, so a refusal the item cannot explain is reported, not retried.
 */
import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import { dataObjectKey, keys } from '../../../../lib/core/keys.js';
import { commitBatch } from '../../../../lib/core/log/commit.js';
import { initialPartitionState, stateAttr } from '../../../../lib/core/log/partition-codec.js';
import type { MetadataStore } from '../../../../lib/ports/metadata-store.js';
import { ConditionFailedError } from '../../../../lib/ports/metadata-store.js';

const TOPIC_ID = 'tid';
const NOW = 1_700_000_000_000;
const key = keys.partitionState(TOPIC_ID, 0);

/** The item at `generation`; its update refused once with the item as it is (nothing it shows failed). */
const refusedOnce = async (generation: number) => {
  const inner = new MemoryMetadataStore();
  await inner.put({
    ...initialPartitionState(TOPIC_ID, 't', 0, ['s0']),
    [stateAttr.idempotencyKeysGeneration]: generation,
  });
  let refused = 0;
  const store = Object.create(inner, {
    update: {
      value: async (...args: Parameters<MetadataStore['update']>) => {
        if (refused++ === 0) throw new ConditionFailedError(await inner.get(key));
        return inner.update(...args);
      },
    },
  }) as MetadataStore;
  return commitBatch(store, {
    topicId: TOPIC_ID,
    topic: 't',
    partition: 0,
    replica: { acks: 'all', leader: 's0', leaderEpoch: 0, isr: ['s0'] },
    entry: {
      objectKey: dataObjectKey(TOPIC_ID, 'b0'),
      position: 0,
      sizeInBytes: 71,
      offsetCount: 1,
      recordCount: 1,
      maxTimestamp: NOW,
      firstTimestamp: NOW,
    },
    idempotency: { hash: 'h1', generation: 4 },
    now: NOW,
  }).then(
    (outcome) => ({ outcome }),
    (error: { code?: string; message?: string; retriable?: boolean }) => ({
      code: error.code,
      message: error.message,
    }),
  );
};

describe('a refused commit with an Idempotency-Key', () => {
  it('is retried when the keys moved more than one pass past the check', async () => {
    expect(await refusedOnce(6)).toEqual({ outcome: { kind: 'retry' } });
  });

  it('is reported, not retried, at exactly one pass past (the generation condition held)', async () => {
    expect(await refusedOnce(5)).toEqual({
      code: 'UNKNOWN_SERVER_ERROR',
      message: 'commit on t-0 failed a condition that should have held',
    });
  });
});
