/**
 * Building blocks for hand-scripted scenarios (crash cases, mutation checks): a recorded sender that
 * can retry one logical write exactly, and the common ending — faults off, index, collect orphans past
 * the grace period, read everything, check the history and the stores.
 */
import { encodeRecordBatch } from '../../protocol/record-batch/index.js';
import { SluiceError } from '../../sdk/errors.js';
import type { CheckOptions } from './checker.js';
import { check } from './checker.js';
import type { BytesRecord } from './client.js';
import { renderRecord } from './client.js';
import type { SendOp } from './history.js';
import type { SimWorld } from './sim.js';
import { SIM_ORPHAN_GRACE_MS } from './sim.js';
import { checkStorage } from './storage.js';
import { finalRead } from './workload.js';

export const TOPIC = 't';

export type Kind = 'binary' | 'json';

/** A client that records its sends, for the checker. */
export const sender = (world: SimWorld, kind: Kind, name: string) => {
  let producer: { producerId: number; producerEpoch: number } | undefined;
  let sequence = 0;
  let n = 0;
  return {
    /** Prepares one logical write; `attempt()` sends it (again) and returns its offsets. */
    async prepare(records: BytesRecord[], partition = 0) {
      producer ??= kind === 'binary' ? await world.client.initProducerId() : undefined;
      const write = `${name}.w${n++}`;
      const values = records.map(renderRecord);
      const bytes =
        kind === 'binary'
          ? encodeRecordBatch(
              records.map((r) => ({ ...r, timestamp: world.clock.now() })),
              {
                producerId: producer!.producerId,
                producerEpoch: producer!.producerEpoch,
                baseSequence: sequence,
              },
            )
          : undefined;
      const idempotencyKey = `${write}-key`;
      return {
        values,
        attempt: async (): Promise<number[]> => {
          const { value, error } = await world.recorder.run<SendOp, number[]>(
            'send',
            name,
            { write, idempotent: true, partition, values },
            async () => {
              if (bytes) {
                const r = await world.client.produceBatches(TOPIC, partition, bytes);
                return values.map((_, i) => r.baseOffset + i);
              }
              const results = await world.client.produce(
                TOPIC,
                records.map((r) => ({ ...r, partition })),
                { idempotencyKey },
              );
              return results.map((r) => {
                if ('error' in r)
                  throw new SluiceError(r.error.code, 'partition failed', {
                    retriable: r.error.retriable,
                    status: r.error.retriable ? 503 : 400,
                  });
                return r.offset;
              });
            },
            (offsets) => ({ offsets }),
          );
          if (error !== undefined) throw error;
          if (kind === 'binary') sequence += records.length;
          return value!;
        },
      };
    },
  };
};

/** Faults off, index everything, age objects past the grace period, collect, read all, check. */
export const finish = async (world: SimWorld, partitions = 1, checkOptions: CheckOptions = {}) => {
  world.setFaults(false);
  const topicId = await world.topicId(TOPIC);
  for (let p = 0; p < partitions; p++) await world.maintenance.indexTail(topicId, p);
  await world.clock.advance(SIM_ORPHAN_GRACE_MS + 1);
  const orphansDeleted = await world.maintenance.collectOrphans(topicId, partitions);
  await finalRead({ client: world.client, recorder: world.recorder, topic: TOPIC, partitions });
  const report = check(world.recorder.history(), checkOptions);
  const storage = await checkStorage(world.memory.store, world.memory.objectStores, topicId, partitions);
  return { report, storage, orphansDeleted, finals: world.recorder.finals };
};
