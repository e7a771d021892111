/**
 * What one materialization pass costs in DynamoDB requests and item writes. Every request costs CPU
 * on both sides whatever its size, and a produce pays a sixteenth of a pass, so these counts are the
 * ones that regress silently: pin them.
 */
import { describe, expect, it } from 'vitest';
import type { MetadataCall } from '../../../../lib/adapters/forwarding.js';
import { ForwardingMetadataStore } from '../../../../lib/adapters/forwarding.js';
import { keys } from '../../../../lib/core/keys.js';
import { pageEntries } from '../../../../lib/core/log/batch-index.js';
import { materializeTail } from '../../../../lib/core/log/materialize.js';
import { decodePartitionState } from '../../../../lib/core/log/partition-codec.js';
import { encodeRecordBatch } from '../../../../protocol/record-batch/index.js';
import type { MetadataStore } from '../../../../lib/ports/metadata-store.js';
import { memorySluice } from '../../../support/log-support.js';

const BATCH = { 'content-type': 'application/vnd.kafka.record-batch' };

describe('a materialization pass', () => {
  it('writes the index, the time index, keys and producer history in a few requests', async () => {
    const s = memorySluice({ tailFlushEntries: 1000 });
    await s.http('POST', '/v1/topics', { name: 't', partitions: 1 });
    const topic = await s.sluice.catalog.get('t');
    const producers = [
      (await s.http('POST', '/v1/producers')).body.producerId as number,
      (await s.http('POST', '/v1/producers')).body.producerId as number,
    ];
    // 16 entries with rising timestamps: 6 batches from each of two idempotent producers, 4 JSON
    // produces with an Idempotency-Key.
    const seqs = [0, 0];
    for (let i = 0; i < 16; i++) {
      const timestamp = 1_000 + i;
      if (i % 4 === 3) {
        const r = await s.http(
          'POST',
          '/v1/topics/t/records',
          { records: [{ value: `k${i}`, partition: 0, timestamp }] },
          { 'idempotency-key': `key-${i}` },
        );
        expect(r.status).toBe(200);
        continue;
      }
      const p = i % 2;
      const body = encodeRecordBatch([{ key: null, value: new Uint8Array([i]), timestamp }], {
        producerId: producers[p]!,
        producerEpoch: 0,
        baseSequence: seqs[p]!++,
      });
      expect((await s.http('POST', '/v1/topics/t/partitions/0/batches', body, BATCH)).status).toBe(200);
    }
    const stateKey = keys.partitionState(topic.topicId, 0);
    expect(decodePartitionState((await s.store.get(stateKey))!).tail).toHaveLength(16);

    const before = s.store.meter.read();
    const counted = countingStore(s.store);
    const moved = await materializeTail(counted.store, topic.topicId, 0, {
      now: s.clock.now(),
      producerExpirationMs: 86_400_000,
    });
    const after = s.store.meter.read();
    const requests = { ...counted.requests };

    expect(moved).toBe(16);
    expect(decodePartitionState((await s.store.get(stateKey))!).tail).toEqual([]);
    // One read of the partition item; one page of the batch index for the 16 entries and one
    // time-index mark for the pass (though the running max rises with every entry), each only-if-absent;
    // the 4 keys and 2 producers' history in one batch write; one trim.
    expect(requests).toEqual({ get: 1, put: 2, batchWrite: 1, update: 1 });
    expect(after.metadataWrites - before.metadataWrites).toBe(2 + 4 + 2 + 1);
    const items = s.store.dump().filter((i) => i.pk === keys.partitionPk(topic.topicId, 0));
    const pages = items.filter((i) => i.sk.startsWith('B#'));
    expect(pages.map((p) => p.sk)).toEqual([keys.batch(topic.topicId, 0, 0).sk]);
    expect(pages.flatMap(pageEntries).map((x) => x.baseOffset)).toEqual(
      Array.from({ length: 16 }, (_, i) => i),
    );
    expect(items.filter((i) => i.sk.startsWith('S#'))).toHaveLength(2);
    expect(items.filter((i) => i.sk.startsWith('K#'))).toHaveLength(4);
    expect(items.filter((i) => i.sk.startsWith('T#'))).toEqual([
      { ...keys.timeIndex(topic.topicId, 0, 1_015, 0), o: 0, p: -1 },
    ]);
  });
});

/** The store's requests by operation, as a caller makes them (the memory store's batch write puts items itself). */
const countingStore = (inner: MetadataStore) => {
  const requests: Partial<Record<MetadataCall['op'], number>> = {};
  const store = new (class extends ForwardingMetadataStore {
    protected override around<T>(call: MetadataCall, run: () => Promise<T>): Promise<T> {
      requests[call.op] = (requests[call.op] ?? 0) + 1;
      return run();
    }
  })(inner);
  return { store, requests };
};
