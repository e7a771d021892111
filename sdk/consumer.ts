/**
 * The consumer: one long poll over every owned partition (Kafka's Fetch, POST /v1/fetch: whole stored
 * RecordBatches, decoded here), so a caught-up consumer holds one fetch function, not one per partition. Without a group it reads every partition of its topics; with one it
 * owns what the group's server-side assignor hands it, commits positions under its member epoch, and
 * releases revoked partitions only after their last delivery and commit.
 */
import type { AbortedTransaction } from '../protocol/record-batch/index.js';
import {
  AbortedFilter,
  decodeRecordBatch,
  readBatchHeader,
  splitBatches,
} from '../protocol/record-batch/index.js';
import { SluiceError } from './errors.js';
import { GroupMember } from './group-member.js';
import { RECORD_BATCH_MEDIA_TYPE } from './producer.js';
import type { Retrier } from './retry.js';
import type { ConsumerGroupMetadata } from './transaction-manager.js';
import type { Transport } from './transport.js';
import { ArrivalRate, DEFAULT_PACED_FETCH_MS, paces } from './fetch-pacing.js';
import type { WaitChannel, WaitConnection } from './wait-socket.js';
import { path } from './transport.js';
import type {
  ConsumedRecord,
  IsolationLevel,
  MultiFetchResult,
  TopicDescription,
  TopicPartitions,
} from './types.js';

export interface ConsumerOptions {
  /** Join this consumer group; without it the consumer reads all partitions of its topics. */
  groupId?: string;
  /**
   * Per-fetch byte budget (default 4 MiB, the API's cap). The server reads whole stored batches and
   * one past the budget, so a budget near the producers' batch size reads up to twice what it returns.
   */
  maxBytes?: number;
  /** Long-poll wait of each fetch in ms (default 5000, at most 20000), when it does not wait on the socket. */
  maxWaitMs?: number;
  /**
   * How a caught-up consumer waits: `socket` (default, where the deployment has a wait socket) names
   * its WebSocket connection in each fetch, which registers the partitions it leaves caught up, and
   * fetches again when told (no function runs while it waits); `poll` holds a long poll of `maxWaitMs`
   * instead. Without a usable socket it polls.
   */
  waitMode?: 'socket' | 'poll';
  /**
   * While waiting on the socket, fetch again (registering every partition anew) after this long even
   * if not told (default 300000, under API Gateway's 10-minute idle timeout): what bounds the wait of a
   * notification that was lost.
   */
  socketRecheckMs?: number;
  /**
   * On the socket, while records arrive so often that a fetch this long after the last almost surely
   * brings some (estimated from the batches recent fetches brought: empty at most 5 % of the time),
   * fetch again this long after the last fetch began without registering: no registration write and no
   * frame per fetch, at up to this much more delay per record. The first such fetch that brings nothing
   * registers as before. Default 500 (Kafka's fetch.max.wait.ms); 0 always registers. See
   * sdk/fetch-pacing.ts.
   */
  pacedFetchMs?: number;
  /** Kafka's max.partition.fetch.bytes: one partition's share of a fetch (default 1 MiB). */
  maxPartitionBytes?: number;
  /** Commit positions this often in a group (default 5000; 0 commits only on revoke and stop). */
  autoCommitIntervalMs?: number;
  /**
   * Kafka's enable.auto.commit (default true). False: the consumer never commits on its own (not on an
   * interval, a revoke or stop), as a consume-transform-produce loop needs that commits its positions
   * with `producer.sendOffsetsToTransaction`.
   */
  autoCommit?: boolean;
  /**
   * Kafka's isolation.level (default read_uncommitted). read_committed reads each partition only up to
   * its last stable offset and drops the records of aborted transactions.
   */
  isolationLevel?: IsolationLevel;
  instanceId?: string;
  /**
   * KIP-1082: the member id this consumer joins with (default: the server picks one). A client-chosen
   * id makes a join whose answer was lost, and was retried, land on the same member.
   */
  memberId?: string;
  rebalanceTimeoutMs?: number;
  serverAssignor?: 'uniform' | 'range';
}

export interface FetchedBatch {
  topic: string;
  partition: number;
  /** Records at or after the requested offset, in offset order. */
  records: ConsumedRecord[];
  nextOffset: number;
  highWatermark: number;
  logStartOffset: number;
  /** Under read_committed: the partition's last stable offset, where the read stopped. */
  lastStableOffset?: number;
}

export interface RunHandlers {
  /**
   * A fetched batch. A handler that stops part way calls `resolveOffset(o)`: it handled the records up
   * to and including offset `o` (one before the first record: none), so the partition's position (what
   * a commit stores) becomes `o + 1` instead of the batch's `nextOffset`.
   */
  eachBatch?: (payload: { batch: FetchedBatch; resolveOffset: (offset: number) => void }) => Promise<void>;
  eachMessage?: (payload: { topic: string; partition: number; message: ConsumedRecord }) => Promise<void>;
  /**
   * Kafka's ConsumerRebalanceListener, in a group: after each new assignment (with the partitions it
   * added, possibly none), after revoked partitions were released and their positions committed, and
   * after the member was fenced and lost its partitions uncommitted.
   */
  onPartitionsAssigned?: (partitions: TopicPartitions[]) => void | Promise<void>;
  onPartitionsRevoked?: (partitions: TopicPartitions[]) => void | Promise<void>;
  onPartitionsLost?: (partitions: TopicPartitions[]) => void | Promise<void>;
  /** A position outside the log (retention moved past it) was reset to auto.offset.reset's bound. */
  onOffsetReset?: (p: { topic: string; partition: number; offset: number; resetTo: number }) => void;
  /** librdkafka's partition EOF: a fetch left the partition's position at its high watermark. */
  onPartitionEof?: (p: { topic: string; partition: number; offset: number }) => void;
}

interface OwnedPartition {
  topic: string;
  partition: number;
  position: number | undefined;
  committed: number | undefined;
  /** Whether the last fetch ended at the high watermark (so EOF is reported once per catch-up). */
  atEof: boolean;
  /** Being released: nothing more is delivered from it. */
  revoked: boolean;
  /** Where a fetch registered it on the wait socket's connection, not yet told. */
  waitingAt?: number | undefined;
}

/** One partition to fetch: Kafka's FetchPartition. */
export interface PartitionFetchRequest {
  topic: string;
  partition: number;
  offset: number;
  /** This partition's share of the answer (default the consumer's maxPartitionBytes). */
  maxBytes?: number;
  /** With the fetch's `wait`: where an earlier answer registered it (kept if the fetch does not move it). */
  waitingAt?: number;
}

/**
 * A partition's part of a multi-partition fetch: its records (and, with `wait`, where it is registered
 * on the connection), or its own error.
 */
export type PartitionFetchOutcome =
  | (FetchedBatch & {
      waitingAt?: number;
      /** The stored batches that brought records: the arrivals paced fetching counts (fetch-pacing.ts). */
      batches: number;
    })
  | { topic: string; partition: number; error: SluiceError };

/** After the socket failed, how long the consumer long-polls before it tries the socket again. */
const SOCKET_RETRY_MS = 30_000;

/** How long the loop leaves a partition whose fetch failed retriably before asking again. */
const PARTITION_RETRY_MS = 200;

const key = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

export class Consumer {
  private readonly options: Required<
    Pick<ConsumerOptions, 'maxBytes' | 'maxWaitMs' | 'autoCommitIntervalMs' | 'maxPartitionBytes'>
  > &
    ConsumerOptions;
  private topics: string[] = [];
  private fromBeginning = false;
  private readonly owned = new Map<string, OwnedPartition>();
  private readonly seeks = new Map<string, number>();
  private member: GroupMember | undefined;
  private handlers: RunHandlers = {};
  private stopping: AbortController | undefined;
  private running: Promise<void> | undefined;
  private failure: unknown;
  /** The fetch loop over all owned partitions, while there are any. */
  private fetching: Promise<void> | undefined;
  /** The loop's poll in flight: aborted when the assignment changes, so the next poll covers it. */
  private poll: AbortController | undefined;
  /** The loop's current poll and delivery; a release waits for it. */
  private cycle: Promise<void> = Promise.resolve();
  /** Wakes the loop when it has nothing to fetch and partitions were added. */
  private wakeIdle: (() => void) | undefined;
  /** Where the next poll starts its partition list (Kafka rotates it, so no partition starves). */
  private rotation = 0;
  /** The wait socket, once asked for (undefined inside: the deployment has none, or it would not open). */
  private channel: Promise<WaitChannel | undefined> | undefined;
  /** Until when the consumer long-polls because the socket failed. */
  private socketFailedUntil = 0;
  /** The connection the owned partitions' `waitingAt` are registered on. */
  private registeredOn: string | undefined;
  /**
   * The last fetch on the socket brought nothing and left a partition unregistered: the next one
   * long-polls (still registering), so a server that registers nothing is never asked in a tight loop.
   */
  private pollNext = false;
  /** Batches a second that recent caught-up fetches brought: whether the next fetch is paced. */
  private readonly arrivals = new ArrivalRate();
  /** The next fetch on the socket is paced: it names no connection and registers nothing. */
  private pacedNext = false;
  /** Counts assignment changes: a cycle that saw one says nothing of the arrival rate. */
  private assignments = 0;

  constructor(
    private readonly transport: Transport,
    private readonly retry: Retrier,
    options: ConsumerOptions = {},
    /** Opens the consumer's wait socket (SluiceClient: at GET /v1/cluster's waitUrl). */
    private readonly openChannel?: () => Promise<WaitChannel | undefined>,
  ) {
    this.options = {
      maxBytes: 4 * 1024 * 1024,
      maxWaitMs: 5_000,
      autoCommitIntervalMs: 5_000,
      maxPartitionBytes: 1024 * 1024,
      ...options,
    };
  }

  /** Topics to read; `fromBeginning` decides where a partition without a committed offset starts. */
  subscribe({ topics, fromBeginning = false }: { topics: string[]; fromBeginning?: boolean }): void {
    if (this.running) throw new SluiceError('INVALID_REQUEST', 'subscribe before run', { retriable: false });
    this.topics = [...new Set([...this.topics, ...topics])];
    this.fromBeginning = fromBeginning;
  }

  /** Start a partition at this offset instead of its committed or reset position. */
  seek({ topic, partition, offset }: { topic: string; partition: number; offset: number }): void {
    const owned = this.owned.get(key(topic, partition));
    if (owned) owned.position = offset;
    else this.seeks.set(key(topic, partition), offset);
  }

  /** The partitions this consumer reads now. */
  assignment(): TopicPartitions[] {
    return groupByTopic([...this.owned.values()]);
  }

  /** The group member's id and epoch (null and 0 before it joined, or without a group). */
  get memberId(): string | null {
    return this.member?.memberId ?? null;
  }

  get memberEpoch(): number {
    return this.member?.memberEpoch ?? 0;
  }

  /**
   * Kafka's consumer.groupMetadata(): what `producer.sendOffsetsToTransaction` passes so the
   * coordinator fences the commit of a member that was removed from the group (KIP-447).
   */
  groupMetadata(): ConsumerGroupMetadata {
    if (!this.options.groupId)
      throw new SluiceError('INVALID_REQUEST', 'only a consumer with a groupId has group metadata', {
        retriable: false,
      });
    return { groupId: this.options.groupId, generationId: this.memberEpoch, memberId: this.memberId };
  }

  /** Next offset to read per owned partition. */
  positions(): { topic: string; partition: number; offset: number }[] {
    return [...this.owned.values()].flatMap((p) =>
      p.position === undefined ? [] : [{ topic: p.topic, partition: p.partition, offset: p.position }],
    );
  }

  /**
   * Consumes until `stop()` (resolves) or until a handler or a non-retriable error fails it (rejects
   * with that error). A handler's failure is not committed past: the batch is read again by whoever
   * owns the partition next.
   */
  run(handlers: RunHandlers): Promise<void> {
    if (this.running)
      return Promise.reject(
        new SluiceError('INVALID_REQUEST', 'the consumer is already running', { retriable: false }),
      );
    if (this.topics.length === 0)
      return Promise.reject(
        new SluiceError('INVALID_REQUEST', 'subscribe to a topic first', { retriable: false }),
      );
    this.handlers = handlers;
    this.failure = undefined;
    const stopping = (this.stopping = new AbortController());
    this.member = this.options.groupId
      ? new GroupMember(this.transport, this.retry, {
          groupId: this.options.groupId,
          subscribedTopics: this.topics,
          ...pick(this.options, ['instanceId', 'rebalanceTimeoutMs', 'serverAssignor']),
        })
      : undefined;
    if (this.member && this.options.memberId !== undefined) this.member.memberId = this.options.memberId;
    const running = this.loop(stopping.signal)
      .catch((error: unknown) => this.fail(error))
      .then(() => this.shutdown())
      .finally(() => {
        this.running = undefined;
      })
      .then(() => {
        if (this.failure !== undefined) throw this.failure;
      });
    this.running = running;
    return running;
  }

  /** Stops consuming: commits positions (in a group), leaves the group, and waits for the loops. */
  async stop(): Promise<void> {
    this.stopping?.abort();
    await this.running?.catch(() => undefined);
  }

  /** One fetch of a partition from `offset` (a long poll when `maxWaitMs` > 0). */
  async fetch(
    topic: string,
    partition: number,
    offset: number,
    {
      maxBytes = this.options.maxBytes,
      maxWaitMs = 0,
      signal,
    }: { maxBytes?: number; maxWaitMs?: number; signal?: AbortSignal } = {},
  ): Promise<FetchedBatch> {
    const answer = await this.retry(() =>
      this.transport.send({
        method: 'GET',
        path: path`/v1/topics/${topic}/partitions/${partition}/records`,
        query: { offset, maxBytes, maxWaitMs, isolationLevel: this.isolationQuery() },
        accept: RECORD_BATCH_MEDIA_TYPE,
        extraTimeoutMs: maxWaitMs,
        ...(signal ? { signal } : {}),
      }),
    );
    const committed = this.options.isolationLevel === 'read_committed';
    const { records } = decodeFrom(
      answer.body,
      topic,
      partition,
      offset,
      committed ? parseAborted(answer.headers.get('sluice-aborted-transactions')) : undefined,
    );
    const header = (name: string): number => {
      const value = answer.headers.get(name);
      if (value === null || !/^\d+$/.test(value)) {
        throw new SluiceError('UNKNOWN_SERVER_ERROR', `the fetch answer has no valid ${name} header`, {
          retriable: false,
        });
      }
      return Number(value);
    };
    return {
      topic,
      partition,
      records,
      nextOffset: header('sluice-next-offset'),
      highWatermark: header('sluice-high-watermark'),
      logStartOffset: header('sluice-log-start-offset'),
      ...(committed ? { lastStableOffset: header('sluice-last-stable-offset') } : {}),
    };
  }

  /**
   * One fetch of many partitions (Kafka's Fetch): a long poll when `maxWaitMs` > 0 that answers as soon
   * as any partition has records. Each partition answers in order with its records or its own error.
   */
  async fetchMany(
    partitions: PartitionFetchRequest[],
    {
      maxBytes = this.options.maxBytes,
      maxWaitMs = 0,
      signal,
      wait,
    }: { maxBytes?: number; maxWaitMs?: number; signal?: AbortSignal; wait?: WaitConnection } = {},
  ): Promise<PartitionFetchOutcome[]> {
    const answer = await this.retry(() =>
      this.transport.json<MultiFetchResult>({
        method: 'POST',
        path: '/v1/fetch',
        json: {
          maxBytes,
          maxWaitMs,
          ...(this.options.isolationLevel === 'read_committed' ? { isolationLevel: 'read_committed' } : {}),
          partitions: partitions.map((p) => ({
            topic: p.topic,
            partition: p.partition,
            offset: p.offset,
            maxBytes: p.maxBytes ?? this.options.maxPartitionBytes,
            ...(wait && p.waitingAt !== undefined ? { waitingAt: p.waitingAt } : {}),
          })),
          ...(wait ? { wait } : {}),
        },
        extraTimeoutMs: maxWaitMs,
        ...(signal ? { signal } : {}),
      }),
    );
    if (!answer || !Array.isArray(answer.partitions) || answer.partitions.length !== partitions.length) {
      throw new SluiceError(
        'UNKNOWN_SERVER_ERROR',
        'the fetch answer does not answer every partition asked',
        {
          retriable: false,
        },
      );
    }
    return answer.partitions.map((p, i): PartitionFetchOutcome => {
      const asked = partitions[i]!;
      if (p.topic !== asked.topic || p.partition !== asked.partition) {
        throw new SluiceError('UNKNOWN_SERVER_ERROR', 'the fetch answer is not in the order asked', {
          retriable: false,
        });
      }
      const id = { topic: asked.topic, partition: asked.partition };
      if (p.error) {
        const details: Record<string, unknown> = {};
        if (p.highWatermark !== undefined) details['highWatermark'] = p.highWatermark;
        if (p.logStartOffset !== undefined) details['logStartOffset'] = p.logStartOffset;
        return {
          ...id,
          error: new SluiceError(p.error.code, p.error.message, { retriable: p.error.retriable, details }),
        };
      }
      const committed = this.options.isolationLevel === 'read_committed';
      const numbers = [p.nextOffset, p.highWatermark, p.logStartOffset];
      if (committed) numbers.push(p.lastStableOffset);
      if (
        !numbers.every((n) => Number.isSafeInteger(n)) ||
        typeof p.recordBatches !== 'string' ||
        (committed && !validAborted(p.abortedTransactions))
      ) {
        throw new SluiceError(
          'UNKNOWN_SERVER_ERROR',
          'the fetch answer has a partition without its numbers',
          {
            retriable: false,
          },
        );
      }
      const body = new Uint8Array(Buffer.from(p.recordBatches, 'base64'));
      const { records, batches } = decodeFrom(
        body,
        asked.topic,
        asked.partition,
        asked.offset,
        committed ? p.abortedTransactions : undefined,
      );
      return {
        ...id,
        records,
        batches,
        nextOffset: p.nextOffset!,
        highWatermark: p.highWatermark!,
        logStartOffset: p.logStartOffset!,
        ...(committed ? { lastStableOffset: p.lastStableOffset! } : {}),
        ...(wait && Number.isSafeInteger(p.waitingAt) ? { waitingAt: p.waitingAt! } : {}),
      };
    });
  }

  /** Commits the current positions (or the given offsets) for the group. */
  async commitOffsets(offsets?: { topic: string; partition: number; offset: number }[]): Promise<void> {
    if (!this.member)
      throw new SluiceError('INVALID_REQUEST', 'only a consumer with a groupId commits offsets', {
        retriable: false,
      });
    const chosen =
      offsets ??
      this.positions().filter((p) => this.owned.get(key(p.topic, p.partition))?.committed !== p.offset);
    await this.member.commit(chosen);
    for (const o of chosen) {
      const owned = this.owned.get(key(o.topic, o.partition));
      if (owned) owned.committed = o.offset;
    }
  }

  private async loop(signal: AbortSignal): Promise<void> {
    if (!this.member) {
      const all = await Promise.all(this.topics.map((t) => this.describe(t)));
      await this.add(
        all.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partition }))),
      );
      await new Promise<void>((resolve) =>
        signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve()),
      );
      return;
    }
    const member = this.member;
    let nextCommit = Date.now() + this.options.autoCommitIntervalMs;
    while (!signal.aborted) {
      const outcome = await member.heartbeat(this.assignment());
      let reconciled = false;
      if (outcome.kind === 'fenced') {
        // Fenced: our partitions may already be someone else's, so nothing is committed.
        const lost = this.assignment();
        await this.remove([...this.owned.keys()], false);
        if (lost.length > 0) await this.handlers.onPartitionsLost?.(lost);
        continue;
      }
      if (outcome.kind === 'assignment') {
        const target = new Set(
          outcome.topicPartitions.flatMap((tp) => tp.partitions.map((p) => key(tp.topic, p))),
        );
        const revoked = [...this.owned.keys()].filter((k) => !target.has(k));
        const added = outcome.topicPartitions.flatMap((tp) =>
          tp.partitions
            .filter((p) => !this.owned.has(key(tp.topic, p)))
            .map((partition) => ({ topic: tp.topic, partition })),
        );
        if (revoked.length > 0) {
          const gone = groupByTopic(revoked.map((k) => this.owned.get(k)!));
          await this.remove(revoked, true);
          reconciled = true;
          await this.handlers.onPartitionsRevoked?.(gone);
        }
        await this.add(added);
        reconciled ||= added.length > 0;
        await this.handlers.onPartitionsAssigned?.(groupByTopic(added));
      }
      if (this.autoCommits() && this.options.autoCommitIntervalMs > 0 && Date.now() >= nextCommit) {
        await this.commitQuietly();
        nextCommit = Date.now() + this.options.autoCommitIntervalMs;
      }
      // A reconciled assignment is reported at once (KIP-848's acknowledgement): a release so the
      // partition's next owner need not wait a whole interval, an addition so the group sees it owned.
      if (!reconciled) await sleep(member.heartbeatIntervalMs, signal);
    }
  }

  private async add(partitions: { topic: string; partition: number }[]): Promise<void> {
    if (partitions.length === 0) return;
    const committed = new Map<string, number>();
    if (this.member) {
      for (const topic of new Set(partitions.map((p) => p.topic))) {
        for (const [partition, offset] of await this.member.committed(topic))
          committed.set(key(topic, partition), offset);
      }
    }
    for (const { topic, partition } of partitions) {
      const k = key(topic, partition);
      const start = this.seeks.get(k) ?? committed.get(k);
      this.seeks.delete(k);
      this.owned.set(k, {
        topic,
        partition,
        position: start,
        committed: committed.get(k),
        atEof: false,
        revoked: false,
      });
    }
    // The poll in flight does not cover the new partitions: end it so the next one does.
    this.assignmentChanged();
    this.poll?.abort();
    this.wakeIdle?.();
    const stopping = this.stopping?.signal;
    if (!this.fetching && stopping && !stopping.aborted) {
      this.fetching = this.fetchLoop(stopping)
        .catch((error: unknown) => this.fail(error))
        .finally(() => {
          this.fetching = undefined;
        });
    }
  }

  /** Stops the loops of these partitions, waits for their deliveries, then commits their positions. */
  private async remove(keys: string[], commit: boolean): Promise<void> {
    const leaving = keys.flatMap((k) => this.owned.get(k) ?? []);
    for (const p of leaving) p.revoked = true;
    // End the poll in flight (it covers these partitions) and wait for a delivery under way.
    this.assignmentChanged();
    this.poll?.abort();
    await this.cycle;
    if (commit && this.autoCommits() && this.member && this.failure === undefined) {
      const offsets = leaving.flatMap((p) =>
        p.position === undefined || p.position === p.committed
          ? []
          : [{ topic: p.topic, partition: p.partition, offset: p.position }],
      );
      await this.member.commit(offsets).catch(ignoreFencing);
    }
    for (const k of keys) this.owned.delete(k);
  }

  /** Polls every owned partition in one fetch until stopped; idles while nothing is owned. */
  private async fetchLoop(stopping: AbortSignal): Promise<void> {
    while (!stopping.aborted) {
      const cycle = this.fetchCycle(stopping);
      this.cycle = cycle.catch(() => undefined);
      await cycle;
    }
  }

  /** One poll of the owned partitions and the delivery of what it brought. */
  private async fetchCycle(stopping: AbortSignal): Promise<void> {
    const live = [...this.owned.values()].filter((p) => !p.revoked);
    if (live.length === 0) {
      await new Promise<void>((resolve) => {
        this.wakeIdle = resolve;
        if (stopping.aborted) resolve();
        else stopping.addEventListener('abort', () => resolve(), { once: true });
      });
      this.wakeIdle = undefined;
      return;
    }
    for (const p of live) p.position ??= await this.resetOffset(p.topic, p.partition);
    const start = this.rotation++ % live.length;
    const asked = [...live.slice(start), ...live.slice(0, start)].map((p) => ({
      owned: p,
      offset: p.position!,
    }));
    const poll = new AbortController();
    this.poll = poll;
    const stop = () => poll.abort();
    stopping.addEventListener('abort', stop, { once: true });
    let outcomes: PartitionFetchOutcome[];
    // With a wait socket the fetch names its connection and answers at once: it registers the
    // partitions it leaves caught up, and a consumer caught up on all of them waits on the socket.
    // A paced fetch (records arrive often enough) names none and registers nothing.
    const channel = await this.waitChannel();
    const connection = await this.waitConnection(channel);
    if (connection?.connectionId !== this.registeredOn) {
      for (const p of this.owned.values()) p.waitingAt = undefined;
      this.registeredOn = connection?.connectionId;
    }
    const paced = connection !== undefined && this.pacedNext;
    const assignments = this.assignments;
    const register = paced ? undefined : connection;
    const startedAt = Date.now();
    try {
      outcomes = await this.fetchMany(
        asked.map(({ owned, offset }) => ({
          topic: owned.topic,
          partition: owned.partition,
          offset,
          ...(owned.waitingAt !== undefined ? { waitingAt: owned.waitingAt } : {}),
        })),
        {
          maxWaitMs: connection && !this.pollNext ? 0 : this.options.maxWaitMs,
          signal: poll.signal,
          ...(register ? { wait: register } : {}),
        },
      );
    } catch (error) {
      // The assignment changed or the consumer stops: the next cycle polls what is owned then.
      if (poll.signal.aborted) return;
      // A connection the server will not register on (closed meanwhile, another deployment's): poll.
      if (connection && error instanceof SluiceError && error.code === 'INVALID_REQUEST') {
        this.socketFailedUntil = Date.now() + SOCKET_RETRY_MS;
        return;
      }
      throw error;
    } finally {
      stopping.removeEventListener('abort', stop);
      if (this.poll === poll) this.poll = undefined;
    }
    let retryLater = false;
    let batches = 0;
    let caughtUp = true;
    for (const [i, outcome] of outcomes.entries()) {
      const { owned: p, offset } = asked[i]!;
      // Registered (or not) by this fetch at its nextOffset, whatever happens to the records below. A
      // paced fetch leaves a registration where it was if it did not move the partition (the next
      // registering fetch keeps it without a write); one it moved past is stale (told once, ignored).
      if (!paced) p.waitingAt = connection && 'records' in outcome ? outcome.waitingAt : undefined;
      else if (!('records' in outcome) || outcome.nextOffset !== offset) p.waitingAt = undefined;
      if ('records' in outcome) batches += outcome.batches;
      // Released, stopping, or moved by seek() during the poll: leave these records.
      if (p.revoked || stopping.aborted || p.position !== offset) continue;
      if ('error' in outcome) {
        const error = outcome.error;
        if (error.code === 'OFFSET_OUT_OF_RANGE') {
          // Kafka's auto.offset.reset: earliest with fromBeginning, else latest.
          const bound = error.details[this.fromBeginning ? 'logStartOffset' : 'highWatermark'];
          p.position = typeof bound === 'number' ? bound : await this.resetOffset(p.topic, p.partition);
          this.handlers.onOffsetReset?.({
            topic: p.topic,
            partition: p.partition,
            offset,
            resetTo: p.position,
          });
          continue;
        }
        if (error.retriable) {
          retryLater = true;
          continue;
        }
        throw error;
      }
      p.position = outcome.records.length > 0 ? await this.deliver(outcome) : outcome.nextOffset;
      const atEof = p.position >= (outcome.lastStableOffset ?? outcome.highWatermark);
      if (atEof && !p.atEof)
        this.handlers.onPartitionEof?.({ topic: p.topic, partition: p.partition, offset: p.position });
      p.atEof = atEof;
      caughtUp &&= atEof;
    }
    if (channel) this.applyReady(channel);
    const nothing = outcomes.every((o) => 'records' in o && o.records.length === 0);
    // Every owned partition answered, and the assignment is the one the fetch asked about.
    const complete = assignments === this.assignments && outcomes.every((o) => 'records' in o);
    if (assignments === this.assignments) this.arrivals.observe(startedAt, batches, complete && caughtUp);
    const pacedMs = this.options.pacedFetchMs ?? DEFAULT_PACED_FETCH_MS;
    // Paced next: on the socket, caught up, this fetch brought records, and they come often enough.
    this.pacedNext =
      connection !== undefined && complete && caughtUp && !nothing && paces(this.arrivals.perSecond, pacedMs);
    const registered = connection !== undefined && this.caughtUpOnSocket();
    this.pollNext = register !== undefined && !registered && nothing;
    // A partition that failed retriably answers at once; without a pause the loop would spin on it.
    if (retryLater && outcomes.every((o) => 'error' in o || o.records.length === 0))
      await sleep(PARTITION_RETRY_MS, stopping);
    else if (this.pacedNext) await this.pace(startedAt + pacedMs, stopping);
    else if (channel && registered) await this.waitOnSocket(channel, stopping);
  }

  /** What the consumer reads changed: earlier arrivals say nothing of it, and the next fetch registers. */
  private assignmentChanged(): void {
    this.assignments += 1;
    this.arrivals.reset();
    this.pacedNext = false;
  }

  /**
   * Until the paced fetch is due (or an assignment change, which ends it as it ends a poll, or stop).
   * Records told meanwhile change nothing: the paced fetch reads every partition anyway.
   */
  private async pace(until: number, stopping: AbortSignal): Promise<void> {
    const wait = new AbortController();
    this.poll = wait;
    const stop = () => wait.abort();
    stopping.addEventListener('abort', stop, { once: true });
    try {
      await sleep(until - Date.now(), wait.signal);
    } finally {
      stopping.removeEventListener('abort', stop);
      if (this.poll === wait) this.poll = undefined;
    }
  }

  /**
   * Whether every owned partition is registered at its position and not yet told: then nothing can
   * arrive that the socket will not tell (the server checked each registration after storing it, and
   * the stream tells every later record). Otherwise the consumer fetches again at once.
   */
  private caughtUpOnSocket(): boolean {
    const live = [...this.owned.values()].filter((p) => !p.revoked);
    return live.length > 0 && live.every((p) => p.position !== undefined && p.waitingAt === p.position);
  }

  /** The registrations told: their partitions have data past them, so they are fetched, not waited on. */
  private applyReady(channel: WaitChannel): void {
    for (const r of channel.takeReady()) {
      const p = this.owned.get(key(r.topic, r.partition));
      // A ready for an offset the consumer has passed (told twice, or before it moved on) changes nothing.
      if (p && p.waitingAt !== undefined && (r.fetchOffset === undefined || r.fetchOffset === p.waitingAt))
        p.waitingAt = undefined;
    }
  }

  /**
   * Caught up and registered: waits to be told (or the re-check timer, or an assignment change, which
   * ends it as it ends a poll). After the re-check timer every partition registers anew.
   */
  private async waitOnSocket(channel: WaitChannel, stopping: AbortSignal): Promise<void> {
    if (stopping.aborted) return;
    const wait = new AbortController();
    this.poll = wait;
    const stop = () => wait.abort();
    stopping.addEventListener('abort', stop, { once: true });
    try {
      const outcome = await channel.wait({
        signal: wait.signal,
        timeoutMs: this.options.socketRecheckMs ?? 300_000,
      });
      if (outcome === 'unavailable') this.socketFailedUntil = Date.now() + SOCKET_RETRY_MS;
      if (outcome === 'timeout' || outcome === 'unavailable')
        for (const p of this.owned.values()) p.waitingAt = undefined;
      this.applyReady(channel);
    } finally {
      stopping.removeEventListener('abort', stop);
      if (this.poll === wait) this.poll = undefined;
    }
  }

  /** The wait socket to use now, or undefined to long-poll (none, or it failed lately). */
  private async waitChannel(): Promise<WaitChannel | undefined> {
    if (this.options.waitMode === 'poll' || !this.openChannel || Date.now() < this.socketFailedUntil)
      return undefined;
    this.channel ??= this.openChannel().catch(() => undefined);
    return this.channel;
  }

  /** The channel's connection to name in fetches; none (it would not open or greet): long-poll a while. */
  private async waitConnection(channel: WaitChannel | undefined): Promise<WaitConnection | undefined> {
    if (!channel) return undefined;
    const connection = await channel.connection().catch(() => undefined);
    if (!connection) this.socketFailedUntil = Date.now() + SOCKET_RETRY_MS;
    return connection;
  }

  /** Hands a batch to the handlers; resolves the partition's position after it. */
  private async deliver(batch: FetchedBatch): Promise<number> {
    const { eachBatch, eachMessage } = this.handlers;
    let resolved: number | undefined;
    const resolveOffset = (offset: number): void => {
      resolved = Math.max(resolved ?? offset, offset);
    };
    if (eachBatch) await eachBatch({ batch, resolveOffset });
    if (eachMessage) {
      for (const message of batch.records)
        await eachMessage({ topic: batch.topic, partition: batch.partition, message });
    }
    const last = batch.records.at(-1)?.offset;
    return resolved === undefined || last === undefined || resolved >= last ? batch.nextOffset : resolved + 1;
  }

  private async resetOffset(topic: string, partition: number): Promise<number> {
    const { offset } = await this.retry(() =>
      this.transport.json<{ offset: number }>({
        method: 'GET',
        path: path`/v1/topics/${topic}/partitions/${partition}/offsets`,
        query: { at: this.fromBeginning ? 'earliest' : 'latest', isolationLevel: this.isolationQuery() },
      }),
    );
    return offset;
  }

  private describe(topic: string): Promise<TopicDescription> {
    return this.retry(() =>
      this.transport.json<TopicDescription>({ method: 'GET', path: path`/v1/topics/${topic}` }),
    );
  }

  private autoCommits(): boolean {
    return this.options.autoCommit !== false;
  }

  /** The isolationLevel query parameter: absent for the default, so requests stay as they were. */
  private isolationQuery(): string | undefined {
    return this.options.isolationLevel === 'read_committed' ? 'read_committed' : undefined;
  }

  private async commitQuietly(): Promise<void> {
    await this.commitOffsets().catch(ignoreFencing);
  }

  private fail(error: unknown): void {
    this.failure ??= error;
    this.stopping?.abort();
  }

  private async shutdown(): Promise<void> {
    const commit = this.failure === undefined;
    await this.remove([...this.owned.keys()], commit).catch((error: unknown) => this.fail(error));
    await this.member?.leave().catch(() => undefined);
    (await this.channel)?.close();
    this.channel = undefined;
  }
}

/** A moved-on member epoch loses the commit, not the consumer: the next heartbeat sorts it out. */
const ignoreFencing = (error: unknown): void => {
  const fenced = ['STALE_MEMBER_EPOCH', 'FENCED_MEMBER_EPOCH', 'UNKNOWN_MEMBER_ID'];
  if (!(error instanceof SluiceError && fenced.includes(error.code))) throw error;
};

/**
 * The records of whole stored batches at or after `offset` (the first batch may start before it).
 * Control batches (transaction markers) are never records; with a read_committed fetch's aborted
 * transactions, their records are dropped as Kafka's consumer drops them. `batches`: the stored batches
 * that brought records (the arrivals paced fetching counts).
 */
const decodeFrom = (
  body: Uint8Array,
  topic: string,
  partition: number,
  offset: number,
  aborted?: readonly AbortedTransaction[],
): { records: ConsumedRecord[]; batches: number } => {
  const records: ConsumedRecord[] = [];
  let batches = 0;
  const filter = aborted ? new AbortedFilter(aborted) : undefined;
  for (const { start, end } of splitBatches(body)) {
    const bytes = body.subarray(start, end);
    const header = readBatchHeader(bytes);
    if (filter ? !filter.keeps(header, header.baseOffset) : header.isControl) continue;
    const before = records.length;
    // splitBatches verified every CRC already.
    for (const r of decodeRecordBatch(bytes, { verifyCrc: false }).records) {
      if (r.offset >= offset) records.push({ topic, partition, ...r });
    }
    if (records.length > before) batches += 1;
  }
  return { records, batches };
};

const validAborted = (list: unknown): list is AbortedTransaction[] =>
  Array.isArray(list) &&
  list.every(
    (a: unknown) =>
      typeof a === 'object' &&
      a !== null &&
      Number.isSafeInteger((a as AbortedTransaction).producerId) &&
      Number.isSafeInteger((a as AbortedTransaction).firstOffset),
  );

const parseAborted = (raw: string | null): AbortedTransaction[] => {
  let list: unknown;
  try {
    list = JSON.parse(raw ?? '');
  } catch {
    list = undefined;
  }
  if (!validAborted(list))
    throw new SluiceError(
      'UNKNOWN_SERVER_ERROR',
      'the read_committed fetch answer lists no aborted transactions',
      {
        retriable: false,
      },
    );
  return list;
};

const groupByTopic = (partitions: { topic: string; partition: number }[]): TopicPartitions[] => {
  const byTopic = new Map<string, number[]>();
  for (const { topic, partition } of partitions)
    byTopic.set(topic, [...(byTopic.get(topic) ?? []), partition]);
  return [...byTopic].map(([topic, list]) => ({ topic, partitions: list.sort((a, b) => a - b) }));
};

const pick = <T extends object, K extends keyof T>(o: T, names: K[]): Partial<Pick<T, K>> =>
  Object.fromEntries(names.filter((n) => o[n] !== undefined).map((n) => [n, o[n]])) as Partial<Pick<T, K>>;

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
