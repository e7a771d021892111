/**
 * Kafka Connect's REST API (API.md "Connect"): connectors, their status, lifecycle and offsets. The
 * bodies are Connect's own (lib/wire/connect.ts, which the Connect routes answer with).
 *
 * Retries: reads, a PUT of a whole config, pause, resume, stop and a validation leave the same state
 * however often they run, and run under the client's retrier. Create, restart, delete and the offset
 * changes are not idempotent (a second create answers 409, a second restart restarts again, a second
 * delete answers 404): they are retried only after an answer that says nothing changed, never after a
 * timeout or a 5xx (retry.ts `nonIdempotent`).
 */
import type {
  ConfigInfos,
  ConnectorInfo,
  ConnectorOffset,
  ConnectorPluginInfo,
  ConnectorStatus,
  ExpandedConnectors,
  InitialState,
} from '../lib/wire/connect.js';
import type { Retrier } from './retry.js';
import { nonIdempotent } from './retry.js';
import type { HttpCall, Transport } from './transport.js';
import { path } from './transport.js';

export type {
  ConfigInfos,
  ConnectorInfo,
  ConnectorOffset,
  ConnectorPluginInfo,
  ConnectorStatus,
  ConnectorType,
  ExpandedConnectors,
  InitialState,
} from '../lib/wire/connect.js';

export class ConnectAdmin {
  constructor(
    private readonly transport: Transport,
    private readonly retry: Retrier,
  ) {}

  /** The connectors' names. Idempotent. */
  listConnectors(): Promise<string[]> {
    return this.get<string[]>(`/v1/connect/connectors`);
  }

  /** `GET /connectors?expand=status,info`: each connector's status and info. Idempotent. */
  listExpanded(): Promise<Record<string, Required<ExpandedConnectors[string]>>> {
    return this.get(`/v1/connect/connectors`, { expand: 'status,info' });
  }

  /** Creates a connector. Not idempotent: a second create answers 409 (retried only when nothing changed). */
  createConnector(
    name: string,
    config: Record<string, string>,
    initialState?: InitialState,
  ): Promise<ConnectorInfo> {
    return this.once<ConnectorInfo>('POST', `/v1/connect/connectors`, {
      name,
      config,
      ...(initialState ? { initial_state: initialState } : {}),
    });
  }

  /** Creates or replaces the config. Idempotent (the same whole config again changes nothing). */
  putConfig(name: string, config: Record<string, string>): Promise<ConnectorInfo> {
    return this.retry(() =>
      this.call<ConnectorInfo>('PUT', path`/v1/connect/connectors/${name}/config`, config),
    );
  }

  /** The connector's config and tasks. Idempotent. */
  describe(name: string): Promise<ConnectorInfo> {
    return this.get<ConnectorInfo>(path`/v1/connect/connectors/${name}`);
  }

  /** The connector's and its tasks' states. Idempotent. */
  status(name: string): Promise<ConnectorStatus> {
    return this.get<ConnectorStatus>(path`/v1/connect/connectors/${name}/status`);
  }

  /** Pauses the connector's tasks. Idempotent, as are resume and stop. */
  async pause(name: string): Promise<void> {
    await this.retry(() => this.call('PUT', path`/v1/connect/connectors/${name}/pause`));
  }

  async resume(name: string): Promise<void> {
    await this.retry(() => this.call('PUT', path`/v1/connect/connectors/${name}/resume`));
  }

  async stop(name: string): Promise<void> {
    await this.retry(() => this.call('PUT', path`/v1/connect/connectors/${name}/stop`));
  }

  /**
   * KIP-745: the status with what restarts shown RESTARTING, or undefined for a plain restart (204).
   * Not idempotent (each restart restarts): retried only when nothing changed.
   */
  restart(
    name: string,
    { includeTasks = false, onlyFailed = false }: { includeTasks?: boolean; onlyFailed?: boolean } = {},
  ): Promise<ConnectorStatus | undefined> {
    return this.once<ConnectorStatus | undefined>(
      'POST',
      path`/v1/connect/connectors/${name}/restart`,
      undefined,
      {
        includeTasks: String(includeTasks),
        onlyFailed: String(onlyFailed),
      },
    );
  }

  /** Deletes the connector. Not idempotent: a second delete answers 404 (retried only when nothing changed). */
  async deleteConnector(name: string): Promise<void> {
    await this.once('DELETE', path`/v1/connect/connectors/${name}`);
  }

  /** KIP-875: the connector's offsets. Idempotent. */
  async offsets(name: string): Promise<ConnectorOffset[]> {
    return (await this.get<{ offsets: ConnectorOffset[] }>(path`/v1/connect/connectors/${name}/offsets`))
      .offsets;
  }

  /** KIP-875: alters offsets, only while STOPPED. Not retried after a timeout or a 5xx (only when nothing changed). */
  async alterOffsets(name: string, offsets: readonly ConnectorOffset[]): Promise<void> {
    await this.once('PATCH', path`/v1/connect/connectors/${name}/offsets`, { offsets });
  }

  /** KIP-875: deletes every offset, only while STOPPED. Not retried after a timeout or a 5xx (only when nothing changed). */
  async resetOffsets(name: string): Promise<void> {
    await this.once('DELETE', path`/v1/connect/connectors/${name}/offsets`);
  }

  /** The installed connector plugins. Idempotent. */
  plugins(): Promise<ConnectorPluginInfo[]> {
    return this.get<ConnectorPluginInfo[]>(`/v1/connect/connector-plugins`);
  }

  /** Validates a config without creating anything. Idempotent. */
  validate(plugin: string, config: Record<string, string>): Promise<ConfigInfos> {
    return this.retry(() =>
      this.call<ConfigInfos>('PUT', path`/v1/connect/connector-plugins/${plugin}/config/validate`, config),
    );
  }

  private get<T>(p: string, query?: Record<string, string>): Promise<T> {
    return this.retry(() => this.call<T>('GET', p, undefined, query));
  }

  /** A call that is not idempotent: retried only after an answer that says it changed nothing. */
  private once<T>(
    method: HttpCall['method'],
    p: string,
    json?: unknown,
    query?: Record<string, string>,
  ): Promise<T> {
    return this.retry(nonIdempotent(() => this.call<T>(method, p, json, query)));
  }

  private call<T>(
    method: HttpCall['method'],
    p: string,
    json?: unknown,
    query?: Record<string, string>,
  ): Promise<T> {
    return this.transport.json<T>({
      method,
      path: p,
      ...(json !== undefined ? { json } : {}),
      ...(query ? { query } : {}),
    });
  }
}
