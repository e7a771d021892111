/** Reading a DynamoDB Streams batch of the metadata table: which topics' partitions advanced. */
import { describe, expect, it } from 'vitest';
import { topicIdsOfStreamRecords } from '../../../connect/worker/wakeup.js';

const record = (pk: string, sk: string) => ({
  eventSource: 'aws:dynamodb',
  dynamodb: { Keys: { pk: { S: pk }, sk: { S: sk } } },
});

describe('topicIdsOfStreamRecords', () => {
  it('takes the topic id of partition state items only, once each', () => {
    expect([
      ...topicIdsOfStreamRecords([
        record('P#t-1#0', 'STATE'),
        record('P#t-1#1', 'STATE'),
        record('P#t-2#12', 'STATE'),
        record('P#t-3#0', 'B#00000000000000000042'),
        record('G#connect-x', 'META'),
        record('TOPICS', 'orders'),
        { eventSource: 'aws:dynamodb' },
        { eventSource: 'aws:dynamodb', dynamodb: { Keys: { pk: { S: 'P##0' }, sk: { S: 'STATE' } } } },
      ]),
    ]).toEqual(['t-1', 't-2']);
  });
});
