/**
 * `sluice streams run --until-caught-up` (and `npm run streams -- … --until-caught-up`): the runner
 * processes what the source topics hold, commits, leaves the group and returns by itself. Word count
 * has two sub-topologies joined by a repartition topic whose records the first one produces at its
 * commit: the run must go on until a round finds nothing to do, or the counts never get made.
 */
import { describe, expect, it } from 'vitest';
import { topology } from '../../../examples/word-count.js';
import { SluiceClient } from '../../../sdk/client.js';
import { runStreamsApp } from '../../../streams/runtime/run-app.js';
import { parseStreamsConfig } from '../../../streams/runtime/config.js';
import { routerFetch } from '../../support/router-fetch.js';
import { RealTimeClock, memorySluice } from '../../support/log-support.js';

const setup = async () => {
  // Real time: the app heartbeats on real timers, and a TestClock advanced by the server's long-poll
  // waits ran its 45 s session out between two heartbeats on a loaded machine (UNKNOWN_MEMBER_ID).
  const s = memorySluice({}, { clock: new RealTimeClock() });
  const client = new SluiceClient({
    url: 'http://sluice.test',
    fetch: routerFetch(s.sluice.router()),
    retry: { retries: 0 },
  });
  await client.admin().createTopic({ name: 'text-input', partitions: 2 });
  await client.admin().createTopic({ name: 'word-counts', partitions: 2 });
  const lines: string[] = [];
  const run = (stop: Promise<string>) =>
    runStreamsApp({
      topology: topology(),
      config: parseStreamsConfig({ 'application.id': 'wc', 'bootstrap.servers': 'http://sluice.test' }),
      client,
      store: s.sluice.store,
      stop,
      untilCaughtUp: true,
      print: (line) => lines.push(line),
      log: () => undefined,
    });
  return { ...s, client, run, lines };
};

const counts = async (client: SluiceClient): Promise<Map<string, string>> => {
  const latest = new Map<string, string>();
  const consumer = client.consumer();
  for (const { partition, high } of await client.admin().fetchTopicOffsets('word-counts')) {
    let offset = 0;
    while (offset < high) {
      const batch = await consumer.fetch('word-counts', partition, offset);
      for (const r of batch.records)
        latest.set(new TextDecoder().decode(r.key!), new TextDecoder().decode(r.value!));
      offset = batch.nextOffset;
    }
  }
  return latest;
};

describe('streams run --until-caught-up', () => {
  it('processes every sub-topology to the end, commits, leaves and returns by itself', async () => {
    const { client, run, lines, http } = await setup();
    await http('POST', '/v1/topics/text-input/records', {
      records: [{ value: 'hello world' }, { value: 'hello sluice' }],
    });
    const never = new Promise<string>(() => undefined);
    const processed = await run(never);
    // Both sub-topologies ran: 2 lines in, 4 words through the repartition topic.
    const total = (prefix: string) =>
      Object.entries(processed)
        .filter(([task]) => task.startsWith(prefix))
        .reduce((n, [, c]) => n + c, 0);
    expect([total('0_'), total('1_')]).toEqual([2, 4]);
    expect(Object.fromEntries(await counts(client))).toEqual({ hello: '2', world: '1', sluice: '1' });
    expect(lines.at(-1)).toMatch(/^streams: caught up; committed and left the group/);
    expect((await http('GET', '/v1/groups/wc')).body.members).toEqual([]);

    // Run again with nothing new: one round that finds nothing, and it returns.
    expect(Object.values(await run(never)).every((n) => n === 0)).toBe(true);
    // A new line: only it is processed, the counts go on from the committed state.
    await http('POST', '/v1/topics/text-input/records', { records: [{ value: 'hello again' }] });
    await run(never);
    expect((await counts(client)).get('hello')).toBe('3');
  }, 60_000);

  it('stops early, committed and out of the group, when told to stop', async () => {
    const { run, lines, http } = await setup();
    await http('POST', '/v1/topics/text-input/records', { records: [{ value: 'a b c' }] });
    const processed = await run(Promise.resolve('interrupted'));
    expect(processed).toBeDefined();
    expect(lines.at(-1)).toMatch(/^streams: interrupted; committed and left the group/);
    expect((await http('GET', '/v1/groups/wc')).body.members).toEqual([]);
  }, 60_000);
});
