/**
 * Kafka Connect's REST API (API.md "Connect"): connectors, their status, lifecycle and offsets. The
 * bodies are Connect's own, so the types follow Connect's field names (worker_id, error_count, …).
 */
import type { Retrier } from './retry.js';
import type { HttpCall, Transport } from './transport.js';
import { path } from './transport.js';

export type ConnectorType = 'source' | 'sink';

export interface ConnectorInfo {
  name: string;
  config: Record<string, string>;
  tasks: { connector: string; task: number }[];
  type: ConnectorType;
}

export interface ConnectorStatus {
  name: string;
  connector: { state: string; worker_id: string; trace?: string };
  tasks: { id: number; state: string; worker_id: string; trace?: string }[];
  type: ConnectorType;
}

export interface ConnectorOffset {
  partition: Record<string, unknown>;
  offset: Record<string, unknown> | null;
}

export interface ConfigInfos {
  name: string;
  error_count: number;
  groups: string[];
  configs: {
    definition: Record<string, unknown>;
    value: { name: string; value: string | null; errors: string[] };
  }[];
}

export type InitialState = 'RUNNING' | 'PAUSED' | 'STOPPED';

export class ConnectAdmin {
  constructor(
    private readonly transport: Transport,
    private readonly retry: Retrier,
  ) {}

  listConnectors(): Promise<string[]> {
    return this.get<string[]>(`/v1/connect/connectors`);
  }

  /** `GET /connectors?expand=status,info`. */
  listExpanded(): Promise<Record<string, { status: ConnectorStatus; info: ConnectorInfo }>> {
    return this.get(`/v1/connect/connectors`, { expand: 'status,info' });
  }

  createConnector(
    name: string,
    config: Record<string, string>,
    initialState?: InitialState,
  ): Promise<ConnectorInfo> {
    return this.call<ConnectorInfo>('POST', `/v1/connect/connectors`, {
      name,
      config,
      ...(initialState ? { initial_state: initialState } : {}),
    });
  }

  /** Creates or replaces the config (PUT is idempotent, so it is retried). */
  putConfig(name: string, config: Record<string, string>): Promise<ConnectorInfo> {
    return this.retry(() =>
      this.call<ConnectorInfo>('PUT', path`/v1/connect/connectors/${name}/config`, config),
    );
  }

  describe(name: string): Promise<ConnectorInfo> {
    return this.get(path`/v1/connect/connectors/${name}`);
  }

  status(name: string): Promise<ConnectorStatus> {
    return this.get(path`/v1/connect/connectors/${name}/status`);
  }

  async pause(name: string): Promise<void> {
    await this.retry(() => this.call('PUT', path`/v1/connect/connectors/${name}/pause`));
  }

  async resume(name: string): Promise<void> {
    await this.retry(() => this.call('PUT', path`/v1/connect/connectors/${name}/resume`));
  }

  async stop(name: string): Promise<void> {
    await this.retry(() => this.call('PUT', path`/v1/connect/connectors/${name}/stop`));
  }

  /** KIP-745: the status with what restarts shown RESTARTING, or undefined for a plain restart (204). */
  restart(
    name: string,
    { includeTasks = false, onlyFailed = false }: { includeTasks?: boolean; onlyFailed?: boolean } = {},
  ): Promise<ConnectorStatus | undefined> {
    return this.call<ConnectorStatus | undefined>(
      'POST',
      path`/v1/connect/connectors/${name}/restart`,
      undefined,
      {
        includeTasks: String(includeTasks),
        onlyFailed: String(onlyFailed),
      },
    );
  }

  async deleteConnector(name: string): Promise<void> {
    await this.call('DELETE', path`/v1/connect/connectors/${name}`);
  }

  async offsets(name: string): Promise<ConnectorOffset[]> {
    return (await this.get<{ offsets: ConnectorOffset[] }>(path`/v1/connect/connectors/${name}/offsets`))
      .offsets;
  }

  async alterOffsets(name: string, offsets: ConnectorOffset[]): Promise<void> {
    await this.call('PATCH', path`/v1/connect/connectors/${name}/offsets`, { offsets });
  }

  async resetOffsets(name: string): Promise<void> {
    await this.call('DELETE', path`/v1/connect/connectors/${name}/offsets`);
  }

  plugins(): Promise<{ class: string; type: string; version?: string }[]> {
    return this.get(`/v1/connect/connector-plugins`);
  }

  validate(plugin: string, config: Record<string, string>): Promise<ConfigInfos> {
    return this.call('PUT', path`/v1/connect/connector-plugins/${plugin}/config/validate`, config);
  }

  private get<T>(p: string, query?: Record<string, string>): Promise<T> {
    return this.retry(() => this.call<T>('GET', p, undefined, query));
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
