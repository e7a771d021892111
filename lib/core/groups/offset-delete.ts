/**
 * OffsetDelete (kafka-consumer-groups --delete-offsets): removes a group's committed offsets for one
 * topic, refused while any live member subscribes to it. The deletes go in one transaction with a
 * check on META's version, so a member that joins (or changes its subscription) between the read and
 * the write makes the write fail and the attempt start over; every membership or subscription change
 * writes META with a new version (see group-items.ts).
 */
import { SluiceError, invalidRequest } from '../../errors.js';
import type { MetadataStore } from '../../ports/metadata-store.js';
import { OFFSETS_PER_COMMIT } from './commit-limit.js';
import { liveMembers } from './group.js';
import type { GroupItems } from './group-items.js';
import { groupKeys } from './group-items.js';
import { validateTopicName } from './requests.js';

export interface DeleteOffsetsRequest {
  topic: string;
  /** The partitions to delete; null deletes every committed offset of the topic. */
  partitions: readonly number[] | null;
}

export interface DeletedOffset {
  topic: string;
  partition: number;
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

/**
 * One attempt: the partitions whose committed offsets it deleted, by partition. Partitions without a
 * committed offset are not listed. A lost race throws a conflict for the caller's retry.
 */
export const deleteOffsetsOnce = async (
  { store, items, sessionTimeoutMs }: OffsetDeleteDeps,
  groupId: string,
  { topic, partitions }: DeleteOffsetsRequest,
  now: number,
): Promise<DeletedOffset[]> => {
  const loaded = await items.load(groupId, now);
  if (!loaded.stored || loaded.view.meta.dead) {
    throw new SluiceError('GROUP_ID_NOT_FOUND', `group ${groupId} does not exist`);
  }
  const subscriber = liveMembers(loaded.view, now, sessionTimeoutMs).find((m) =>
    m.subscribedTopics.includes(topic),
  );
  if (subscriber) {
    throw new SluiceError(
      'GROUP_SUBSCRIBED_TO_TOPIC',
      `member ${subscriber.memberId} of group ${groupId} subscribes to ${topic}; its offsets cannot be deleted while it does`,
    );
  }
  const wanted = partitions === null ? null : new Set(partitions);
  const doomed = (await items.offsets(groupId, topic)).filter(
    (o) => wanted === null || wanted.has(o.partition),
  );
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
  return doomed.map((o) => ({ topic: o.topic, partition: o.partition }));
};
