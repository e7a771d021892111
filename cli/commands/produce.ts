/**
 * `produce`, after kafka-console-producer.sh: records from `--value` or from stdin one per line (with
 * `--separator`, the key before it, like parse.key/key.separator), sent in batches of requests one at a
 * time so records keep their order, with a progress line and a per-partition summary.
 */
import { randomUUID } from 'node:crypto';
import type { Encoding, Header, ProduceRecord, ProduceResult } from '../api.js';
import { ENCODINGS } from '../api.js';
import type { CommandSpec, Values } from '../command.js';
import { Options, UsageError, propertyMap } from '../command.js';
import { formatCount, formatDuration, formatRate, plural } from '../format.js';
import { SluiceError } from '../../sdk/errors.js';
import { readLines } from '../io.js';
import { ProgressLine } from '../progress.js';
import { renderTable } from '../table.js';

export const DEFAULT_BATCH_RECORDS = 500;
export const DEFAULT_BATCH_BYTES = 1_048_576;
export const DEFAULT_LINGER_MS = 100;

export interface LineFormat {
  encoding: Encoding;
  /** Splits key from value at its first occurrence; undefined: the whole line is the value. */
  separator?: string;
  /** A value equal to this is sent as null (a tombstone under compaction). */
  nullMarker?: string;
}

/** One stdin line as a record's key and value; throws a UsageError naming the line when it is malformed. */
export const parseLine = (
  line: string,
  lineNumber: number,
  format: LineFormat,
): { key?: string; value: unknown } => {
  let key: string | undefined;
  let text = line;
  if (format.separator !== undefined) {
    const at = line.indexOf(format.separator);
    if (at < 0) {
      throw new UsageError(`line ${lineNumber} has no key separator ${JSON.stringify(format.separator)}`);
    }
    key = line.slice(0, at);
    text = line.slice(at + format.separator.length);
  }
  return { ...(key === undefined ? {} : { key }), value: parseValue(text, format, `line ${lineNumber}`) };
};

const parseValue = (text: string, format: LineFormat, where: string): unknown => {
  if (format.nullMarker !== undefined && text === format.nullMarker) return null;
  if (format.encoding !== 'json') return text;
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${where} is not valid JSON (--encoding json takes one JSON value per line)`);
  }
};

/**
 * The Idempotency-Key of request `n` (from 0): the user's key for the first request and `key-n` after,
 * so re-running the same input with the same key writes nothing twice.
 */
export const requestKey = (base: string, n: number): string => (n === 0 ? base : `${base}-${n}`);

interface PartitionTally {
  partition: number;
  records: number;
  firstOffset: number;
  lastOffset: number;
}

/** What was written: records per partition and their offset range, plus the first failure. */
export class ProduceSummary {
  readonly partitions = new Map<number, PartitionTally>();
  records = 0;
  requests = 0;
  failed = 0;
  firstError: SluiceError | undefined;

  add(results: readonly ProduceResult[]): void {
    this.requests += 1;
    for (const result of results) {
      if ('error' in result) {
        this.failed += 1;
        this.firstError ??= new SluiceError(result.error.code, result.error.message, {
          retriable: result.error.retriable,
        });
        continue;
      }
      this.records += 1;
      const tally = this.partitions.get(result.partition);
      if (!tally) {
        this.partitions.set(result.partition, {
          partition: result.partition,
          records: 1,
          firstOffset: result.offset,
          lastOffset: result.offset,
        });
      } else {
        tally.records += 1;
        tally.firstOffset = Math.min(tally.firstOffset, result.offset);
        tally.lastOffset = Math.max(tally.lastOffset, result.offset);
      }
    }
  }

  sorted(): PartitionTally[] {
    return [...this.partitions.values()].sort((a, b) => a.partition - b.partition);
  }

  render(topic: string, elapsedMs: number): string {
    const head =
      `Produced ${plural(this.records, 'record')} to ${topic} in ${plural(this.requests, 'request')} ` +
      `(${formatDuration(elapsedMs)}, ${formatRate(this.records, elapsedMs)})` +
      (this.failed > 0 ? `; ${plural(this.failed, 'record')} failed.` : '.');
    if (this.partitions.size === 0) return head;
    const table = renderTable(
      [
        { header: 'PARTITION', value: (t) => t.partition },
        { header: 'RECORDS', value: (t) => t.records },
        { header: 'FIRST OFFSET', value: (t) => t.firstOffset },
        { header: 'LAST OFFSET', value: (t) => t.lastOffset },
      ],
      this.sorted(),
    );
    return `${head}\n${table}`;
  }

  toJSON(topic: string, elapsedMs: number): unknown {
    return {
      topic,
      records: this.records,
      failed: this.failed,
      requests: this.requests,
      elapsedMs: Math.round(elapsedMs),
      partitions: this.sorted(),
    };
  }
}

/** Record sizes as the request body carries them, to cut batches below the body limit. */
const recordBytes = (record: ProduceRecord): number => Buffer.byteLength(JSON.stringify(record));

const LINGERED = Symbol('lingered');

export const produce: CommandSpec = {
  words: ['produce'],
  summary: 'Write records to a topic, from --value arguments or from stdin one per line.',
  args: [{ name: 'topic', required: true, description: 'topic to write to' }],
  options: {
    value: {
      type: 'string',
      multiple: true,
      valueName: 'V',
      description: 'a record value (else stdin lines)',
    },
    key: { type: 'string', valueName: 'K', description: 'the key of every record' },
    separator: {
      type: 'string',
      valueName: 'S',
      description: 'stdin lines are KEY S VALUE, split at the first S (parse.key)',
    },
    partition: { type: 'string', valueName: 'P', description: 'write every record to partition P' },
    encoding: {
      type: 'string',
      valueName: 'E',
      description: 'utf8 (default) | base64 (values are base64 bytes) | json (values are JSON)',
    },
    header: { type: 'string', multiple: true, valueName: 'K=V', description: 'a header on every record' },
    'null-marker': { type: 'string', valueName: 'S', description: 'a value equal to S is sent as null' },
    'idempotency-key': {
      type: 'string',
      valueName: 'K',
      description: 'exactly-once key of the first request; request n carries K-n',
    },
    acks: { type: 'string', valueName: 'A', description: 'all (default) | 1' },
    'batch-records': {
      type: 'string',
      valueName: 'N',
      description: `records per request (default ${DEFAULT_BATCH_RECORDS})`,
    },
    'batch-bytes': {
      type: 'string',
      valueName: 'N',
      description: `request body size to stay under (default ${DEFAULT_BATCH_BYTES})`,
    },
    'linger-ms': {
      type: 'string',
      valueName: 'MS',
      description: `a record waits at most MS for its batch to fill (linger.ms, default ${DEFAULT_LINGER_MS})`,
    },
    property: {
      type: 'string',
      multiple: true,
      valueName: 'K=V',
      description: 'kafka-console-producer: parse.key=true, key.separator=S (default a tab), null.marker=S',
    },
    'producer-property': {
      type: 'string',
      multiple: true,
      valueName: 'K=V',
      description: 'linger.ms=MS, acks=all|1, batch.size=BYTES',
    },
  },
  examples: [
    'sluice produce orders --key user-1 --value hello --value world',
    "printf 'user-1:hello\\nuser-2:world\\n' | sluice produce orders --separator :",
    'sluice produce events --encoding json < events.jsonl',
  ],
  async run(ctx, { args: [topic], values }) {
    const options = new Options(withProducerProperties(values), produce);
    const encoding = options.choice('encoding', ENCODINGS) ?? 'utf8';
    const separator = options.string('separator');
    const key = options.string('key');
    const partition = options.int('partition');
    const nullMarker = options.string('null-marker');
    const acks = options.choice('acks', ['all', '1'] as const);
    const maxRecords = options.int('batch-records', { min: 1, max: 100_000 }) ?? DEFAULT_BATCH_RECORDS;
    const maxBytes = options.int('batch-bytes', { min: 1 }) ?? DEFAULT_BATCH_BYTES;
    const lingerMs = options.int('linger-ms') ?? DEFAULT_LINGER_MS;
    const idempotencyKey = options.string('idempotency-key');
    if (idempotencyKey !== undefined && (idempotencyKey.length < 1 || idempotencyKey.length > 120)) {
      throw new UsageError('--idempotency-key must be 1-120 characters (request n appends -n)', produce);
    }
    const valueArgs = options.list('value');
    if (separator !== undefined && (valueArgs.length > 0 || key !== undefined)) {
      throw new UsageError('--separator splits stdin lines; it does not go with --value or --key', produce);
    }
    if (separator === '') throw new UsageError('--separator must not be empty', produce);
    const headers: Header[] = Object.entries(options.keyValues('header') ?? {}).map(([k, v]) => ({
      key: k,
      value: v,
    }));
    const format: LineFormat = {
      encoding,
      ...(separator === undefined ? {} : { separator }),
      ...(nullMarker === undefined ? {} : { nullMarker }),
    };
    const toRecord = ({ key: lineKey, value }: { key?: string; value: unknown }): ProduceRecord => ({
      ...(lineKey !== undefined ? { key: lineKey } : key !== undefined ? { key } : {}),
      value,
      ...(headers.length > 0 ? { headers } : {}),
      ...(partition === undefined ? {} : { partition }),
    });

    const keyBase = idempotencyKey ?? `sluice-cli-${randomUUID()}`;
    const summary = new ProduceSummary();
    const started = ctx.now();
    const progress = new ProgressLine(ctx.stderr, ctx.now, !ctx.quiet);
    let batch: ProduceRecord[] = [];
    let batchBytes = 0;
    /** When the oldest record of the batch has waited linger.ms: it goes then, however full the batch. */
    let lingerDeadline = 0;

    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      const records = batch;
      batch = [];
      batchBytes = 0;
      // Every request carries an Idempotency-Key, so the client may retry a 5xx or a timeout safely.
      const results = await ctx.api.produce(
        topic!,
        { records, encoding, ...(acks ? { acks } : {}) },
        requestKey(keyBase, summary.requests),
      );
      summary.add(results);
      progress.update(
        () =>
          `${formatCount(summary.records)} records produced, ` +
          `${formatRate(summary.records, ctx.now() - started)}`,
      );
    };
    const add = async (record: ProduceRecord): Promise<void> => {
      const size = recordBytes(record);
      if (batch.length > 0 && (batch.length >= maxRecords || batchBytes + size > maxBytes)) await flush();
      if (batch.length === 0) lingerDeadline = ctx.now() + lingerMs;
      batch.push(record);
      batchBytes += size;
    };

    let lines = 0;
    try {
      if (valueArgs.length > 0) {
        // All arguments are checked before the first request.
        const records = valueArgs.map((text, i) =>
          toRecord({ value: parseValue(text, format, `--value #${i + 1}`) }),
        );
        for (const record of records) await add(record);
      } else {
        if (ctx.stdinIsTTY) {
          const shape = separator === undefined ? 'a value' : `KEY${separator}VALUE`;
          ctx.note(`Type records, ${shape} per line; Ctrl-D sends the rest and ends.`);
        }
        const iterator = readLines(ctx.stdin ?? emptyInput())[Symbol.asyncIterator]();
        const interrupted = new Promise<typeof LINGERED>((resolve) =>
          ctx.signal.addEventListener('abort', () => resolve(LINGERED), { once: true }),
        );
        let next = iterator.next();
        while (!ctx.signal.aborted && summary.failed === 0) {
          // linger.ms is a maximum delay, as in Kafka's producer: a slow trickle (`tail -f | sluice
          // produce`) still goes out within it, not only when input pauses.
          const item =
            batch.length === 0
              ? await Promise.race([next, interrupted])
              : await raceLinger(next, Math.max(0, lingerDeadline - ctx.now()), interrupted);
          if (item === LINGERED) {
            await flush();
            continue;
          }
          if (item.done) break;
          next = iterator.next();
          lines += 1;
          if (encoding === 'json' && item.value.trim() === '') continue;
          let record: ProduceRecord;
          try {
            record = toRecord(parseLine(item.value, lines, format));
          } catch (error) {
            // What came before the malformed line is written, as kafka-console-producer would have.
            await flush();
            throw error;
          }
          await add(record);
        }
      }
      if (summary.failed === 0) await flush();
    } finally {
      progress.done();
      if (summary.requests > 0 || summary.failed > 0) {
        const elapsed = ctx.now() - started;
        await ctx.print(
          ctx.json ? JSON.stringify(summary.toJSON(topic!, elapsed)) : summary.render(topic!, elapsed),
        );
      }
    }
    if (summary.firstError) {
      const e = summary.firstError;
      throw new SluiceError(e.code, `${plural(summary.failed, 'record')} not written: ${e.message}`, {
        retriable: e.retriable,
      });
    }
    if (summary.requests === 0 && !ctx.signal.aborted) {
      throw new UsageError('no records: give --value V or pipe lines on stdin', produce);
    }
  },
};

/** The next line, or LINGERED when `ms` passes (or the run is interrupted) first. */
const raceLinger = async <T>(
  next: Promise<T>,
  ms: number,
  interrupted: Promise<typeof LINGERED>,
): Promise<T | typeof LINGERED> => {
  let timer: NodeJS.Timeout | undefined;
  const lingered = new Promise<typeof LINGERED>((resolve) => {
    timer = setTimeout(() => resolve(LINGERED), ms);
  });
  try {
    return await Promise.race([next, lingered, interrupted]);
  } finally {
    clearTimeout(timer);
  }
};

async function* emptyInput(): AsyncGenerator<string> {}

/**
 * kafka-console-producer's `--property` and `--producer-property` settings as this command's own
 * options (an explicit option wins): parse.key/key.separator → --separator, null.marker,
 * linger.ms, acks, batch.size → --batch-bytes.
 */
const withProducerProperties = (values: Values): Values => {
  const props = propertyMap(values['property'], '--property', PRODUCER_PROPERTIES, produce);
  const producer = propertyMap(
    values['producer-property'],
    '--producer-property',
    PRODUCER_SETTINGS,
    produce,
  );
  const out: Values = { ...values };
  const set = (name: string, value: string | undefined): void => {
    if (value !== undefined && out[name] === undefined) out[name] = value;
  };
  if (props.get('parse.key') === 'true') set('separator', props.get('key.separator') ?? '\t');
  else if (props.has('key.separator') && props.get('parse.key') !== 'false')
    throw new UsageError('key.separator needs --property parse.key=true', produce);
  set('null-marker', props.get('null.marker'));
  set('linger-ms', producer.get('linger.ms'));
  set('acks', producer.get('acks'));
  set('batch-bytes', producer.get('batch.size'));
  return out;
};

const PRODUCER_PROPERTIES = ['parse.key', 'key.separator', 'null.marker'] as const;
const PRODUCER_SETTINGS = ['linger.ms', 'acks', 'batch.size'] as const;
