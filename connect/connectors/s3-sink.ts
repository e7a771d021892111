/**
 * The S3 sink task. Records of each topic-partition fill one object at a time; an object is written
 * when it holds `flush.size` records, or when a record arrives `rotate.interval.ms` (record time) after
 * the object's first one. Its key is `{topics.dir}/{topic}/partition={p}/{topic}+{p}+{startOffset}`
 * with the start offset zero-padded to 10 digits, as Confluent's S3 sink names them.
 *
 * Exactly-once without coordination: offsets are committed only at object boundaries, and every
 * boundary is a function of the record stream alone (never of wall-clock time or of when a flush
 * happened), so a task that crashed and starts again from the committed offset cuts the same objects
 * and overwrites any it had written with identical bytes. Partial objects are never written; what is
 * buffered when the invocation ends is read again by the next one.
 */
import { createAwsClients } from '../../lib/adapters/aws/clients.js';
import { S3ObjectStore } from '../../lib/adapters/aws/s3-object-store.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';
import { StorageMeter } from '../../lib/ports/meter.js';
import type { SinkRecord, SinkTask, TaskContext, TopicPartitionOffset } from '../plugin.js';
import { BYTES_FORMAT } from './s3-sink-plugin.js';

interface OpenObject {
  topic: string;
  originalTopic: string;
  partition: number;
  startOffset: number;
  firstTimestamp: number;
  chunks: Uint8Array[];
  count: number;
}

const UTF8 = new TextEncoder();
const NEWLINE = UTF8.encode('\n');

/** Puts and bytes written by S3 sink tasks in this process (for the benchmark figures). */
export const s3SinkMeter = new StorageMeter();

export const objectKey = (
  topicsDir: string,
  topic: string,
  partition: number,
  startOffset: number,
  ext: string,
): string =>
  `${topicsDir}/${topic}/partition=${partition}/${topic}+${partition}+${String(startOffset).padStart(10, '0')}.${ext}`;

const valueBytes = (value: unknown, bytesFormat: boolean): Uint8Array => {
  if (bytesFormat) {
    if (value instanceof Uint8Array) return value;
    if (value === null || value === undefined) return new Uint8Array();
    return UTF8.encode(typeof value === 'string' ? value : JSON.stringify(value));
  }
  const json = value instanceof Uint8Array ? Buffer.from(value).toString('base64') : (value ?? null);
  return UTF8.encode(JSON.stringify(json));
};

const concat = (chunks: readonly Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
};

export class S3SinkTask implements SinkTask {
  private readonly open = new Map<string, OpenObject>();
  private readonly flushSize: number;
  private readonly rotateMs: number;
  private readonly topicsDir: string;
  private readonly bytesFormat: boolean;
  private readonly separator: Uint8Array;

  constructor(
    private readonly store: ObjectStore,
    config: Record<string, string>,
  ) {
    this.flushSize = Number(config['flush.size']);
    this.rotateMs = Number(config['rotate.interval.ms'] ?? '-1');
    this.topicsDir = config['topics.dir'] ?? 'topics';
    this.bytesFormat = config['format.class'] === BYTES_FORMAT;
    this.separator = this.bytesFormat ? UTF8.encode(config['format.bytearray.separator'] ?? '\n') : NEWLINE;
  }

  async put(records: readonly SinkRecord[]): Promise<void> {
    for (const r of records) {
      const k = `${r.topic}\u0000${r.kafkaPartition}`;
      let current = this.open.get(k);
      if (current && this.rotateMs > 0 && r.timestamp - current.firstTimestamp >= this.rotateMs) {
        await this.write(k, current);
        current = undefined;
      }
      if (!current) {
        current = {
          topic: r.topic,
          originalTopic: r.originalTopic,
          partition: r.kafkaPartition,
          startOffset: r.kafkaOffset,
          firstTimestamp: r.timestamp,
          chunks: [],
          count: 0,
        };
        this.open.set(k, current);
      }
      current.chunks.push(valueBytes(r.value, this.bytesFormat), this.separator);
      current.count += 1;
      if (current.count >= this.flushSize) await this.write(k, current);
    }
  }

  async flush(): Promise<TopicPartitionOffset[]> {
    return [...this.open.values()].map((o) => ({
      topic: o.originalTopic,
      partition: o.partition,
      offset: o.startOffset,
    }));
  }

  async close(): Promise<void> {
    this.open.clear();
  }

  private async write(k: string, o: OpenObject): Promise<void> {
    const ext = this.bytesFormat ? 'bin' : 'json';
    await this.store.put(
      objectKey(this.topicsDir, o.topic, o.partition, o.startOffset, ext),
      concat(o.chunks),
    );
    this.open.delete(k);
  }
}

export const createS3SinkTask = async (
  config: Record<string, string>,
  _context: TaskContext,
): Promise<SinkTask> => {
  const endpoint = config['store.url'];
  const { s3 } = createAwsClients({
    ...(config['s3.region'] ? { region: config['s3.region'] } : {}),
    ...(endpoint ? { endpoints: { s3: endpoint } } : {}),
  });
  const bucket = config['s3.bucket.name'] ?? '';
  return new S3SinkTask(
    new S3ObjectStore({ client: s3, bucket, id: `connect-${bucket}`, meter: s3SinkMeter }),
    config,
  );
};
