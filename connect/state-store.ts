/**
 * Connector and task state in the metadata table (DynamoDB in AWS), behind the same MetadataStore
 * port the log uses, so the memory and DynamoDB adapters that pass the storage contract serve it too.
 *
 * Layout: `CONNECTORS`/`{name}` holds a connector's config and target state; `CONNECT#{name}` holds
 * its task items (`T#{id}`: state, lease epoch and expiry, a source task's pending poll) and a
 * source connector's offsets (`O#{source partition}`). A task's lease epoch fences every write the
 * task makes: the REST API bumps it on pause, stop, restart and reconfiguration, so a task that is
 * still running finds its next commit refused.
 */
import { SluiceError } from '../protocol/errors.js';
import type { AttributeValue, Item, MetadataStore, TransactOp } from '../lib/ports/metadata-store.js';
import { ConditionFailedError } from '../lib/ports/metadata-store.js';
import { queryAll } from '../lib/ports/query-all.js';
import type { ConnectorType, SourceMap } from './plugin.js';
import { sourcePartitionKey } from './plugin.js';

export type TargetState = 'STARTED' | 'PAUSED' | 'STOPPED';
export type TaskStateName = 'UNASSIGNED' | 'RUNNING' | 'FAILED' | 'RESTARTING';

export interface ConnectorRecord {
  name: string;
  type: ConnectorType;
  config: Record<string, string>;
  targetState: TargetState;
  /** Bumped by every config change, so tasks know to rebuild. */
  generation: number;
  /** Set when the connector itself failed (shown as its status trace). */
  trace?: string;
  restarting?: boolean;
}

export interface TaskRecord {
  task: number;
  state: TaskStateName;
  trace?: string;
  workerId: string;
  leaseEpoch: number;
  leaseUntil: number;
  /** A source task's last fully written poll (its polls are numbered 1, 2, …). */
  lastPoll: number;
  /** A source task's poll whose records may be partly written (see runtime/source-runner.ts). */
  pendingPoll?: PendingPoll;
}

/** What a source task wrote down before producing a poll: enough to replay it exactly. */
export interface PendingPoll {
  poll: number;
  /** Per source partition: offset before the poll (null: from the start) and the last record's offset. */
  ranges: { partition: SourceMap; from: SourceMap | null; through: SourceMap }[];
  /** Per topic-partition written: the high watermark before the poll's records. */
  marks: { topic: string; partition: number; offset: number }[];
  /** Partition counts of the topics written, so a replay partitions records as the poll did. */
  partitionCounts: Record<string, number>;
}

export interface SourceOffset {
  partition: SourceMap;
  offset: SourceMap;
}

const REGISTRY = 'CONNECTORS';
const pkOf = (name: string): string => `CONNECT#${name}`;
const taskSk = (task: number): string => `T#${String(task).padStart(4, '0')}`;
const offsetSk = (partition: SourceMap): string => `O#${sourcePartitionKey(partition)}`;

export const notFound = (name: string): SluiceError =>
  new SluiceError('NOT_FOUND', `Connector ${name} not found`, { details: { error_code: 404 } });

const asRecord = (item: Item): ConnectorRecord => ({
  name: item['name'] as string,
  type: item['type'] as ConnectorType,
  config: item['config'] as Record<string, string>,
  targetState: item['targetState'] as TargetState,
  generation: item['generation'] as number,
  ...(typeof item['trace'] === 'string' ? { trace: item['trace'] } : {}),
  ...(item['restarting'] === true ? { restarting: true } : {}),
});

const asTask = (item: Item): TaskRecord => ({
  task: item['task'] as number,
  state: (item['state'] as TaskStateName | undefined) ?? 'UNASSIGNED',
  ...(typeof item['trace'] === 'string' ? { trace: item['trace'] } : {}),
  workerId: (item['workerId'] as string | undefined) ?? '',
  leaseEpoch: (item['leaseEpoch'] as number | undefined) ?? 0,
  leaseUntil: (item['leaseUntil'] as number | undefined) ?? 0,
  lastPoll: (item['lastPoll'] as number | undefined) ?? 0,
  ...(item['pendingPoll'] ? { pendingPoll: item['pendingPoll'] as unknown as PendingPoll } : {}),
});

/** The lease of one task, as its holder knows it. */
export interface Lease {
  connector: string;
  task: number;
  epoch: number;
  until: number;
}

export class ConnectStateStore {
  constructor(private readonly store: MetadataStore) {}

  async list(): Promise<ConnectorRecord[]> {
    const items = await queryAll(this.store, { pk: REGISTRY, consistent: true });
    return items.map(asRecord);
  }

  async get(name: string): Promise<ConnectorRecord | undefined> {
    const item = await this.store.get({ pk: REGISTRY, sk: name }, { consistent: true });
    return item ? asRecord(item) : undefined;
  }

  async require(name: string): Promise<ConnectorRecord> {
    const found = await this.get(name);
    if (!found) throw notFound(name);
    return found;
  }

  async create(record: Omit<ConnectorRecord, 'generation'>): Promise<void> {
    try {
      await this.store.put(
        {
          pk: REGISTRY,
          sk: record.name,
          name: record.name,
          type: record.type,
          config: record.config,
          targetState: record.targetState,
          generation: 1,
        },
        { condition: { notExists: 'pk' } },
      );
    } catch (error) {
      if (error instanceof ConditionFailedError)
        throw new SluiceError('ALREADY_EXISTS', `Connector ${record.name} already exists`, {
          details: { error_code: 409 },
        });
      throw error;
    }
  }

  /** Replaces the config of an existing connector (its type must stay); fences its tasks. */
  async updateConfig(name: string, type: ConnectorType, config: Record<string, string>): Promise<void> {
    try {
      await this.store.update(
        { pk: REGISTRY, sk: name },
        [
          { set: 'config', value: config },
          { set: 'type', value: type },
          { set: 'generation', add: 1 },
        ],
        { condition: { exists: 'pk' } },
      );
    } catch (error) {
      if (error instanceof ConditionFailedError) throw notFound(name);
      throw error;
    }
    await this.fenceTasks(name);
  }

  async setTargetState(name: string, targetState: TargetState): Promise<void> {
    try {
      await this.store.update({ pk: REGISTRY, sk: name }, [{ set: 'targetState', value: targetState }], {
        condition: { exists: 'pk' },
      });
    } catch (error) {
      if (error instanceof ConditionFailedError) throw notFound(name);
      throw error;
    }
    if (targetState !== 'STARTED') await this.fenceTasks(name);
  }

  async setConnectorTrace(name: string, trace: string | undefined): Promise<void> {
    await this.store.update(
      { pk: REGISTRY, sk: name },
      [trace === undefined ? { remove: 'trace' } : { set: 'trace', value: trace }],
      { condition: { exists: 'pk' } },
    );
  }

  async delete(name: string): Promise<void> {
    const own = await queryAll(this.store, { pk: pkOf(name), consistent: true });
    try {
      await this.store.delete({ pk: REGISTRY, sk: name }, { condition: { exists: 'pk' } });
    } catch (error) {
      if (error instanceof ConditionFailedError) throw notFound(name);
      throw error;
    }
    await this.store.batchWrite({ deletes: own.map(({ pk, sk }) => ({ pk, sk })) });
  }

  async tasks(name: string): Promise<TaskRecord[]> {
    const items = await this.store.query({ pk: pkOf(name), sk: { beginsWith: 'T#' }, consistent: true });
    return items.items.map(asTask);
  }

  async task(name: string, task: number): Promise<TaskRecord | undefined> {
    const item = await this.store.get({ pk: pkOf(name), sk: taskSk(task) }, { consistent: true });
    return item ? asTask(item) : undefined;
  }

  /**
   * Bumps every task's lease epoch and ends its lease: whatever a running task writes next is
   * refused. `restart` marks them RESTARTING (Connect's restart status) and clears their traces.
   */
  async fenceTasks(name: string, options: { restart?: readonly number[] } = {}): Promise<void> {
    const existing = await this.tasks(name);
    await Promise.all(
      existing.map((t) =>
        this.store.update({ pk: pkOf(name), sk: taskSk(t.task) }, [
          { set: 'leaseEpoch', add: 1, initial: 0 },
          { set: 'leaseUntil', value: 0 },
          ...(options.restart?.includes(t.task)
            ? [{ set: 'state', value: 'RESTARTING' } as const, { remove: 'trace' } as const]
            : []),
        ]),
      ),
    );
  }

  /** Ensures a task item exists with `state` (used when a restart names a task never run). */
  async markRestarting(name: string, task: number): Promise<void> {
    await this.store.update({ pk: pkOf(name), sk: taskSk(task) }, [
      { set: 'task', value: task },
      { set: 'state', value: 'RESTARTING' },
      { set: 'leaseEpoch', add: 1, initial: 0 },
      { set: 'leaseUntil', value: 0 },
      { remove: 'trace' },
    ]);
  }

  /** Takes the task's lease if nobody holds it (expired or released); undefined when held. */
  async acquire(
    name: string,
    task: number,
    workerId: string,
    now: number,
    ttlMs: number,
  ): Promise<Lease | undefined> {
    try {
      const after = await this.store.update(
        { pk: pkOf(name), sk: taskSk(task) },
        [
          { set: 'task', value: task },
          { set: 'leaseEpoch', add: 1, initial: 0 },
          { set: 'leaseUntil', value: now + ttlMs },
          { set: 'workerId', value: workerId },
        ],
        {
          condition: { or: [{ notExists: 'leaseUntil' }, { path: 'leaseUntil', op: '<', value: now }] },
          returnValues: 'allNew',
        },
      );
      return { connector: name, task, epoch: after!['leaseEpoch'] as number, until: now + ttlMs };
    } catch (error) {
      if (error instanceof ConditionFailedError) return undefined;
      throw error;
    }
  }

  private fenced(lease: Lease) {
    return { path: 'leaseEpoch', op: '=', value: lease.epoch } as const;
  }

  /** Extends a held lease; throws ConditionFailedError once it was fenced. */
  async renew(lease: Lease, until: number): Promise<Lease> {
    await this.store.update(
      { pk: pkOf(lease.connector), sk: taskSk(lease.task) },
      [{ set: 'leaseUntil', value: until }],
      {
        condition: this.fenced(lease),
      },
    );
    return { ...lease, until };
  }

  async release(lease: Lease): Promise<void> {
    try {
      await this.store.update(
        { pk: pkOf(lease.connector), sk: taskSk(lease.task) },
        [{ set: 'leaseUntil', value: 0 }],
        {
          condition: this.fenced(lease),
        },
      );
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
    }
  }

  async setTaskState(lease: Lease, state: TaskStateName, trace?: string): Promise<void> {
    await this.store.update(
      { pk: pkOf(lease.connector), sk: taskSk(lease.task) },
      [
        { set: 'state', value: state },
        trace === undefined ? { remove: 'trace' } : { set: 'trace', value: trace },
      ],
      { condition: this.fenced(lease) },
    );
  }

  /** Writes a source task's intent before it produces a poll (fenced by its lease). */
  async beginPoll(lease: Lease, pending: PendingPoll): Promise<void> {
    await this.store.update(
      { pk: pkOf(lease.connector), sk: taskSk(lease.task) },
      [{ set: 'pendingPoll', value: pending as unknown as AttributeValue }],
      { condition: this.fenced(lease) },
    );
  }

  /** Stores the poll's offsets and clears the intent in one transaction, fenced by the lease. */
  async commitPoll(lease: Lease, poll: number, offsets: readonly SourceOffset[]): Promise<void> {
    const ops: TransactOp[] = [
      {
        update: { pk: pkOf(lease.connector), sk: taskSk(lease.task) },
        actions: [{ remove: 'pendingPoll' }, { set: 'lastPoll', value: poll }],
        condition: this.fenced(lease),
      },
      ...offsets.map((o): TransactOp => ({
        put: {
          pk: pkOf(lease.connector),
          sk: offsetSk(o.partition),
          partition: o.partition,
          offset: o.offset,
        },
      })),
    ];
    await this.store.transact(ops);
  }

  async sourceOffsets(name: string): Promise<SourceOffset[]> {
    const items = await queryAll(this.store, { pk: pkOf(name), sk: { beginsWith: 'O#' }, consistent: true });
    return items.map((i) => ({ partition: i['partition'] as SourceMap, offset: i['offset'] as SourceMap }));
  }

  /** KIP-875's PATCH for a source connector: a null offset removes that partition's offset. */
  async alterSourceOffsets(
    name: string,
    offsets: readonly { partition: SourceMap; offset: SourceMap | null }[],
  ): Promise<void> {
    await this.store.batchWrite({
      puts: offsets
        .filter((o): o is SourceOffset => o.offset !== null)
        .map((o) => ({
          pk: pkOf(name),
          sk: offsetSk(o.partition),
          partition: o.partition,
          offset: o.offset,
        })),
      deletes: offsets
        .filter((o) => o.offset === null)
        .map((o) => ({ pk: pkOf(name), sk: offsetSk(o.partition) })),
    });
  }

  async resetSourceOffsets(name: string): Promise<void> {
    const items = await queryAll(this.store, { pk: pkOf(name), sk: { beginsWith: 'O#' }, consistent: true });
    await this.store.batchWrite({ deletes: items.map(({ pk, sk }) => ({ pk, sk })) });
    // A pending poll would replay records whose offsets were just reset.
    for (const t of await this.tasks(name)) {
      if (t.pendingPoll)
        await this.store.update({ pk: pkOf(name), sk: taskSk(t.task) }, [{ remove: 'pendingPoll' }]);
    }
  }
}
