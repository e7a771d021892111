/**
 * Issue 10, class 7a: two app instances (two Lambda containers) over one storage. One deletes and
 * re-creates a topic while the other still holds the old topic in its cache: the stale instance must
 * neither acknowledge a write into the deleted topic nor serve the deleted topic's data.
 */
import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../../lib/adapters/memory/object-store.js';
import { createSluice } from '../../../functions/app.js';
import { TestClock } from '../../support/log-support.js';

const twoInstances = () => {
  const clock = new TestClock();
  const store = new MemoryMetadataStore();
  const objects = new MemoryObjectStore('s0', undefined, clock);
  let id = 0;
  const instance = () => {
    const sluice = createSluice({
      store,
      objectStores: [objects],
      clock,
      // A long cache: the window in which an instance holds a deleted topic's id.
      config: { clusterId: 'test', topicCacheTtlMs: 60_000 },
      newId: () => `id-${++id}`,
    });
    return async (method: string, path: string, body?: unknown) => {
      const [pathname, search = ''] = path.split('?');
      const reply = await sluice.router().handle({
        method,
        path: pathname!,
        query: Object.fromEntries(new URLSearchParams(search)),
        headers: {},
        body: body === undefined ? new Uint8Array() : new Uint8Array(Buffer.from(JSON.stringify(body))),
      });
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      return reply as { status: number; body: any };
    };
  };
  return { a: instance(), b: instance(), store };
};

const values = (reply: { body: { records: { value: string }[] } }) => reply.body.records.map((r) => r.value);

describe('a stale topic cache after delete and re-create', () => {
  it.each([
    ['purged at once', true],
    ['before maintenance purges it', false],
  ])('never acknowledges into the deleted topic nor serves its data (%s)', async (_, purge) => {
    const { a, b, store } = twoInstances();
    // Without the purge, the old partition items and data are still there when b comes back.
    if (!purge) {
      const batchWrite = store.batchWrite.bind(store);
      store.batchWrite = (writes) => (writes.deletes?.length ? Promise.resolve() : batchWrite(writes));
    }
    expect((await a('POST', '/v1/topics', { name: 't', partitions: 1 })).status).toBe(201);
    // b caches topic t (the first incarnation) by producing and fetching.
    expect((await b('POST', '/v1/topics/t/records', { records: [{ value: 'old' }] })).status).toBe(200);
    expect(values(await b('GET', '/v1/topics/t/partitions/0/records'))).toEqual(['old']);

    expect((await a('DELETE', '/v1/topics/t')).status).toBe(204);
    expect((await a('POST', '/v1/topics', { name: 't', partitions: 1 })).status).toBe(201);

    // b finds its cached topic deleted and goes to the topic the name now names.
    const produced = await b('POST', '/v1/topics/t/records', { records: [{ value: 'new' }] });
    expect([produced.status, produced.body.results[0].offset]).toEqual([200, 0]);
    expect(values(await a('GET', '/v1/topics/t/partitions/0/records'))).toEqual(['new']);
    expect(values(await b('GET', '/v1/topics/t/partitions/0/records'))).toEqual(['new']);
    expect((await b('GET', '/v1/topics/t/partitions/0/offsets?at=latest')).body.offset).toBe(1);
  });
});
