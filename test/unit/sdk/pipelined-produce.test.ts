/**
 * The SDK's producer with 5 requests in flight per partition against the real routes and core, on
 * storage whose calls take seeded random turns, so later requests often reach their commit first.
 */
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../lib/adapters/fault/random.js';
import type { MetadataStore } from '../../../lib/ports/metadata-store.js';
import { ConditionFailedError } from '../../../lib/ports/metadata-store.js';
import { SluiceClient } from '../../../sdk/client.js';
import { routerFetch } from '../../support/router-fetch.js';
import { memorySluice } from '../../support/log-support.js';

/** Every update waits 0–24 turns of the event loop first; conditional failures on the commit are counted. */
const shuffled =
  (seed: number, counts: { refused: number }) =>
  (inner: MetadataStore): MetadataStore => {
    const random = seededRandom(seed);
    const turns = async () => {
      for (let i = Math.floor(random() * 25); i > 0; i--) await new Promise((r) => setImmediate(r));
    };
    return Object.assign(Object.create(inner) as MetadataStore, {
      update: async (...args: Parameters<MetadataStore['update']>) => {
        await turns();
        return inner.update(...args).catch((error: unknown) => {
          if (error instanceof ConditionFailedError && args[0]['sk'] === 'STATE') counts.refused++;
          throw error;
        });
      },
    });
  };

const run = async (seed: number, sequenceGapWaitMs: number) => {
  const counts = { refused: 0 };
  const { sluice, http } = memorySluice({ sequenceGapWaitMs }, { wrapStore: shuffled(seed, counts) });
  expect((await http('POST', '/v1/topics', { name: 't', partitions: 1 })).status).toBe(201);
  const client = new SluiceClient({ url: 'http://sluice.invalid', fetch: routerFetch(sluice.router()) });
  const producer = client.producer();
  const calls = 40;
  const results = await Promise.all(
    Array.from({ length: calls }, (_, i) =>
      producer.sendBatch('t', 0, [{ value: `c${i}-a` }, { value: `c${i}-b` }, { value: `c${i}-c` }]),
    ),
  );
  const fetched = await http('GET', '/v1/topics/t/partitions/0/records?offset=0&maxBytes=10000000');
  const records = fetched.body.records as { offset: number; value: string }[];
  return { counts, results, records, calls };
};

describe('a pipelined idempotent producer on one partition', () => {
  it.each([
    [1, 100],
    [2, 100],
    [3, 0],
    [4, 0],
  ])('lands every call once, in call order (seed %i, server gap wait %i ms)', async (seed, waitMs) => {
    const { counts, results, records, calls } = await run(seed, waitMs);
    expect(results.map((r) => [r.baseOffset, r.lastOffset])).toEqual(
      Array.from({ length: calls }, (_, i) => [3 * i, 3 * i + 2]),
    );
    expect(records.map((r) => r.offset)).toEqual(Array.from({ length: 3 * calls }, (_, i) => i));
    expect(records.map((r) => r.value)).toEqual(
      Array.from({ length: calls }, (_, i) => [`c${i}-a`, `c${i}-b`, `c${i}-c`]).flat(),
    );
    // The shuffling did make later requests reach the commit first.
    expect(counts.refused).toBeGreaterThan(0);
  });
});
