import { describe, expect, it } from 'vitest';
import { topology } from '../../../examples/word-count.js';
import { Serdes, TopologyTestDriver } from '../../../streams/index.js';

describe('word count example', () => {
  it('counts words split on non-letters, lower-cased, as decimal strings, through a repartition topic', async () => {
    const driver = new TopologyTestDriver(topology(), { 'application.id': 'wordcount' });
    const input = driver.createInputTopic('text-input', Serdes.String(), Serdes.String());
    const output = driver.createOutputTopic('word-counts', Serdes.String(), Serdes.String());
    await input.pipeInput(null, 'Hello Kafka, hello   Sluice!', 5);
    await input.pipeInput(null, 'sluice-STREAMS 42 élan', 7);
    expect(output.readRecordsToList().map((r) => [r.key, r.value, r.timestamp])).toEqual([
      ['hello', '1', 5],
      ['kafka', '1', 5],
      ['hello', '2', 5],
      ['sluice', '1', 5],
      ['sluice', '2', 7],
      ['streams', '1', 7],
      ['élan', '1', 7],
    ]);
    expect(driver.getKeyValueStore<string, number>('counts-store').get('sluice')).toBe(2);
    expect(driver.producedTopicNames()).toEqual(['word-counts', 'wordcount-counts-store-repartition']);
    expect(topology().describe()).toContain('Sub-topology: 1');
  });
});
