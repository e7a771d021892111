/**
 * How a produce request's records are shared out among partitions (lib/core/log/partition-writes.ts
 * assignPartitions): each record's own partition, its key's, or the request's sticky one, with the
 * indexes of its records in request order and no batches yet (buildBatches makes them).
 */
import { describe, expect, it } from 'vitest';
import { assignPartitions } from '../../../../lib/core/log/partition-writes.js';
import type { ProduceRecord } from '../../../../lib/core/log/partition-writes.js';
import type { Topic } from '../../../../lib/core/topics/model.js';
import { partitionForKey } from '../../../../protocol/partitioner.js';

const topic: Topic = {
  name: 't',
  topicId: 'T',
  partitions: 4,
  replicationFactor: 1,
  configs: {},
  createdAt: 0,
};
const bytes = (s: string) => new Uint8Array(Buffer.from(s));
const record = (fields: Partial<ProduceRecord> = {}): ProduceRecord => ({
  key: null,
  value: bytes('v'),
  headers: [],
  ...fields,
});

describe('assigning a request’s records to partitions', () => {
  it('takes a record’s own partition, else its key’s, else the sticky one; no batches yet', () => {
    const keyed = partitionForKey(bytes('k'), 4);
    const sticky = (keyed + 1) % 4;
    const own = (keyed + 2) % 4;
    const writes = assignPartitions(
      topic,
      [record(), record({ key: bytes('k') }), record({ partition: own }), record()],
      sticky,
    );
    expect([...writes.values()].sort((a, b) => a.partition - b.partition)).toEqual(
      [
        { partition: sticky, indexes: [0, 3], batches: [], timestamps: [] },
        { partition: keyed, indexes: [1], batches: [], timestamps: [] },
        { partition: own, indexes: [2], batches: [], timestamps: [] },
      ].sort((a, b) => a.partition - b.partition),
    );
  });

  it('refuses a partition the topic does not have', () => {
    expect(() => assignPartitions(topic, [record({ partition: 4 })], 0)).toThrow(
      'topic t has partitions 0..3; partition 4 does not exist',
    );
  });
});
