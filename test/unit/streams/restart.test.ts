/**
 * A second instance of an application, or the same one started again, finds its repartition topics
 * already made and registers its stores again: KafkaStreams.start() against the real router (over the
 * SDK, whose errors are the SDK's own class) must take TOPIC_ALREADY_EXISTS as "made", not fail.
 */
import { describe, expect, it } from 'vitest';
import { topology } from '../../../examples/word-count.js';
import { SluiceClient } from '../../../sdk/client.js';
import { readStores } from '../../../streams/query/registry.js';
import { parseStreamsConfig } from '../../../streams/runtime/config.js';
import { KafkaStreams } from '../../../streams/runtime/kafka-streams.js';
import { MetadataStateBackend } from '../../../streams/state/metadata-backend.js';
import { routerFetch } from '../../support/router-fetch.js';
import { memorySluice } from '../../support/log-support.js';

describe('KafkaStreams.start() on an application whose repartition topic exists', () => {
  it('starts a second instance beside the first, and both register the same stores', async () => {
    const { sluice } = memorySluice();
    const client = new SluiceClient({
      url: 'http://sluice.test',
      fetch: routerFetch(sluice.router()),
      retry: { retries: 0 },
    });
    await client.admin().createTopic({ name: 'text-input', partitions: 3 });
    await client.admin().createTopic({ name: 'word-counts', partitions: 3 });
    const instance = () =>
      new KafkaStreams({
        topology: topology(),
        config: parseStreamsConfig({ 'application.id': 'wc', 'bootstrap.servers': 'http://sluice.test' }),
        client,
        state: new MetadataStateBackend(sluice.store, 'wc'),
      });
    const first = instance();
    await first.start();
    const second = instance();
    await second.start();
    expect([first.state, second.state]).toEqual(['RUNNING', 'RUNNING']);
    await Promise.all([first.close(), second.close()]);
    const repartition = await client.admin().describeTopic('wc-counts-store-repartition');
    expect(repartition.partitions).toHaveLength(3);
    expect(await readStores(sluice.store, 'wc')).toEqual({
      partitions: 3,
      stores: {
        'counts-store': { kind: 'key-value', subTopology: 1, keyFormat: 'string', valueFormat: 'json' },
      },
      // Sub-topology 1 reads the repartition topic that sub-topology 0 writes.
      subTopologies: [
        { id: 0, sources: ['text-input'] },
        { id: 1, sources: ['wc-counts-store-repartition'] },
      ],
    });
  });
});
