/**
 * Maintenance reads strongly consistently wherever a stale answer would delete live data: the orphan
 * collector (a tail entry or page committed a moment ago must protect its object), the purge of a
 * deleted topic (its marker and every item), the run's scan of deleted topics, and each partition's
 * read before its steps (a stale item would index, retain or roll from an old tail). The in-memory store
 * answers every read consistently, so these tests look at what each read asks for.
 */
import { describe, expect, it, vi } from 'vitest';
import { keys } from '../../../lib/core/keys.js';
import { Maintenance } from '../../../lib/core/maintenance.js';
import { memorySluice } from '../../support/log-support.js';

const setup = async () => {
  const s = memorySluice({ tailFlushEntries: 1000 });
  expect((await s.http('POST', '/v1/topics', { name: 't', partitions: 2 })).status).toBe(201);
  expect(
    (await s.http('POST', '/v1/topics/t/records', { records: [{ value: 'v', partition: 0 }] })).status,
  ).toBe(200);
  const { topicId } = await s.sluice.catalog.get('t');
  const gets = vi.spyOn(s.store, 'get');
  const queries = vi.spyOn(s.store, 'query');
  const maintenance = new Maintenance({ log: s.sluice.log, objectStores: [s.objects] });
  return { ...s, topicId, gets, queries, maintenance };
};

describe('maintenance reads', () => {
  it('of the orphan collector are strongly consistent: the partition items and every index page', async () => {
    const s = await setup();
    await s.maintenance.collectOrphans(s.topicId, 2);
    expect(s.gets.mock.calls).toEqual([
      [keys.partitionState(s.topicId, 0), { consistent: true }],
      [keys.partitionState(s.topicId, 1), { consistent: true }],
    ]);
    const pages = s.queries.mock.calls.map(([input]) => [input.pk, input.sk, input.consistent]);
    expect(pages).toEqual(
      [0, 0, 1, 1].map((p, i) => [
        keys.partitionPk(s.topicId, p),
        { beginsWith: i % 2 === 0 ? keys.batchPrefix : keys.segmentPrefix },
        true,
      ]),
    );
  });

  it('of the purge are strongly consistent: the deleted-topic marker and every partition item', async () => {
    const s = await setup();
    await s.store.put({ ...keys.deletedTopic(s.topicId), partitions: 2, deletedAt: s.clock.now() });
    await s.maintenance.purgeTopic(s.topicId);
    expect(s.gets.mock.calls).toEqual([[keys.deletedTopic(s.topicId), { consistent: true }]]);
    expect(s.queries.mock.calls.map(([input]) => [input.pk, input.consistent])).toEqual([
      [keys.partitionPk(s.topicId, 0), true],
      [keys.partitionPk(s.topicId, 1), true],
    ]);
  });

  it("of a run read each partition's item strongly consistently before its steps", async () => {
    const s = await setup();
    await s.maintenance.run();
    // Each partition's read before its steps, then the orphan collector's, all consistent.
    const items = s.gets.mock.calls.filter(([key]) => key.sk === 'STATE');
    expect(items.map(([key, options]) => [key.pk, options])).toEqual(
      [0, 1, 0, 1].map((p) => [keys.partitionPk(s.topicId, p), { consistent: true }]),
    );
  });

  it('of a run scan the deleted topics strongly consistently', async () => {
    const s = await setup();
    await s.maintenance.run();
    const scans = s.queries.mock.calls.filter(([input]) => input.pk === keys.deletedTopicsPk);
    expect(scans.map(([input]) => input)).toEqual([{ pk: keys.deletedTopicsPk, consistent: true }]);
  });
});
