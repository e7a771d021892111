/**
 * Unmodified Kafka clients against `npm start`'s Kafka gateway: kcat (librdkafka), kafkajs, kafka-python
 * and confluent-kafka-python. Records written over Kafka read back identically over HTTP, and records
 * written over HTTP read back identically over Kafka: keys, values, headers and timestamps.
 * (Consumer groups over the wire are issue 26 part 2; consumers here are assigned partitions.)
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NpmStart } from './npm-start.js';
import { startNpmStart } from './npm-start.js';

const run = promisify(execFile);
let sluice: NpmStart;
let bootstrap: string;

beforeAll(async () => {
  sluice = await startNpmStart({ SLUICE_STORE_COUNT: '1' });
  const stack = JSON.parse(await readFile(join(sluice.dataDir, 'stack.json'), 'utf8')) as {
    kafka?: { bootstrap: string };
  };
  bootstrap = stack.kafka!.bootstrap;
});
afterAll(async () => {
  await sluice?.stop();
});

const http = async (method: string, path: string, body?: unknown) => {
  const r = await fetch(`${sluice.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await r.text();
  return { status: r.status, json: text ? JSON.parse(text) : undefined };
};
const createTopic = (name: string, partitions = 1) => http('POST', '/v1/topics', { name, partitions });
/** Every record of a partition over HTTP, as utf8. */
const readHttp = async (topic: string, partition: number) => {
  const { json } = await http(
    'GET',
    `/v1/topics/${topic}/partitions/${partition}/records?offset=0&maxBytes=1048576`,
  );
  return json.records as {
    offset: number;
    key: string | null;
    value: string;
    timestamp: number;
    headers: { key: string; value: string }[];
  }[];
};
const kcat = async (args: string[], input?: string) => {
  const child = execFile('kcat', ['-b', bootstrap, ...args], { timeout: 30_000 });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d));
  child.stderr!.on('data', (d: Buffer) => (err += d));
  if (input !== undefined) child.stdin!.end(input);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`kcat ${args.join(' ')} exited ${code}: ${err}`);
  return out;
};

describe('npm start', () => {
  it('serves the Kafka protocol, writes its bootstrap into stack.json and says so', () => {
    expect(bootstrap).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(sluice.output()).toContain(`Kafka protocol on ${bootstrap}`);
  });
});

describe('kcat (librdkafka)', () => {
  it('lists brokers and topics with their partitions (-L)', async () => {
    await createTopic('kcat-meta', 3);
    const out = await kcat(['-L', '-J']);
    const metadata = JSON.parse(out) as {
      brokers: { id: number; name: string }[];
      topics: { topic: string; partitions: { partition: number; leader: number }[] }[];
    };
    expect(metadata.brokers).toEqual([{ id: 0, name: bootstrap }]);
    const topic = metadata.topics.find((t) => t.topic === 'kcat-meta')!;
    expect(topic.partitions.map((p) => [p.partition, p.leader])).toEqual([
      [0, 0],
      [1, 0],
      [2, 0],
    ]);
  });

  it.each(['none', 'gzip', 'snappy', 'lz4', 'zstd'])(
    'produces with %s and HTTP reads the same records',
    async (codec) => {
      const topic = `kcat-${codec}`;
      await createTopic(topic);
      const lines = Array.from(
        { length: 50 },
        (_, i) => `key-${i}:${codec} value ${i} ${'x'.repeat(i)}`,
      ).join('\n');
      await kcat(['-P', '-t', topic, '-p', '0', '-z', codec, '-K:', '-H', `codec=${codec}`], `${lines}\n`);
      const records = await readHttp(topic, 0);
      expect(records.map((r) => [r.offset, r.key, r.value, r.headers])).toEqual(
        Array.from({ length: 50 }, (_, i) => [
          i,
          `key-${i}`,
          `${codec} value ${i} ${'x'.repeat(i)}`,
          [{ key: 'codec', value: codec }],
        ]),
      );
      // And kcat consumes them back.
      const out = await kcat([
        '-C',
        '-t',
        topic,
        '-p',
        '0',
        '-o',
        'beginning',
        '-e',
        '-q',
        '-f',
        '%o|%k|%s|%h\\n',
      ]);
      expect(out.trim().split('\n')).toEqual(
        Array.from(
          { length: 50 },
          (_, i) => `${i}|key-${i}|${codec} value ${i} ${'x'.repeat(i)}|codec=${codec}`,
        ),
      );
    },
  );

  it('consumes records written over HTTP: keys, values, headers, timestamps, null key', async () => {
    await createTopic('http-to-kcat');
    const written = await http('POST', '/v1/topics/http-to-kcat/records', {
      records: [
        {
          key: 'a',
          value: 'first',
          partition: 0,
          timestamp: 1_800_000_000_001,
          headers: [{ key: 'h1', value: 'v1' }],
        },
        { key: null, value: 'second', partition: 0, timestamp: 1_800_000_000_002 },
      ],
    });
    expect(written.status).toBe(200);
    const out = await kcat([
      '-C',
      '-t',
      'http-to-kcat',
      '-p',
      '0',
      '-o',
      'beginning',
      '-e',
      '-q',
      '-Z',
      '-f',
      '%o|%k|%s|%T|%h\\n',
    ]);
    expect(out.trim().split('\n')).toEqual(['0|a|first|1800000000001|h1=v1', '1|NULL|second|1800000000002|']);
  });

  it('finds offsets by time and the ends of the log (-Q, ListOffsets)', async () => {
    await createTopic('kcat-times');
    await http('POST', '/v1/topics/kcat-times/records', {
      records: [10, 20, 30].map((t) => ({
        value: `at ${t}`,
        partition: 0,
        timestamp: 1_800_000_000_000 + t,
      })),
    });
    expect((await kcat(['-Q', '-t', 'kcat-times:0:1800000000015'])).trim()).toContain('offset 1');
    expect((await kcat(['-Q', '-t', 'kcat-times:0:-1'])).trim()).toContain('offset 3');
    expect((await kcat(['-Q', '-t', 'kcat-times:0:-2'])).trim()).toContain('offset 0');
  });
});

describe('kafkajs', () => {
  it('administers topics and produces idempotently; HTTP reads what it wrote', async () => {
    const kafka = new Kafka({ brokers: [bootstrap], clientId: 'sluice-test', logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    try {
      expect(
        await admin.createTopics({
          topics: [
            { topic: 'kjs', numPartitions: 2, configEntries: [{ name: 'retention.ms', value: '7200000' }] },
          ],
        }),
      ).toBe(true);
      expect(await admin.createTopics({ topics: [{ topic: 'kjs', numPartitions: 2 }] })).toBe(false);
      const metadata = await admin.fetchTopicMetadata({ topics: ['kjs'] });
      expect(metadata.topics[0]!.partitions.map((p) => p.partitionId).sort()).toEqual([0, 1]);
      const configs = await admin.describeConfigs({
        resources: [{ type: 2, name: 'kjs' }],
        includeSynonyms: false,
      });
      const retention = configs.resources[0]!.configEntries.find((c) => c.configName === 'retention.ms');
      expect([retention?.configValue, retention?.isDefault]).toEqual(['7200000', false]);
      await admin.createPartitions({ topicPartitions: [{ topic: 'kjs', count: 3 }] });
      expect((await http('GET', '/v1/topics/kjs')).json.partitions).toHaveLength(3);

      const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      const sent = await producer.send({
        topic: 'kjs',
        acks: -1,
        messages: Array.from({ length: 20 }, (_, i) => ({
          key: `k${i}`,
          value: `kafkajs ${i}`,
          partition: 1,
          headers: { n: String(i) },
          timestamp: String(1_800_000_000_000 + i),
        })),
      });
      await producer.disconnect();
      expect(sent).toEqual([
        expect.objectContaining({ topicName: 'kjs', partition: 1, errorCode: 0, baseOffset: '0' }),
      ]);
      const records = await readHttp('kjs', 1);
      expect(records.map((r) => [r.offset, r.key, r.value, r.timestamp, r.headers])).toEqual(
        Array.from({ length: 20 }, (_, i) => [
          i,
          `k${i}`,
          `kafkajs ${i}`,
          1_800_000_000_000 + i,
          [{ key: 'n', value: String(i) }],
        ]),
      );
      expect(await admin.fetchTopicOffsets('kjs')).toEqual(
        expect.arrayContaining([expect.objectContaining({ partition: 1, high: '20', low: '0' })]),
      );
      await admin.deleteTopics({ topics: ['kjs'] });
      expect((await http('GET', '/v1/topics/kjs')).status).toBe(404);
    } finally {
      await admin.disconnect();
    }
  });

  it('gets UNKNOWN_TOPIC_OR_PARTITION for a topic that does not exist', async () => {
    const kafka = new Kafka({
      brokers: [bootstrap],
      clientId: 'sluice-test',
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
    });
    const admin = kafka.admin();
    await admin.connect();
    try {
      await expect(admin.fetchTopicMetadata({ topics: ['no-such-topic'] })).rejects.toMatchObject({
        type: 'UNKNOWN_TOPIC_OR_PARTITION',
      });
    } finally {
      await admin.disconnect();
    }
  });
});

describe('python clients', () => {
  it('kafka-python: admin, producer and an assigned consumer; HTTP agrees', async () => {
    const { stdout } = await run(
      '/usr/bin/python3',
      ['test/integration/kafka-clients/kafka_python_client.py', bootstrap, 'kpy', '25'],
      { timeout: 90_000 },
    );
    const result = JSON.parse(stdout) as {
      listed: string[];
      offsets: number[];
      records: { offset: number; key: string; value: string; headers: string[][] }[];
      end: number;
    };
    expect(result.listed).toEqual(['kpy']);
    expect(result.offsets).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect(result.records.map((r) => [r.offset, r.key, r.value, r.headers])).toEqual(
      Array.from({ length: 25 }, (_, i) => [i, `k${i}`, `python-${i}`, [['h', String(i)]]]),
    );
    expect(result.end).toBe(25);
    const overHttp = await readHttp('kpy', 0);
    expect(overHttp.map((r) => [r.offset, r.key, r.value])).toEqual(
      result.records.map((r) => [r.offset, r.key, r.value]),
    );
  });

  it('confluent-kafka (librdkafka): admin, idempotent producer with every codec, assigned consumer; HTTP agrees', async () => {
    const { stdout } = await run(
      '/usr/bin/python3',
      ['test/integration/kafka-clients/confluent_client.py', bootstrap, 'ckp', '10'],
      { timeout: 120_000 },
    );
    const result = JSON.parse(stdout) as {
      partitions: number;
      retention: string;
      delivered: { error: string | null; offset: number }[];
      records: { offset: number; key: string; value: string; headers: string[][] }[];
      low: number;
      high: number;
    };
    expect(result.partitions).toBe(3);
    expect(result.retention).toBe('3600000');
    expect(result.delivered.map((d) => d.error)).toEqual(Array(50).fill(null));
    expect(result.delivered.map((d) => d.offset)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    const codecs = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
    const expected = codecs.flatMap((c) =>
      Array.from({ length: 10 }, (_, i) => [`${c}-${i}`, `librdkafka-${c}-${i}`, [['codec', c]]]),
    );
    expect(result.records.map((r) => [r.key, r.value, r.headers])).toEqual(expected);
    expect([result.low, result.high]).toEqual([0, 50]);
    const overHttp = await readHttp('ckp', 1);
    expect(overHttp.map((r) => [r.key, r.value, r.headers.map((h) => [h.key, h.value])])).toEqual(expected);
  });
});
