/**
 * `consume --group`: a member of a consumer group through the SDK's consumer, which heartbeats,
 * reconciles each assignment (revoked partitions are released and committed before the group hands
 * them on), rejoins when fenced, commits positions every --commit-interval-ms and on exit, and leaves.
 * This file only prints: what the sink printed is what is committed (the batch's records it did not
 * print, past --max, stay uncommitted), and without --follow it stops once every partition it owns has
 * reached the end of the log.
 */
import { randomUUID } from 'node:crypto';
import type { Context } from '../command.js';
import { renderRecords } from '../api.js';
import { describePartitions } from '../format.js';
import type { TopicPartitions } from '../../sdk/types.js';
import type { SinkSettings } from '../record-sink.js';

export interface GroupSettings {
  groupId: string;
  /** Where a partition without a committed offset starts (Kafka's auto.offset.reset). */
  reset: 'earliest' | 'latest';
  commitIntervalMs: number;
}

/** Long-poll wait at the end of the log: following, as the plain consumer does; else a short look. */
const FOLLOW_WAIT_MS = 10_000;
const EOF_WAIT_MS = 200;

const partitionsOf = (topic: string, list: TopicPartitions[]): number[] =>
  list.filter((tp) => tp.topic === topic).flatMap((tp) => tp.partitions);

export const consumeInGroup = async (
  ctx: Context,
  settings: SinkSettings,
  group: GroupSettings,
): Promise<void> => {
  const { topic, sink, stop, follow, encoding, isolationLevel } = settings;
  // A clear UNKNOWN_TOPIC_OR_PARTITION before joining a group that could never be assigned anything.
  await ctx.api.describeTopic(topic);
  const consumer = ctx.api.groupConsumer({
    groupId: group.groupId,
    memberId: randomUUID(),
    autoCommitIntervalMs: group.commitIntervalMs,
    maxWaitMs: follow ? FOLLOW_WAIT_MS : EOF_WAIT_MS,
    isolationLevel,
  });
  consumer.subscribe({ topics: [topic], fromBeginning: group.reset === 'earliest' });
  const owned = new Set<number>();
  const atEnd = new Set<number>();
  let assigned = false;
  let memberId = '';
  const announce = (): void => {
    memberId = consumer.memberId ?? memberId;
    ctx.note(
      `Group ${group.groupId}: member ${memberId} (epoch ${consumer.memberEpoch}) owns ` +
        `${describePartitions([...owned])} of ${topic}`,
    );
  };
  // Without --follow: done once an assignment arrived and each partition it holds reached its end.
  const finishedIfCaughtUp = (): void => {
    if (!follow && assigned && [...owned].every((p) => atEnd.has(p))) stop.abort();
  };
  const forget = (partitions: number[]): void => {
    for (const p of partitions) {
      owned.delete(p);
      atEnd.delete(p);
      sink.positions.delete(p);
    }
  };

  const onStop = (): void => void consumer.stop();
  stop.signal.addEventListener('abort', onStop, { once: true });
  if (stop.signal.aborted) onStop();
  try {
    await consumer.run({
      eachBatch: async ({ batch, resolveOffset }) => {
        const records = renderRecords(batch.records, encoding);
        const all = await sink.deliver(batch.partition, records, batch.nextOffset);
        // Past --max (or Ctrl-C) the rest of the batch was not printed: only what was is committed
        // (the sink's position is the offset after the last record it printed).
        const first = records[0]?.offset ?? batch.nextOffset;
        if (!all) resolveOffset((sink.positions.get(batch.partition) ?? first) - 1);
      },
      onPartitionsAssigned: (added) => {
        const fresh = partitionsOf(topic, added);
        for (const p of fresh) owned.add(p);
        if (!assigned || fresh.length > 0) announce();
        assigned = true;
        finishedIfCaughtUp();
      },
      onPartitionsRevoked: (revoked) => {
        forget(partitionsOf(topic, revoked));
        announce();
        finishedIfCaughtUp();
      },
      onPartitionsLost: (lost) => {
        const partitions = partitionsOf(topic, lost);
        ctx.note(`Member ${memberId} lost ${describePartitions(partitions)} uncommitted (fenced); rejoining`);
        forget(partitions);
        assigned = false;
      },
      onOffsetReset: ({ partition, offset, resetTo }) =>
        ctx.note(
          `Offset ${offset} of ${topic}-${partition} is outside the log; resetting to ${group.reset} (${resetTo}).`,
        ),
      onPartitionEof: ({ partition }) => {
        atEnd.add(partition);
        finishedIfCaughtUp();
      },
    });
  } finally {
    stop.signal.removeEventListener('abort', onStop);
  }
  if (owned.size > 0) ctx.note(`Committed offsets of ${topic} ${describePartitions([...owned])}.`);
  if (memberId !== '') ctx.note(`Member ${memberId} left group ${group.groupId}.`);
};
