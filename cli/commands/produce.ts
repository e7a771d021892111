/**
 * `produce`, after kafka-console-producer.sh: records from `--value` or from stdin one per line (with
 * `--separator`, the key before it, like parse.key/key.separator), through the SDK's idempotent
 * producer: partitioned as Kafka's Java producer does, batched per partition by batch.size and
 * linger.ms (the SDK's RecordAccumulator) and sent as RecordBatches, with a progress line and a
 * per-partition summary.
 */
import type { Encoding } from '../api.js';
import { ENCODINGS } from '../api.js';
import type { CommandSpec, Values } from '../command.js';
import { Options, UsageError, propertyMap } from '../command.js';
import { formatCount, formatRate, plural } from '../format.js';
import { SluiceError } from '../../sdk/errors.js';
import type { BatchSender } from '../../sdk/record-accumulator.js';
import { RecordAccumulator } from '../../sdk/record-accumulator.js';
import type { Message } from '../../sdk/types.js';
import { decodeBytes, decodeValue } from '../../lib/wire/encoding.js';
import { readLines } from '../io.js';
import { ProduceSummary } from '../produce-summary.js';
import { ProgressLine } from '../progress.js';

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

/** Bytes of a line's key, value and the --header values, as the JSON API would decode them. */
const toBytes = (decode: () => Uint8Array | null): Uint8Array | null => {
  try {
    return decode();
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
};

const INTERRUPTED = Symbol('interrupted');

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
      description:
        'send JSON requests with Idempotency-Key K, then K-1, K-2 …: re-running the same input writes nothing twice',
    },
    acks: { type: 'string', valueName: 'A', description: 'all (default) | 1' },
    'batch-records': {
      type: 'string',
      valueName: 'N',
      description: `records per partition batch (one request) at most (default ${DEFAULT_BATCH_RECORDS})`,
    },
    'batch-bytes': {
      type: 'string',
      valueName: 'N',
      description: `bytes of a partition batch (batch.size, default ${DEFAULT_BATCH_BYTES})`,
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
    const headers = Object.entries(options.keyValues('header') ?? {}).map(([k, v]) => ({
      key: k,
      value: toBytes(() => decodeBytes(v, encoding, `--header ${k}`)),
    }));
    const format: LineFormat = {
      encoding,
      ...(separator === undefined ? {} : { separator }),
      ...(nullMarker === undefined ? {} : { nullMarker }),
    };
    const toMessage = (
      { key: lineKey, value }: { key?: string; value: unknown },
      where: string,
    ): Message => ({
      key: toBytes(() => decodeBytes(lineKey ?? key, encoding, `${where} key`)),
      value: toBytes(() => decodeValue(value, encoding, where)),
      ...(headers.length > 0 ? { headers } : {}),
      ...(partition === undefined ? {} : { partition }),
    });
    // All --value arguments are checked before anything is sent.
    const argMessages = valueArgs.map((text, i) =>
      toMessage({ value: parseValue(text, format, `--value #${i + 1}`) }, `--value #${i + 1}`),
    );

    // The partition count for the partitioner, and a clear UNKNOWN_TOPIC_OR_PARTITION before any input.
    const { partitions } = await ctx.api.describeTopic(topic!);
    if (partition !== undefined && partition >= partitions.length) {
      throw new UsageError(
        `${topic} has ${plural(partitions.length, 'partition')}; there is no partition ${partition}`,
        produce,
      );
    }
    const producer = ctx.api.producer(acks ? { acks } : {});
    let request = 0;
    // Binary RecordBatches under the idempotent producer's sequence numbers by default; with
    // --idempotency-key, JSON requests whose keys a later run can repeat.
    const send: BatchSender =
      idempotencyKey === undefined
        ? (p, messages) => producer.sendBatch(topic!, p, messages)
        : async (p, messages) => {
            const results = await producer.send({
              topic: topic!,
              messages: messages.map((m) => ({ ...m, partition: p })),
              idempotencyKey: requestKey(idempotencyKey, request++),
            });
            const offsets = results.flatMap((r) => ('offset' in r ? [r.offset] : []));
            return { baseOffset: Math.min(...offsets), lastOffset: Math.max(...offsets) };
          };
    const summary = new ProduceSummary();
    const started = ctx.now();
    const progress = new ProgressLine(ctx.stderr, ctx.now, !ctx.quiet);
    const accumulator = new RecordAccumulator({
      partitions: partitions.length,
      send,
      batchSize: maxBytes,
      maxBatchRecords: maxRecords,
      lingerMs,
      onBatch: (outcome) => {
        summary.add(outcome);
        progress.update(
          () =>
            `${formatCount(summary.records)} records produced, ` +
            `${formatRate(summary.records, ctx.now() - started)}`,
        );
      },
    });

    let lines = 0;
    /** The input line of each appended record, by append index, to name where a failure starts. */
    const lineOf: number[] = [];
    try {
      if (argMessages.length > 0) {
        for (const message of argMessages) await accumulator.append(message);
      } else {
        if (ctx.stdinIsTTY) {
          const shape = separator === undefined ? 'a value' : `KEY${separator}VALUE`;
          ctx.note(`Type records, ${shape} per line; Ctrl-D sends the rest and ends.`);
        }
        const iterator = readLines(ctx.stdin ?? emptyInput())[Symbol.asyncIterator]();
        const interrupted = new Promise<typeof INTERRUPTED>((resolve) =>
          ctx.signal.addEventListener('abort', () => resolve(INTERRUPTED), { once: true }),
        );
        // The accumulator's linger timers send a slow trickle (`tail -f | sluice produce`) within
        // linger.ms while this loop waits for the next line.
        while (!ctx.signal.aborted && summary.failed === 0) {
          const item = await Promise.race([iterator.next(), interrupted]);
          if (item === INTERRUPTED || item.done) break;
          lines += 1;
          if (encoding === 'json' && item.value.trim() === '') continue;
          // A malformed line stops the input; what came before it is written, as
          // kafka-console-producer would have (the finally block flushes).
          const index = await accumulator.append(
            toMessage(parseLine(item.value, lines, format), `line ${lines}`),
          );
          lineOf[index] = lines;
        }
      }
    } finally {
      await accumulator.flush();
      progress.done();
      // -q: nothing but errors, as kafka-console-producer; --json asked for the summary as data.
      if (summary.requests > 0 && (ctx.json || !ctx.quiet)) {
        const elapsed = ctx.now() - started;
        await ctx.print(
          ctx.json ? JSON.stringify(summary.toJSON(topic!, elapsed)) : summary.render(topic!, elapsed),
        );
      }
    }
    if (summary.firstError) {
      const e = summary.firstError;
      const at = summary.firstFailedIndex ?? 0;
      const from = argMessages.length > 0 ? `--value #${at + 1}` : `line ${lineOf[at] ?? at + 1}`;
      throw new SluiceError(
        e.code,
        `${plural(summary.failed, 'record')} not written (the first from ${from}): ${e.message}`,
        { retriable: e.retriable },
      );
    }
    if (accumulator.count === 0 && !ctx.signal.aborted) {
      throw new UsageError('no records: give --value V or pipe lines on stdin', produce);
    }
  },
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
