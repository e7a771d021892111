/**
 * The entry point, after kafkajs's shape: one client per Sluice deployment, handing out an admin,
 * producers and consumers that share its transport and retry policy.
 */
import { Admin } from './admin.js';
import type { ConsumerOptions } from './consumer.js';
import { Consumer } from './consumer.js';
import type { GroupMemberOptions } from './group-member.js';
import { GroupMember } from './group-member.js';
import type { ProducerOptions } from './producer.js';
import { Producer } from './producer.js';
import type { Retrier, RetryDeps, RetryOptions } from './retry.js';
import { createRetrier } from './retry.js';
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
  /** Per-request timeout in ms (default 30000). */
  requestTimeoutMs?: number;
}

export class SluiceClient {
  private readonly transport: Transport;
  private readonly retrier: Retrier;

  constructor({ url, fetch, retry = {}, headers, requestTimeoutMs }: SluiceClientOptions) {
    this.transport = new Transport({
      url,
      ...(fetch ? { fetch } : {}),
      ...(headers ? { headers } : {}),
      ...(requestTimeoutMs !== undefined ? { requestTimeoutMs } : {}),
    });
    const { sleep, random, ...policy } = retry;
    this.retrier = createRetrier(policy, { ...(sleep ? { sleep } : {}), ...(random ? { random } : {}) });
  }

  admin(): Admin {
    return new Admin(this.transport, this.retrier);
  }

  producer(options: ProducerOptions = {}): Producer {
    return new Producer(this.transport, this.retrier, options);
  }

  consumer(options: ConsumerOptions = {}): Consumer {
    return new Consumer(this.transport, this.retrier, options);
  }

  /** A bare KIP-848 group member, for clients that fetch on their own (Streams' tasks). */
  groupMember(options: GroupMemberOptions): GroupMember {
    return new GroupMember(this.transport, this.retrier, options);
  }
}
