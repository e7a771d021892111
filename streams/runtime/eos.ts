/**
 * exactly_once_v2 on DynamoDB transactions and Sluice's idempotent produce. Each task holds a lease
 * item `ST#{app}#{task}` whose epoch the task bumps when it takes the task over. A commit is one
 * TransactWriteItems: conditioned on that epoch and the last commit's sequence, it advances the
 * input offsets kept in the lease item, writes the state changes, and puts the commit's outputs in an
 * outbox item. Outputs, state and offsets therefore become durable together or not at all, and a
 * zombie (an older epoch) commits nothing. After the transaction the outbox is produced with an
 * Idempotency-Key derived from (application, task, sequence, chunk) and then deleted; whoever takes
 * the task over next first produces what is left in the outbox, with the same keys, so a record is
 * written once even when the publisher died between produce and delete.
 */
import { createHash } from 'node:crypto';
import { SluiceError } from '../../protocol/errors.js';
import type { Item, MetadataStore, TransactOp, UpdateAction } from '../../lib/ports/metadata-store.js';
import { ConditionFailedError } from '../../lib/ports/metadata-store.js';
import type { GroupMember, Producer } from '../../sdk/index.js';
import type { SerializedRecord } from '../processor.js';
import type { MetadataStateBackend } from '../state/metadata-backend.js';
import { TaskFencedError, TaskLease } from './lease.js';

export { TaskFencedError };
import type { CommitInput, Committer } from './committer.js';
import { messagesOf, outputChunks } from './committer.js';

/** DynamoDB allows 100 items per transaction: the lease item, the outbox item and the state writes. */
export const MAX_STATE_WRITES_PER_COMMIT = 98;
/** An outbox item must stay under DynamoDB's 400 KB item limit after base64. */
export const MAX_OUTBOX_BYTES = 256 * 1024;

const SEQ_WIDTH = 12;

interface OutboxRecord {
  topic: string;
  key: string | null;
  value: string | null;
  timestamp: number;
  headers: { key: string; value: string | null }[];
}

export class ExactlyOnceCommitter implements Committer {
  private sequence = 0;
  private readonly store: MetadataStore;
  private readonly leaseKey: { pk: string; sk: string };
  private readonly lease: TaskLease;

  constructor(
    private readonly backend: MetadataStateBackend,
    private readonly taskId: string,
    private readonly producer: Producer,
    /** Group offsets mirror the lease's offsets for lag reporting only; the lease is the truth. */
    private readonly member: GroupMember | undefined,
    private readonly partition: number,
  ) {
    this.lease = new TaskLease(backend, taskId);
    this.store = backend.store;
    this.leaseKey = this.lease.key;
  }

  async start(): Promise<Map<string, number>> {
    const lease = await this.lease.acquire();
    this.sequence = Number(lease['seq'] ?? 0);
    await this.publishOutbox();
    const offsets = lease['offsets'];
    const positions = new Map<string, number>();
    if (
      offsets &&
      typeof offsets === 'object' &&
      !Array.isArray(offsets) &&
      !(offsets instanceof Uint8Array)
    ) {
      for (const [topic, offset] of Object.entries(offsets))
        if (typeof offset === 'number') positions.set(topic, offset);
    }
    return positions;
  }

  full({ stateWrites, outputBytes }: { stateWrites: number; outputBytes: number }): boolean {
    return stateWrites >= MAX_STATE_WRITES_PER_COMMIT || outputBytes >= MAX_OUTBOX_BYTES;
  }

  async commit({ offsets, outputs, stores }: CommitInput): Promise<void> {
    const writes = stores.pending();
    if (writes.length > MAX_STATE_WRITES_PER_COMMIT)
      throw new SluiceError(
        'RECORD_LIST_TOO_LARGE',
        `task ${this.taskId}: one commit changed ${writes.length} state keys; exactly_once_v2 commits at most ${MAX_STATE_WRITES_PER_COMMIT} in one transaction`,
      );
    const next = this.sequence + 1;
    // The first commit creates the offsets map; later ones set its members (a nested SET needs the map).
    const leaseActions =
      this.sequence === 0
        ? [{ set: 'offsets', value: Object.fromEntries(offsets.map((o) => [o.topic, o.offset])) }]
        : offsets.map((o) => ({ set: ['offsets', o.topic], value: o.offset }));
    const ops: TransactOp[] = [
      {
        update: this.leaseKey,
        actions: [{ set: 'seq', value: next }, ...leaseActions] as UpdateAction[],
        condition: {
          and: [
            { path: 'epoch', op: '=', value: this.lease.epoch },
            this.sequence === 0 ? { notExists: 'seq' } : { path: 'seq', op: '=', value: this.sequence },
          ],
        },
      },
      ...this.lease.stateOps(writes),
    ];
    if (outputs.length > 0)
      ops.push({
        put: this.outboxItem(
          next,
          outputs.map((o) => ({ topic: o.topic, ...encodeRecord(o.record) })),
        ),
      });
    await this.lease.transact(ops);
    this.sequence = next;
    stores.committed();
    await this.publishOutbox();
    await this.member
      ?.commit(offsets.map((o) => ({ ...o, partition: this.partition })))
      .catch(() => undefined);
  }

  /** Produces every outbox item of this task in sequence order, then deletes it. */
  private async publishOutbox(): Promise<void> {
    const page = await this.store.query({
      pk: this.leaseKey.pk,
      sk: { beginsWith: 'OUT#' },
      consistent: true,
    });
    for (const item of page.items) {
      const blob = item['records'];
      if (!(blob instanceof Uint8Array)) continue;
      const records = JSON.parse(Buffer.from(blob).toString('utf8')) as OutboxRecord[];
      const chunks = outputChunks(records.map((r) => ({ topic: r.topic, record: decodeRecord(r) })));
      for (const [i, { topic, records: chunk }] of chunks.entries()) {
        await this.producer.send({
          topic,
          messages: messagesOf(chunk),
          idempotencyKey: this.idempotencyKey(item.sk, i),
        });
      }
      try {
        await this.store.delete({ pk: item.pk, sk: item.sk }, { condition: { exists: 'records' } });
      } catch (error) {
        // Another publisher (the task's previous or next owner) deleted it first: it was produced.
        if (!(error instanceof ConditionFailedError)) throw error;
      }
    }
  }

  private outboxItem(sequence: number, records: OutboxRecord[]): Item {
    return {
      ...this.leaseKey,
      sk: `OUT#${String(sequence).padStart(SEQ_WIDTH, '0')}`,
      records: new Uint8Array(Buffer.from(JSON.stringify(records))),
    };
  }

  private idempotencyKey(outboxSk: string, chunk: number): string {
    return createHash('sha256')
      .update(`${this.backend.applicationId}\u0000${this.taskId}\u0000${outboxSk}\u0000${chunk}`)
      .digest('hex');
  }
}

const b64 = (b: Uint8Array | null): string | null => (b === null ? null : Buffer.from(b).toString('base64'));
const unb64 = (s: string | null): Uint8Array | null =>
  s === null ? null : new Uint8Array(Buffer.from(s, 'base64'));

const encodeRecord = (r: SerializedRecord): Omit<OutboxRecord, 'topic'> => ({
  key: b64(r.key),
  value: b64(r.value),
  timestamp: r.timestamp,
  headers: r.headers.map((h) => ({ key: h.key, value: b64(h.value) })),
});

const decodeRecord = (r: OutboxRecord): SerializedRecord => ({
  key: unb64(r.key),
  value: unb64(r.value),
  timestamp: r.timestamp,
  headers: r.headers.map((h) => ({ key: h.key, value: unb64(h.value) })),
});
