/**
 * OffsetDelete (kafka-consumer-groups --delete-offsets): removes a group's committed offsets for one
 * topic and answers every asked partition, as Kafka's coordinator does: no error when its offset is
 * gone (whether or not there was one), UNKNOWN_TOPIC_OR_PARTITION for a partition the topic does not
 * have, and GROUP_SUBSCRIBED_TO_TOPIC for every partition (nothing deleted) while a live member
 * subscribes to the topic. Without a partition list the asked partitions are all of the topic's. The
 * deletes go in one transaction with a check on META's version, so a member that joins (or changes
 * its subscription) between the read and the write makes the write fail and the attempt start over;
 * every membership or subscription change writes META with a new version (see group-items.ts).
 */
import { SluiceError, invalidRequest } from '../../../protocol/errors.js';
import type { MetadataStore } from '../../ports/metadata-store.js';
import { OFFSETS_PER_COMMIT } from '../../../protocol/commit-limit.js';
import { liveMembers } from './group.js';
import type { GroupItems } from './group-items.js';
import { groupKeys } from './group-items.js';
import { validateTopicName } from './requests.js';
import type { CommitResult } from './types.js';

export interface DeleteOffsetsRequest {
  topic: string;
  /** The partitions to delete; null deletes every committed offset of the topic. */
  partitions: readonly number[] | null;
}

/** Parses the route's `topic` and `partitions` (comma-separated) query parameters. */
export const parseDeleteOffsetsQuery = (query: Readonly<Record<string, string>>): DeleteOffsetsRequest => {
  const topic = validateTopicName(query['topic'], 'query parameter topic');
  const list = query['partitions'];
  if (list === undefined) return { topic, partitions: null };
  const partitions = list.split(',').map((p) => {
    if (!/^\d{1,9}$/.test(p)) throw invalidRequest('partitions must be comma-separated partition numbers');
    return Number(p);
  });
  const unique = [...new Set(partitions)];
  if (unique.length > OFFSETS_PER_COMMIT) {
    throw invalidRequest(
      `partitions lists ${unique.length} partitions; one deletion is atomic and takes at most ${OFFSETS_PER_COMMIT}: delete in several requests`,
    );
  }
  return { topic, partitions: unique };
};

export interface OffsetDeleteDeps {
  store: MetadataStore;
  items: GroupItems;
  sessionTimeoutMs: number;
}

/** The asked partitions (sorted) and those the topic does not have; a topic of none: all unknown. */
const askedPartitions = (
  { topic, partitions }: DeleteOffsetsRequest,
  topicPartitions: number | undefined,
): { asked: number[]; unknown: Set<number> } => {
  if (partitions === null) {
    if (topicPartitions === undefined)
      throw new SluiceError('UNKNOWN_TOPIC_OR_PARTITION', `topic ${topic} does not exist`);
    return { asked: Array.from({ length: topicPartitions }, (_, p) => p), unknown: new Set() };
  }
  const asked = [...partitions].sort((a, b) => a - b);
  return {
    asked,
    unknown: new Set(asked.filter((p) => topicPartitions === undefined || p >= topicPartitions)),
  };
};

/**
 * One attempt, answering each asked partition in partition order. `topicPartitions` is the topic's
 * partition count (undefined: no such topic). A lost race throws a conflict for the caller's retry.
 */
export const deleteOffsetsOnce = async (
  { store, items, sessionTimeoutMs }: OffsetDeleteDeps,
  groupId: string,
  request: DeleteOffsetsRequest,
  topicPartitions: number | undefined,
  now: number,
): Promise<CommitResult[]> => {
  const { topic } = request;
  const loaded = await items.load(groupId, now);
  if (!loaded.stored || loaded.view.meta.dead) {
    throw new SluiceError('GROUP_ID_NOT_FOUND', `group ${groupId} does not exist`);
  }
  const { asked, unknown } = askedPartitions(request, topicPartitions);
  const unknownError = (partition: number): CommitResult => ({
    topic,
    partition,
    error: errorBody(
      new SluiceError(
        'UNKNOWN_TOPIC_OR_PARTITION',
        topicPartitions === undefined
          ? `topic ${topic} does not exist`
          : `topic ${topic} has no partition ${partition}`,
      ),
    ),
  });
  const subscriber = liveMembers(loaded.view, now, sessionTimeoutMs).find((m) =>
    m.subscribedTopics.includes(topic),
  );
  if (subscriber) {
    const refused = errorBody(
      new SluiceError(
        'GROUP_SUBSCRIBED_TO_TOPIC',
        `member ${subscriber.memberId} of group ${groupId} subscribes to ${topic}; its offsets cannot be deleted while it does`,
      ),
    );
    return asked.map((partition) =>
      unknown.has(partition) ? unknownError(partition) : { topic, partition, error: refused },
    );
  }
  const wanted = new Set(asked.filter((p) => !unknown.has(p)));
  const doomed = (await items.offsets(groupId, topic)).filter((o) => wanted.has(o.partition));
  if (doomed.length > OFFSETS_PER_COMMIT) {
    throw invalidRequest(
      `group ${groupId} has ${doomed.length} committed offsets for ${topic}; one deletion is atomic and takes at most ${OFFSETS_PER_COMMIT}: name the partitions and delete in several requests`,
    );
  }
  if (doomed.length > 0) {
    await store.transact([
      {
        check: groupKeys.meta(groupId),
        condition: {
          and: [
            { path: 'version', op: '=', value: loaded.view.meta.version },
            { path: 'dead', op: '=', value: false },
          ],
        },
      },
      ...doomed.map((o) => ({ delete: groupKeys.offset(groupId, o.topic, o.partition) })),
    ]);
  }
  return asked.map((partition) => (unknown.has(partition) ? unknownError(partition) : { topic, partition }));
};

const errorBody = (e: SluiceError): { code: string; message: string; retriable: boolean } => ({
  code: e.code,
  message: e.message,
  retriable: e.retriable,
});
