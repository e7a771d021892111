/**
 * `consume --group`: the member's side of a consumer group. The membership heartbeats in the background;
 * this file reads the partitions it is assigned from their committed offsets (or --from when there is
 * none), commits what was printed every few seconds, before a partition is released and on exit, and
 * leaves the group when done or on Ctrl-C.
 */
import type { Context } from '../command.js';
import { describePartitions } from '../format.js';
import type { Reconciler } from '../group-membership.js';
import { GroupMembership } from '../group-membership.js';
import { SluiceError } from '../../sdk/errors.js';
import { delay } from '../io.js';
import type { ConsumeSettings } from './consume.js';

export interface GroupSettings {
  groupId: string;
  /** Where a partition without a committed offset starts (Kafka's auto.offset.reset). */
  reset: 'earliest' | 'latest';
  commitIntervalMs: number;
}

interface Reader {
  stop: AbortController;
  done: Promise<void>;
  caughtUp: boolean;
}

/** Commit errors after which the next heartbeat sorts things out (a new epoch, a rejoin) and commits again. */
const RECOVERABLE_COMMIT_ERRORS = new Set(['STALE_MEMBER_EPOCH', 'FENCED_MEMBER_EPOCH', 'UNKNOWN_MEMBER_ID']);

class GroupConsumer implements Reconciler {
  readonly membership: GroupMembership;
  private readonly readers = new Map<number, Reader>();
  private readonly committed = new Map<number, number>();
  private commits: Promise<void> = Promise.resolve();
  private failure: { error: unknown } | undefined;
  private settle: () => void = () => {};
  /** Resolves when there is nothing left to do (without --follow: every owned partition caught up) or on failure. */
  readonly finished: Promise<void>;

  constructor(
    private readonly ctx: Context,
    private readonly settings: ConsumeSettings,
    private readonly group: GroupSettings,
  ) {
    this.finished = new Promise((resolve) => (this.settle = resolve));
    this.membership = new GroupMembership({
      api: ctx.api,
      groupId: group.groupId,
      topic: settings.topic,
      reconciler: this,
      note: (text) => ctx.note(text),
    });
  }

  fail(error: unknown): void {
    this.failure ??= { error };
    this.settle();
  }

  async assign(partitions: number[]): Promise<void> {
    const { api } = this.ctx;
    const { topic } = this.settings;
    const committed = await api.committedOffsets(this.group.groupId, topic);
    // Every start is known before any reader runs, so "all caught up" never counts a partial set.
    const starts = await Promise.all(
      partitions.map(async (p) => {
        const offset = committed.find((o) => o.topic === topic && o.partition === p)?.offset;
        if (offset !== undefined) {
          this.committed.set(p, offset);
          return offset;
        }
        return (await api.listOffsets(topic, p, this.group.reset)).offset ?? 0;
      }),
    );
    for (const [i, p] of partitions.entries()) this.startReader(p, starts[i] ?? 0);
  }

  async revoke(partitions: number[]): Promise<void> {
    await this.stopReaders(partitions);
    await this.commit(partitions);
    this.forget(partitions);
  }

  async lose(partitions: number[]): Promise<void> {
    await this.stopReaders(partitions);
    this.forget(partitions);
  }

  reconciled(): void {
    const done = [...this.readers.values()].every((r) => r.caughtUp);
    if (!this.settings.follow && this.membership.assigned && done) this.settle();
  }

  /** Commits each given partition's position when it moved since the last commit. */
  commit(partitions: number[] = [...this.readers.keys()]): Promise<void> {
    const next = this.commits.then(() => this.commitNow(partitions));
    this.commits = next.catch(() => {});
    return next;
  }

  async stopReaders(partitions: number[] = [...this.readers.keys()]): Promise<void> {
    const stopping = partitions.flatMap((p) => {
      const reader = this.readers.get(p);
      reader?.stop.abort();
      return reader ? [reader.done] : [];
    });
    await Promise.all(stopping);
  }

  /** Runs until done, interrupted or failed; then commits, leaves and rethrows a failure. */
  async run(): Promise<void> {
    const { ctx, membership, settings } = this;
    const background = new AbortController();
    const tasks: Promise<void>[] = [];
    try {
      const again = await membership.heartbeat();
      tasks.push(
        membership.run(background.signal, { immediately: again }).catch((e: unknown) => this.fail(e)),
        this.commitPeriodically(background.signal).catch((e: unknown) => this.fail(e)),
      );
      await Promise.race([this.finished, aborted(settings.stop.signal)]);
    } finally {
      background.abort();
      await Promise.all(tasks);
      await this.stopReaders();
      const owned = [...this.readers.keys()];
      try {
        await this.commit();
        if (owned.length > 0)
          ctx.note(`Committed offsets of ${settings.topic} ${describePartitions(owned)}.`);
      } catch (error) {
        ctx.note(`Could not commit offsets on exit (${describe(error)}); they will be consumed again.`);
      }
      try {
        const member = membership.memberId;
        const joined = membership.assigned;
        await membership.leave();
        if (joined) ctx.note(`Member ${member} left group ${this.group.groupId}.`);
      } catch (error) {
        ctx.note(
          `Could not leave the group (${describe(error)}); the session timeout will remove the member.`,
        );
      }
    }
    if (this.failure) throw this.failure.error;
  }

  private startReader(partition: number, offset: number): void {
    const { ctx, settings, group } = this;
    const stop = new AbortController();
    const reader: Reader = { stop, caughtUp: false, done: Promise.resolve() };
    reader.done = ctx.api
      .readPartition({
        topic: settings.topic,
        partition,
        offset,
        follow: settings.follow,
        encoding: settings.encoding,
        signal: AbortSignal.any([stop.signal, settings.stop.signal]),
        onOutOfRange: ({ offset: was, logStartOffset, highWatermark }) => {
          const to = group.reset === 'earliest' ? logStartOffset : highWatermark;
          ctx.note(
            `Offset ${was} of ${settings.topic}-${partition} is outside [${logStartOffset}, ${highWatermark}]; ` +
              `resetting to ${group.reset} (${to}).`,
          );
          return to;
        },
        deliver: (records, next) => settings.sink.deliver(partition, records, next),
      })
      .then(
        (outcome) => {
          if (outcome === 'caught-up') reader.caughtUp = true;
          this.reconciled();
        },
        (error: unknown) => this.fail(error),
      );
    this.settings.sink.positions.set(partition, offset);
    this.readers.set(partition, reader);
  }

  private forget(partitions: number[]): void {
    for (const p of partitions) {
      this.readers.delete(p);
      this.committed.delete(p);
      this.settings.sink.positions.delete(p);
    }
  }

  private async commitNow(partitions: number[]): Promise<void> {
    const { topic, sink } = this.settings;
    const offsets = partitions.flatMap((partition) => {
      const offset = sink.positions.get(partition);
      return offset !== undefined && offset !== this.committed.get(partition)
        ? [{ topic, partition, offset }]
        : [];
    });
    if (offsets.length === 0 || this.membership.memberEpoch <= 0) return;
    let results;
    try {
      results = await this.ctx.api.commitOffsets(this.group.groupId, {
        memberId: this.membership.memberId,
        memberEpoch: this.membership.memberEpoch,
        offsets,
      });
    } catch (error) {
      if (error instanceof SluiceError && RECOVERABLE_COMMIT_ERRORS.has(error.code)) {
        this.ctx.note(`Commit not accepted (${error.code}); committing again after the next heartbeat.`);
        return;
      }
      throw error;
    }
    for (const result of results) {
      const sent = offsets.find((o) => o.partition === result.partition);
      if (result.error) this.ctx.note(`Commit of ${topic}-${result.partition} failed: ${result.error.code}`);
      else if (sent) this.committed.set(result.partition, sent.offset);
    }
  }

  private async commitPeriodically(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await delay(this.group.commitIntervalMs, signal);
      if (!signal.aborted) await this.commit();
    }
  }
}

const aborted = (signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });

const describe = (error: unknown): string =>
  error instanceof SluiceError
    ? `${error.code}: ${error.message}`
    : error instanceof Error
      ? error.message
      : String(error);

export const consumeInGroup = async (
  ctx: Context,
  settings: ConsumeSettings,
  group: GroupSettings,
): Promise<void> => {
  // A clear UNKNOWN_TOPIC_OR_PARTITION before joining a group that could never be assigned anything.
  await ctx.api.describeTopic(settings.topic);
  await new GroupConsumer(ctx, settings, group).run();
};
