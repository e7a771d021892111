/**
 * Issue 10, class 7d from the client's side: the server takes at most 99 partitions per (atomic)
 * commit, so the SDK commits a wider assignment in several commits, each all-or-nothing.
 */
import { expect, it } from 'vitest';
import { GroupMember } from '../../../sdk/group-member.js';
import { createRetrier } from '../../../sdk/retry.js';
import { Transport } from '../../../sdk/transport.js';
import { memorySluice } from '../../support/log-support.js';

it('commits 150 partitions as two commits of 99 and 51, all of them stored', async () => {
  const s = memorySluice();
  expect((await s.http('POST', '/v1/topics', { name: 'wide', partitions: 150 })).status).toBe(201);
  const commits: number[] = [];
  const transport = new Transport({
    url: 'http://sluice.test',
    fetch: async (input, init) => {
      const url = new URL(input);
      const body =
        typeof init.body === 'string' ? (JSON.parse(init.body) as { offsets?: unknown[] }) : undefined;
      if (url.pathname.endsWith('/offsets') && init.method === 'POST')
        commits.push(body?.offsets?.length ?? 0);
      const reply = await s.http(init.method ?? 'GET', `${url.pathname}${url.search}`, body);
      return new Response(reply.body === undefined ? null : JSON.stringify(reply.body), {
        status: reply.status,
      });
    },
  });
  const member = new GroupMember(transport, createRetrier({ retries: 0 }), {
    groupId: 'g',
    subscribedTopics: ['wide'],
  });
  const joined = await member.heartbeat([]);
  expect(joined.kind).toBe('assignment');
  await member.commit(
    Array.from({ length: 150 }, (_, partition) => ({ topic: 'wide', partition, offset: partition })),
  );
  expect(commits).toEqual([99, 51]);
  const stored = (await s.http('GET', '/v1/groups/g/offsets')).body.offsets as {
    partition: number;
    offset: number;
  }[];
  expect(stored.map((o) => [o.partition, o.offset]).sort((a, b) => a[0]! - b[0]!)).toEqual(
    Array.from({ length: 150 }, (_, p) => [p, p]),
  );
});
