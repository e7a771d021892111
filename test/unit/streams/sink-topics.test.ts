/**
 * Issue 24: a Streams app checks its output topics when it starts (not when its first output is
 * produced, which may be a minute in), creates them only when it sets auto.create.topics.enable, and
 * its group shows the assignor that assigned its partitions (range) after it leaves. Every runner
 * (`npm run streams`, `sluice streams run`) finds the API and the state table the same way.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { topology } from '../../../examples/word-count.js';
import { SluiceClient } from '../../../sdk/client.js';
import { parseStreamsConfig } from '../../../streams/runtime/config.js';
import { KafkaStreams } from '../../../streams/runtime/kafka-streams.js';
import { resolveRunTarget } from '../../../streams/runtime/target.js';
import { MetadataStateBackend } from '../../../streams/state/metadata-backend.js';
import { routerFetch } from '../../support/router-fetch.js';
import { memorySluice } from '../../support/log-support.js';

const setup = async () => {
  const s = memorySluice();
  const client = new SluiceClient({
    url: 'http://sluice.test',
    fetch: routerFetch(s.sluice.router()),
    retry: { retries: 0 },
  });
  await client.admin().createTopic({ name: 'text-input', partitions: 3 });
  const app = (configs: Record<string, string> = {}) =>
    new KafkaStreams({
      topology: topology(),
      config: parseStreamsConfig({
        'application.id': 'wc',
        'bootstrap.servers': 'http://sluice.test',
        ...configs,
      }),
      client,
      state: new MetadataStateBackend(s.sluice.store, 'wc'),
    });
  return { ...s, client, app };
};

describe('Streams output topics at start', () => {
  it('refuses to start when an output topic is missing, naming it, and joins no group', async () => {
    const { client, app, http } = await setup();
    const streams = app();
    await expect(streams.start()).rejects.toMatchObject({
      code: 'UNKNOWN_TOPIC_OR_PARTITION',
      message: expect.stringMatching(
        /^output topic word-counts of wc does not exist: create it first \(sluice topics create word-counts --partitions 3\) or set auto\.create\.topics\.enable=true$/,
      ),
    });
    expect(streams.state).toBe('CREATED');
    expect((await http('GET', '/v1/groups')).body.groups).toEqual([]);
    await expect(client.admin().describeTopic('word-counts')).rejects.toMatchObject({
      code: 'UNKNOWN_TOPIC_OR_PARTITION',
    });
  });

  it('creates a missing output topic, as wide as the widest input, with auto.create.topics.enable=true', async () => {
    const { client, app } = await setup();
    const streams = app({ 'auto.create.topics.enable': 'true' });
    await streams.start();
    expect(streams.state).toBe('RUNNING');
    expect((await client.admin().describeTopic('word-counts')).partitions).toHaveLength(3);
    await streams.close();
  });

  it('refuses auto.create.topics.enable values other than true and false', () => {
    expect(() => parseStreamsConfig({ 'application.id': 'wc', 'auto.create.topics.enable': 'yes' })).toThrow(
      /auto\.create\.topics\.enable must be true or false, not yes/,
    );
  });

  it('leaves its group showing the range assignor that assigned its partitions', async () => {
    const { client, app, http } = await setup();
    await client.admin().createTopic({ name: 'word-counts', partitions: 3 });
    const streams = app();
    await streams.start();
    // The member joins on its first poll; on a loaded machine (a mutation run's dry run) that took over
    // expect.poll's 1 s default.
    await expect
      .poll(async () => (await http('GET', '/v1/groups/wc')).body.members?.length ?? 0, { timeout: 15_000 })
      .toBe(1);
    expect((await http('GET', '/v1/groups/wc')).body.assignor).toBe('range');
    await streams.close();
    const after = (await http('GET', '/v1/groups/wc')).body;
    expect(after.members).toEqual([]);
    expect(after.assignor).toBe('range');
  });
});

describe('one endpoint resolution for every Streams runner', () => {
  let dir = '';
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  const stackDir = async () => {
    dir = await mkdtemp(join(tmpdir(), 'sluice-target-'));
    await mkdir(join(dir, '.sluice'));
    await writeFile(
      join(dir, '.sluice', 'stack.json'),
      JSON.stringify({
        url: 'http://127.0.0.1:9999',
        table: { name: 'tbl', endpoint: 'http://127.0.0.1:7000' },
      }),
    );
    return dir;
  };

  it("finds the running npm start's URL and table in stack.json", async () => {
    const cwd = await stackDir();
    expect(await resolveRunTarget({ configs: {}, env: {}, cwd })).toEqual({
      url: 'http://127.0.0.1:9999',
      urlFrom: 'stack.json',
      table: { name: 'tbl', endpoint: 'http://127.0.0.1:7000' },
    });
  });

  it('takes SLUICE_URL over stack.json, and then not the stack’s table', async () => {
    const cwd = await stackDir();
    expect(await resolveRunTarget({ configs: {}, env: { SLUICE_URL: 'http://other:1' }, cwd })).toEqual({
      url: 'http://other:1',
      urlFrom: 'SLUICE_URL',
      table: { name: 'sluice' },
    });
  });

  it('takes bootstrap.servers over the flag and SLUICE_URL, and SLUICE_TABLE_NAME over the stack', async () => {
    const cwd = await stackDir();
    expect(
      await resolveRunTarget({
        configs: { 'bootstrap.servers': 'http://127.0.0.1:9999' },
        env: { SLUICE_URL: 'http://other:1', SLUICE_TABLE_NAME: 'mine' },
        flagUrl: 'http://flag:2',
        cwd,
      }),
    ).toEqual({ url: 'http://127.0.0.1:9999', urlFrom: 'bootstrap.servers', table: { name: 'mine' } });
    expect(
      await resolveRunTarget({
        configs: {},
        env: { SLUICE_URL: 'http://other:1' },
        flagUrl: 'http://flag:2',
        cwd,
      }),
    ).toMatchObject({ url: 'http://flag:2', urlFrom: '--url' });
  });

  it('falls back to 127.0.0.1:8787 and the table sluice with no stack running', async () => {
    dir = await mkdtemp(join(tmpdir(), 'sluice-target-'));
    expect(await resolveRunTarget({ configs: {}, env: {}, cwd: dir })).toEqual({
      url: 'http://127.0.0.1:8787',
      urlFrom: 'default',
      table: { name: 'sluice' },
    });
  });
});
