/**
 * GET /v1/streams and GET /v1/streams/{app}: an application's stores and tasks read from its store
 * registration, its task leases and its consumer group; plain groups are not applications; hostile
 * names and parameters are refused before anything is read.
 */
import { describe, expect, it } from 'vitest';
import { Materialized, Serdes, StreamsBuilder, Consumed } from '../../../streams/index.js';
import type { Topology } from '../../../streams/index.js';
import { describeStores, readStores, registerStores } from '../../../streams/query/registry.js';
import { SluiceClient } from '../../../sdk/client.js';
import { routerFetch } from '../../support/router-fetch.js';
import { memorySluice } from '../../support/log-support.js';

const APP = 'shop';

/** Two sub-topologies: counts of `words` (key-value), latest `blobs` by bytes key (key-value). */
const topology = (): Topology => {
  const builder = new StreamsBuilder();
  builder.stream<string, string>('words').groupByKey().count(Materialized.as('counts'));
  builder
    .stream('blobs', Consumed.with(Serdes.Bytes(), Serdes.JSON<{ v: number }>()))
    .groupByKey()
    .reduce((_a, b) => b, Materialized.as('latest'));
  return builder.build();
};

const setup = async () => {
  const m = memorySluice();
  for (const name of ['words', 'blobs'])
    expect((await m.http('POST', '/v1/topics', { name, partitions: 2 })).status).toBe(201);
  const join = async (group: string, topics: string[]) => {
    const r = await m.http('POST', `/v1/groups/${group}/heartbeat`, {
      memberId: null,
      memberEpoch: 0,
      subscribedTopics: topics,
    });
    expect(r.status).toBe(200);
    return r.body.memberId as string;
  };
  const admin = new SluiceClient({
    url: 'http://sluice.test',
    fetch: routerFetch(m.sluice.router()),
    retry: { retries: 0 },
  });
  return { ...m, join, admin };
};

describe('a Streams application', () => {
  it('records each sub-topology’s source topics when registered with its application id', async () => {
    const m = await setup();
    const described = describeStores(topology(), 2, APP);
    expect(described.subTopologies).toEqual([
      { id: 0, sources: ['words'] },
      { id: 1, sources: ['blobs'] },
    ]);
    await registerStores(m.store, APP, described);
    expect(await readStores(m.store, APP)).toEqual(described);
    // Without the id (older registrations) nothing is recorded, and a malformed record is ignored.
    expect(describeStores(topology(), 2).subTopologies).toBeUndefined();
    await m.store.put({
      pk: `ST#odd#STORES`,
      sk: 'STORES',
      partitions: 1,
      stores: {},
      subTopologies: [{ id: 'x' }, 7, { id: 2, sources: ['t'] }],
    });
    expect((await readStores(m.store, 'odd'))!.subTopologies).toEqual([{ id: 2, sources: ['t'] }]);
  });

  it('lists its stores and its tasks with the member that runs each and its lease epoch', async () => {
    const m = await setup();
    await registerStores(m.store, APP, describeStores(topology(), 2, APP));
    const member = await m.join(APP, ['words', 'blobs']);
    await m.store.put({ pk: `ST#${APP}#1_0`, sk: 'LEASE', epoch: 3 });
    const r = await m.http('GET', `/v1/streams/${APP}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      applicationId: APP,
      state: expect.stringMatching(/^(STABLE|RECONCILING|ASSIGNING)$/),
      members: 1,
      partitions: 2,
      stores: [
        { name: 'counts', kind: 'key-value', subTopology: 0, keyFormat: 'string', valueFormat: 'json' },
        { name: 'latest', kind: 'key-value', subTopology: 1, keyFormat: 'bytes', valueFormat: 'json' },
      ],
      tasks: [
        { taskId: '0_0', subTopology: 0, partition: 0, owner: member, leaseEpoch: null },
        { taskId: '0_1', subTopology: 0, partition: 1, owner: member, leaseEpoch: null },
        { taskId: '1_0', subTopology: 1, partition: 0, owner: member, leaseEpoch: 3 },
        { taskId: '1_1', subTopology: 1, partition: 1, owner: member, leaseEpoch: null },
      ],
    });
    // Through the SDK as well.
    expect((await m.admin.streams(APP).describe()).tasks.map((t) => t.owner)).toEqual([
      member,
      member,
      member,
      member,
    ]);
  });

  it('has no owners without a group, and none it cannot tell for an older registration', async () => {
    const m = await setup();
    await registerStores(m.store, APP, describeStores(topology(), 2, APP));
    const lonely = (await m.http('GET', `/v1/streams/${APP}`)).body;
    expect([lonely.state, lonely.members]).toEqual(['DEAD', 0]);
    expect(lonely.tasks.map((t: { owner: string | null }) => t.owner)).toEqual([null, null, null, null]);
    await registerStores(m.store, 'old', describeStores(topology(), 1));
    await m.join('old', ['words']);
    const old = (await m.http('GET', '/v1/streams/old')).body;
    expect(old.tasks.map((t: { taskId: string; owner: string | null }) => [t.taskId, t.owner])).toEqual([
      ['0_0', null],
      ['1_0', null],
    ]);
  });

  it('is listed among the applications; a plain consumer group is not', async () => {
    const m = await setup();
    await registerStores(m.store, APP, describeStores(topology(), 2, APP));
    await m.join(APP, ['words', 'blobs']);
    await m.join('plain', ['words']);
    const r = await m.http('GET', '/v1/streams');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      applications: [{ applicationId: APP, state: expect.any(String), members: 1, partitions: 2, stores: 2 }],
    });
    expect((await m.admin.admin().listStreamsApplications()).map((a) => a.applicationId)).toEqual([APP]);
  });

  it('refuses unknown applications, bad ids and parameters', async () => {
    const m = await setup();
    const cases: [string, number, string][] = [
      ['/v1/streams/nope', 404, 'GROUP_ID_NOT_FOUND'],
      ['/v1/streams/bad%20id', 400, 'INVALID_REQUEST'],
      [`/v1/streams/${'a'.repeat(201)}`, 400, 'INVALID_REQUEST'],
      [`/v1/streams/${APP}?x=1`, 400, 'INVALID_REQUEST'],
      ['/v1/streams?limit=5', 400, 'INVALID_REQUEST'],
    ];
    for (const [path, status, code] of cases) {
      const r = await m.http('GET', path);
      expect([path, r.status, r.body.error.code]).toEqual([path, status, code]);
    }
  });
});
