/**
 * The Kafka gateway: a TCP server speaking Kafka's protocol in front of Sluice. It is stateless —
 * every answer comes from Sluice's HTTP API — so any number of gateways may serve the same deployment,
 * each advertising itself as the one broker that leads every partition and coordinates every group.
 */
import type { AddressInfo, Server, Socket } from 'node:net';
import { createServer } from 'node:net';
import type { ApiHandler, BrokerAddress, GatewayContext, SaslAuthenticator } from './api.js';
import type { ConnectionLimits } from './connection.js';
import { Connection, RequestMemory } from './connection.js';
import { API_HANDLERS } from './apis/index.js';
import { SluiceBackend } from './sluice.js';
import type { SluiceBackendOptions } from './sluice.js';

export interface KafkaGatewayOptions extends Partial<ConnectionLimits> {
  /** Sluice's HTTP API (and how to sign for it). */
  sluice: SluiceBackendOptions | SluiceBackend;
  /** Where to listen (default 127.0.0.1:9092; port 0 picks a free one). */
  host?: string;
  port?: number;
  /** The address clients are told to connect to (default the listening one): Kafka's advertised.listeners. */
  advertisedHost?: string;
  advertisedPort?: number;
  /** node.id advertised for this broker (default 0). */
  nodeId?: number;
  rack?: string | null;
  /** max.connections: connections beyond it are closed at once (default 1000). */
  maxConnections?: number;
  /** queued.max.request.bytes across connections (default 256 MiB). */
  queuedMaxRequestBytes?: number;
  /**
   * SASL/OAUTHBEARER (gateway/sasl.ts): how tokens are verified, and whether every connection must
   * authenticate (anywhere but the loopback sidecar). Without it no mechanism is offered and every
   * connection is served with the gateway's own credentials.
   */
  sasl?: { authenticator: SaslAuthenticator; required: boolean };
  /** The API table (default every API the gateway serves). */
  apis?: readonly ApiHandler[];
  log?: (line: string) => void;
}

export const DEFAULT_LIMITS: ConnectionLimits = {
  maxRequestBytes: 104_857_600,
  maxInFlightRequests: 32,
  connectionsMaxIdleMs: 600_000,
  maxPendingResponseBytes: 16 * 1024 * 1024,
};

export interface GatewayStats {
  connections: number;
  refusedConnections: number;
  /** Most requests one connection had in flight at once. */
  peakInFlight: number;
  /** Most request bytes held at once across connections. */
  peakRequestBytes: number;
}

export class KafkaGateway {
  private readonly server: Server;
  private readonly connections = new Set<Connection>();
  private readonly limits: ConnectionLimits;
  private readonly memory: RequestMemory;
  private readonly context: GatewayContext;
  private readonly apiTable: Map<number, ApiHandler>;
  private nextId = 1;
  private refused = 0;
  private peakInFlight = 0;
  private address: AddressInfo | undefined;
  private cachedClusterId: Promise<string> | undefined;

  constructor(private readonly options: KafkaGatewayOptions) {
    this.limits = {
      maxRequestBytes: options.maxRequestBytes ?? DEFAULT_LIMITS.maxRequestBytes,
      maxInFlightRequests: options.maxInFlightRequests ?? DEFAULT_LIMITS.maxInFlightRequests,
      connectionsMaxIdleMs: options.connectionsMaxIdleMs ?? DEFAULT_LIMITS.connectionsMaxIdleMs,
      maxPendingResponseBytes: options.maxPendingResponseBytes ?? DEFAULT_LIMITS.maxPendingResponseBytes,
    };
    this.memory = new RequestMemory(options.queuedMaxRequestBytes ?? 256 * 1024 * 1024);
    this.apiTable = new Map((options.apis ?? API_HANDLERS).map((h) => [h.schema.apiKey, h]));
    const sluice =
      options.sluice instanceof SluiceBackend ? options.sluice : new SluiceBackend(options.sluice);
    this.context = {
      sluice,
      broker: () => this.broker(),
      clusterId: () => this.clusterId(),
      apis: () => this.apiTable,
      maxFetchWaitMs: 20_000,
      ...(options.sasl ? { sasl: options.sasl } : {}),
    };
    this.server = createServer((socket) => this.accept(socket));
  }

  async listen(): Promise<BrokerAddress> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port ?? 9092, this.options.host ?? '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.address = this.server.address() as AddressInfo;
    return this.broker();
  }

  broker(): BrokerAddress {
    const address = this.address;
    if (!address) throw new Error('the gateway is not listening');
    return {
      nodeId: this.options.nodeId ?? 0,
      host:
        this.options.advertisedHost ??
        (address.address === '0.0.0.0' || address.address === '::' ? '127.0.0.1' : address.address),
      port: this.options.advertisedPort ?? address.port,
      rack: this.options.rack ?? null,
    };
  }

  /** Where the server listens (which may differ from what it advertises). */
  get listening(): { host: string; port: number } {
    if (!this.address) throw new Error('the gateway is not listening');
    return { host: this.address.address, port: this.address.port };
  }

  /** host:port for clients' bootstrap.servers. */
  get bootstrap(): string {
    const b = this.broker();
    return `${b.host}:${b.port}`;
  }

  stats(): GatewayStats {
    return {
      connections: this.connections.size,
      refusedConnections: this.refused,
      peakInFlight: Math.max(this.peakInFlight, ...[...this.connections].map((c) => c.peakInFlight)),
      peakRequestBytes: this.memory.peak,
    };
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const c of this.connections) c.close('the gateway is stopping');
    await closed;
  }

  private accept(socket: Socket): void {
    if (this.connections.size >= (this.options.maxConnections ?? 1000)) {
      this.refused++;
      socket.destroy();
      return;
    }
    const connection = new Connection(this.nextId++, socket, this.context, this.limits, this.memory, {
      log: (line) => this.options.log?.(line),
      closed: (c) => {
        this.peakInFlight = Math.max(this.peakInFlight, c.peakInFlight);
        this.connections.delete(c);
      },
    });
    this.connections.add(connection);
  }

  private clusterId(): Promise<string> {
    this.cachedClusterId ??= this.context.sluice.cluster().then(
      (c) => c.clusterId,
      (error: unknown) => {
        this.cachedClusterId = undefined;
        throw error;
      },
    );
    return this.cachedClusterId;
  }
}
