/**
 * Segments on the local stack (DynamoDB Local, the S3 emulator, the real handlers): the maintenance
 * function rolls a partition into segment objects in the stack's own segment bucket, and every raw
 * fetch and ListOffsets answer over HTTP is the same before and after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { inject } from 'vitest';
import { createAwsClients } from '../../lib/adapters/aws/clients.js';
import { startTestStack } from './stack.js';
import type { TestStack } from './stack.js';

let t: TestStack;
const RAW = { accept: 'application/vnd.kafka.record-batch' };

beforeAll(async () => {
  t = await startTestStack();
  const configs = { 'segment.bytes': '16384', 'segment.ms': '1', 'local.retention.ms': '0' };
  expect((await t.call('POST', '/v1/topics', { name: 'rolled', partitions: 1, configs })).status).toBe(201);
});
afterAll(async () => {
  await t?.stack.stop();
});

const reads = async (offsets: readonly number[], timestamps: readonly number[]) => {
  const out = [];
  for (const offset of offsets) {
    const r = await t.call(
      'GET',
      `/v1/topics/rolled/partitions/0/records?offset=${offset}&maxBytes=6000`,
      undefined,
      RAW,
    );
    expect(r.status).toBe(200);
    out.push({
      offset,
      bytes: Buffer.from(r.bytes).toString('hex'),
      next: r.headers.get('sluice-next-offset'),
    });
  }
  for (const ts of timestamps) {
    const r = await t.call('GET', `/v1/topics/rolled/partitions/0/offsets?at=${ts}`);
    expect(r.status).toBe(200);
    out.push({ ts, answer: r.json });
  }
  return out;
};

describe('segments on the local stack', () => {
  it('rolls into the segment bucket with reads unchanged', async () => {
    const t0 = Date.now() - 60_000;
    for (let i = 0; i < 24; i++) {
      const records = Array.from({ length: 10 }, (_, j) => ({
        partition: 0,
        key: `k${j}`,
        value: `${i}-${j}-`.padEnd(200, 'v'),
        timestamp: t0 + i * 100 + j,
      }));
      expect((await t.call('POST', '/v1/topics/rolled/records', { records })).status).toBe(200);
    }
    const offsets = [0, 1, 57, 120, 199, 239];
    const timestamps = [t0, t0 + 505, t0 + 1_703, t0 + 10_000];
    // One run moves the tail into the batch index and (segment.ms of 1 ms) rolls it all.
    const before = await reads(offsets, timestamps);
    const report = (await t.stack.runMaintenance()) as { segmentsRolled: number; errors: string[] };
    expect(report.errors).toEqual([]);
    expect(report.segmentsRolled).toBeGreaterThanOrEqual(3);
    expect(await reads(offsets, timestamps)).toEqual(before);

    const { s3, dynamodb } = createAwsClients({
      endpoints: { s3: inject('s3Endpoint'), dynamodb: inject('dynamodbEndpoint') },
    });
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: process.env['SLUICE_SEGMENT_BUCKET'] }));
    s3.destroy();
    dynamodb.destroy();
    expect((listed.Contents ?? []).filter((o) => o.Key?.startsWith('g/')).length).toBe(report.segmentsRolled);
  });
});
