/** A group request's view of the catalog: each topic described once per request, never across requests. */
import { expect, it } from 'vitest';
import { TopicLookup } from '../../../../lib/core/groups/topic-lookup.js';

it('describes each topic once per lookup, keeps only id and partitions, and a new lookup asks again', async () => {
  const asked: string[] = [];
  const topics = {
    describe: async (name: string) => {
      asked.push(name);
      return name === 'gone' ? undefined : { topicId: `id-${name}`, partitions: asked.length, extra: 1 };
    },
  };
  const lookup = new TopicLookup(topics as never);
  expect(await lookup.describe('a')).toEqual({ topicId: 'id-a', partitions: 1 });
  expect(await lookup.describe('a')).toEqual({ topicId: 'id-a', partitions: 1 });
  const all = await lookup.describeAll(['b', 'a', 'gone', 'b']);
  expect([...all.entries()]).toEqual([
    ['b', { topicId: 'id-b', partitions: 2 }],
    ['a', { topicId: 'id-a', partitions: 1 }],
    ['gone', undefined],
  ]);
  expect(asked).toEqual(['a', 'b', 'gone']);
  expect(await new TopicLookup(topics as never).describe('a')).toEqual({ topicId: 'id-a', partitions: 4 });
  expect(asked).toEqual(['a', 'b', 'gone', 'a']);
});
