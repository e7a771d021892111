/**
 * The entry point, after kafkajs's shape: one client per Sluice deployment, handing out an admin,
 * producers and consumers that share its transport and retry policy.
 */
import { Admin } from './admin.js';
import type { ConsumerOptions } from './consumer.js';
import { Consumer } from './consumer.js';
import { ConnectAdmin } from './connect.js';
import { StreamsQueries } from './streams.js';
import type { GroupMemberOptions } from './group-member.js';
import { GroupMember } from './group-member.js';
import type { ProducerOptions } from './producer.js';
import { Producer } from './producer.js';
import type { Retrier, RetryDeps, RetryOptions } from './retry.js';
import { createRetrier } from './retry.js';
import type { AwsCredentials, AwsCredentialsProvider } from './sigv4.js';
import { sigV4Fetch, signedHeaders } from './sigv4.js';
import type { WaitChannel } from './wait-socket.js';
import { WebSocketWaitChannel } from './wait-socket.js';
import type { FetchLike } from './transport.js';
import { Transport } from './transport.js';

export interface SluiceClientOptions {
  /** Base URL of the API (the local stack's `url`, or the API Gateway endpoint). */
  url: string;
  /** A fetch implementation (default the global one), e.g. one that signs requests with SigV4. */
  fetch?: FetchLike;
  /** Backoff for retriable errors (default 5 retries from 100 ms, doubling, ±20 % jitter, 10 s cap). */
  retry?: RetryOptions & RetryDeps;
  /** Sent with every request. */
  headers?: Record<string, string>;
  /**
   * Kafka's client.id, sent as the `Kafka-Client-Id` header: what client quotas (`--entity-type
   * clients`) are set for.
   */
  clientId?: string;
  /** Per-request timeout in ms (default 30000). */
  requestTimeoutMs?: number;
  /**
   * Sign every request with SigV4 for API Gateway (`execute-api`) in this region, as a deployed
   * Sluice requires. Without it requests go unsigned (the local stack).
   */
  region?: string;
  /** Credentials to sign with (default: the AWS SDK's default chain); only with `region`. */
  credentials?: AwsCredentials | AwsCredentialsProvider;
  /** A profile of ~/.aws/config for the default chain; only with `region`. */
  profile?: string;
  /**
   * Where consumers wait once caught up (docs/api.md "Waiting on a WebSocket"): a `ws://`/`wss://` URL,
   * or false for none (they long-poll). Default: GET /v1/cluster's `waitUrl`, asked once per client.
   */
  waitUrl?: string | false;
  /** Opens consumers' wait channels instead of a WebSocket (tests run the wait socket in-process). */
  waitChannel?: () => Promise<WaitChannel | undefined>;
}

export class SluiceClient {
  private readonly transport: Transport;
  private readonly retrier: Retrier;
  private readonly openWaitChannel: () => Promise<WaitChannel | undefined>;
  private waitUrl: Promise<string | undefined> | undefined;

  constructor({
    url,
    fetch,
    retry = {},
    headers,
    clientId,
    requestTimeoutMs,
    region,
    credentials,
    profile,
    waitUrl,
    waitChannel,
  }: SluiceClientOptions) {
    const send =
      region === undefined
        ? fetch
        : sigV4Fetch({
            region,
            ...(credentials ? { credentials } : {}),
            ...(profile ? { profile } : {}),
            ...(fetch ? { fetch } : {}),
          });
    this.transport = new Transport({
      url,
      ...(send ? { fetch: send } : {}),
      ...(headers || clientId !== undefined
        ? { headers: { ...headers, ...(clientId !== undefined ? { 'kafka-client-id': clientId } : {}) } }
        : {}),
      ...(requestTimeoutMs !== undefined ? { requestTimeoutMs } : {}),
    });
    const { sleep, random, ...policy } = retry;
    this.retrier = createRetrier(policy, { ...(sleep ? { sleep } : {}), ...(random ? { random } : {}) });
    // The upgrade request is signed as every request is (API Gateway's IAM authorizer on $connect).
    const signer =
      region === undefined
        ? undefined
        : signedHeaders({
            region,
            ...(credentials ? { credentials } : {}),
            ...(profile ? { profile } : {}),
          });
    if (waitUrl !== undefined) this.waitUrl = Promise.resolve(waitUrl === false ? undefined : waitUrl);
    this.openWaitChannel =
      waitChannel ??
      (async () => {
        this.waitUrl ??= this.admin()
          .cluster()
          .then((c) => c.waitUrl)
          .catch(() => undefined);
        const url = await this.waitUrl;
        return url === undefined
          ? undefined
          : new WebSocketWaitChannel({ url, ...(signer ? { headers: signer } : {}) });
      });
  }

  admin(): Admin {
    return new Admin(this.transport, this.retrier);
  }

  producer(options: ProducerOptions = {}): Producer {
    return new Producer(this.transport, this.retrier, options);
  }

  consumer(options: ConsumerOptions = {}): Consumer {
    return new Consumer(this.transport, this.retrier, options, this.openWaitChannel);
  }

  /** Kafka Connect's REST API: connectors, their status, lifecycle and offsets. */
  connect(): ConnectAdmin {
    return new ConnectAdmin(this.transport, this.retrier);
  }

  /** Interactive queries of a Streams application's state stores (its application.id). */
  streams(applicationId: string): StreamsQueries {
    return new StreamsQueries(this.transport, this.retrier, applicationId);
  }

  /**
   * A bare KIP-848 group member (heartbeat, commit, leave) for callers that fetch and commit on their
   * own schedule, such as Connect's sink tasks (they commit only what their sink made durable) and Streams' tasks.
   */
  groupMember(options: GroupMemberOptions): GroupMember {
    return new GroupMember(this.transport, this.retrier, options);
  }
}
