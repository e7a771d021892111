/**
 * The Connect herder: what each REST call does to connector state, answering in Kafka Connect's
 * bodies (ConnectorInfo, ConnectorStateInfo, ConnectorOffsets). Sink connectors' offsets are the
 * committed offsets of their consumer group `connect-{name}`, read and altered through the group
 * admin the composition root hands it (connect/group-admin.ts); source offsets live in the state store.
 */
import { SluiceError, invalidRequest } from '../protocol/errors.js';
import { checkConnectorConfig } from './connector-config.js';
import type {
  ConnectorInfo,
  ConnectorOffset,
  ConnectorStatus,
  ExpandedConnectors,
  TaskStatus,
} from '../lib/wire/connect.js';
import type { ConnectGroupAdmin } from './group-admin.js';
import type { SourceMap } from './plugin.js';
import type { ConnectStateStore, ConnectorRecord, TargetState, TaskRecord } from './state-store.js';
import { notFound } from './state-store.js';
import { groupIdOf, taskConfigsOf } from './tasks.js';

export const WORKER_ID = 'sluice-connect';

export type { ConnectorInfo, ConnectorStatus, TaskStatus };
/** One entry of KIP-875's offsets, in and out. */
export type OffsetEntry = ConnectorOffset;

const INITIAL_STATES: Record<string, TargetState> = {
  RUNNING: 'STARTED',
  PAUSED: 'PAUSED',
  STOPPED: 'STOPPED',
};

export class Herder {
  constructor(
    private readonly state: ConnectStateStore,
    private readonly groups: ConnectGroupAdmin,
  ) {}

  async names(): Promise<string[]> {
    return (await this.state.list()).map((c) => c.name).sort();
  }

  async expanded(expand: readonly string[]): Promise<ExpandedConnectors> {
    const out: ExpandedConnectors = {};
    for (const record of (await this.state.list()).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      out[record.name] = {
        ...(expand.includes('status') ? { status: await this.statusOf(record) } : {}),
        ...(expand.includes('info') ? { info: this.infoOf(record) } : {}),
      };
    }
    return out;
  }

  async create(name: string, config: Record<string, string>, initialState?: string): Promise<ConnectorInfo> {
    const full = this.withName(name, config);
    const target = initialState === undefined ? 'STARTED' : INITIAL_STATES[initialState];
    if (!target) throw invalidRequest(`initial_state must be RUNNING, PAUSED or STOPPED`);
    const { plugin } = checkConnectorConfig(full);
    await this.state.create({ name, type: plugin.type, config: full, targetState: target });
    return { name, config: full, tasks: [], type: plugin.type };
  }

  /** PUT config: creates (true) or replaces (false); a replaced connector's tasks are fenced. */
  async putConfig(
    name: string,
    config: Record<string, string>,
  ): Promise<{ created: boolean; info: ConnectorInfo }> {
    const full = this.withName(name, config);
    const { plugin } = checkConnectorConfig(full);
    const existing = await this.state.get(name);
    if (!existing) {
      await this.state.create({ name, type: plugin.type, config: full, targetState: 'STARTED' });
      return { created: true, info: { name, config: full, tasks: [], type: plugin.type } };
    }
    if (existing.type !== plugin.type)
      throw invalidRequest(`connector ${name} is a ${existing.type} connector; its type cannot change`);
    await this.state.updateConfig(name, plugin.type, full);
    return { created: false, info: this.infoOf({ ...existing, config: full }) };
  }

  async info(name: string): Promise<ConnectorInfo> {
    return this.infoOf(await this.state.require(name));
  }

  async config(name: string): Promise<Record<string, string>> {
    return (await this.state.require(name)).config;
  }

  async status(name: string): Promise<ConnectorStatus> {
    return this.statusOf(await this.state.require(name));
  }

  async tasks(
    name: string,
  ): Promise<{ id: { connector: string; task: number }; config: Record<string, string> }[]> {
    const record = await this.state.require(name);
    return taskConfigsOf(record).map((config, task) => ({ id: { connector: name, task }, config }));
  }

  async taskStatus(name: string, task: number): Promise<TaskStatus> {
    const status = await this.status(name);
    const found = status.tasks.find((t) => t.id === task);
    if (!found)
      throw new SluiceError('NOT_FOUND', `Task ${name}-${task} not found`, { details: { error_code: 404 } });
    return found;
  }

  async setTargetState(name: string, target: TargetState): Promise<void> {
    await this.state.setTargetState(name, target);
  }

  async delete(name: string): Promise<void> {
    const record = await this.state.require(name);
    await this.state.delete(name);
    if (record.type === 'sink') await this.deleteGroupQuietly(name);
  }

  /**
   * KIP-745's restart. Returns undefined for the plain restart (204), else the status with every
   * instance being restarted shown as RESTARTING (202).
   */
  async restart(
    name: string,
    includeTasks: boolean,
    onlyFailed: boolean,
  ): Promise<ConnectorStatus | undefined> {
    const record = await this.state.require(name);
    const status = await this.statusOf(record);
    const restartConnector = !onlyFailed || status.connector.state === 'FAILED';
    if (restartConnector) await this.state.setConnectorTrace(name, undefined);
    if (!includeTasks && !onlyFailed) return undefined;
    const restarted = includeTasks ? status.tasks.filter((t) => !onlyFailed || t.state === 'FAILED') : [];
    for (const t of restarted) await this.state.markRestarting(name, t.id);
    return {
      ...status,
      connector: { state: restartConnector ? 'RESTARTING' : status.connector.state, worker_id: WORKER_ID },
      tasks: status.tasks.map((t) =>
        restarted.some((r) => r.id === t.id) ? { id: t.id, state: 'RESTARTING', worker_id: t.worker_id } : t,
      ),
    };
  }

  async restartTask(name: string, task: number): Promise<void> {
    await this.taskStatus(name, task);
    await this.state.markRestarting(name, task);
  }

  async offsets(name: string): Promise<{ offsets: OffsetEntry[] }> {
    const record = await this.state.require(name);
    if (record.type === 'source') {
      return {
        offsets: (await this.state.sourceOffsets(name)).map((o) => ({
          partition: o.partition,
          offset: o.offset,
        })),
      };
    }
    const offsets = await this.groups.listConsumerGroupOffsets(groupIdOf(name));
    return {
      offsets: offsets.map((o) => ({
        partition: { kafka_topic: o.topic, kafka_partition: o.partition },
        offset: { kafka_offset: o.offset },
      })),
    };
  }

  async alterOffsets(name: string, entries: readonly OffsetEntry[]): Promise<void> {
    const record = await this.requireStopped(name);
    if (record.type === 'source') {
      await this.state.alterSourceOffsets(
        name,
        entries.map((e) => ({ partition: e.partition as SourceMap, offset: e.offset as SourceMap | null })),
      );
      return;
    }
    const offsets = entries.map((e) => parseSinkOffset(e));
    const results = await this.groups.alterConsumerGroupOffsets(groupIdOf(name), offsets);
    const failed = results.find((r) => r.error !== undefined);
    if (failed?.error)
      throw new SluiceError(
        failed.error.code as never,
        `${failed.topic}-${failed.partition}: ${failed.error.message}`,
      );
  }

  async resetOffsets(name: string): Promise<void> {
    const record = await this.requireStopped(name);
    if (record.type === 'source') await this.state.resetSourceOffsets(name);
    else await this.deleteGroupQuietly(name);
  }

  private async requireStopped(name: string): Promise<ConnectorRecord> {
    const record = await this.state.require(name);
    if (record.targetState !== 'STOPPED')
      throw new SluiceError(
        'INVALID_REQUEST',
        `Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/${name}/stop' endpoint`,
        { details: { error_code: 400 } },
      );
    return record;
  }

  private async deleteGroupQuietly(name: string): Promise<void> {
    try {
      await this.groups.deleteConsumerGroups(groupIdOf(name));
    } catch (error) {
      if (!(error instanceof SluiceError && error.code === 'GROUP_ID_NOT_FOUND')) throw error;
    }
  }

  private withName(name: string, config: Record<string, string>): Record<string, string> {
    if (config['name'] !== undefined && config['name'] !== name)
      throw new SluiceError(
        'INVALID_REQUEST',
        `Connector name configuration (${config['name']}) doesn't match connector name in the URL (${name})`,
        { details: { error_code: 400 } },
      );
    return { ...config, name };
  }

  private infoOf(record: ConnectorRecord): ConnectorInfo {
    return {
      name: record.name,
      config: record.config,
      tasks: taskConfigsOf(record).map((_, task) => ({ connector: record.name, task })),
      type: record.type,
    };
  }

  private async statusOf(record: ConnectorRecord): Promise<ConnectorStatus> {
    const connectorState =
      record.targetState === 'PAUSED'
        ? 'PAUSED'
        : record.targetState === 'STOPPED'
          ? 'STOPPED'
          : record.trace !== undefined
            ? 'FAILED'
            : 'RUNNING';
    const stored = new Map<number, TaskRecord>((await this.state.tasks(record.name)).map((t) => [t.task, t]));
    const tasks: TaskStatus[] =
      record.targetState === 'STOPPED'
        ? []
        : taskConfigsOf(record).map((_, id) => {
            const t = stored.get(id);
            const state =
              t?.state === 'FAILED' || t?.state === 'RESTARTING'
                ? t.state
                : record.targetState === 'PAUSED'
                  ? 'PAUSED'
                  : (t?.state ?? 'UNASSIGNED');
            return {
              id,
              state,
              worker_id: t?.workerId || WORKER_ID,
              ...(state === 'FAILED' && t?.trace ? { trace: t.trace } : {}),
            };
          });
    return {
      name: record.name,
      connector: {
        state: connectorState,
        worker_id: WORKER_ID,
        ...(connectorState === 'FAILED' && record.trace ? { trace: record.trace } : {}),
      },
      tasks,
      type: record.type,
    };
  }
}

const parseSinkOffset = (entry: OffsetEntry): { topic: string; partition: number; offset: number } => {
  const topic = entry.partition['kafka_topic'];
  const partition = entry.partition['kafka_partition'];
  const offset = entry.offset?.['kafka_offset'];
  if (typeof topic !== 'string' || typeof partition !== 'number' || !Number.isSafeInteger(partition))
    throw invalidRequest(
      'a sink offset partition must be {"kafka_topic": string, "kafka_partition": integer}',
    );
  if (entry.offset === null)
    throw invalidRequest(
      'resetting one sink partition (a null offset) is not supported; use DELETE /offsets',
    );
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0)
    throw invalidRequest('a sink offset must be {"kafka_offset": integer ≥ 0}');
  return { topic, partition, offset };
};

export { notFound };
