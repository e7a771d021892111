/**
 * Connect's group admin (connect/group-admin.ts) over the group coordinator of this process: the
 * herder's KIP-875 offset calls become the coordinator's OffsetFetch, an OffsetCommit without a
 * member (only an empty group accepts it) and DeleteGroups. Wired by the composition roots that host
 * a herder (functions/connect.ts, functions/connect-worker.ts, functions/app.ts).
 */
import type { ConnectGroupAdmin } from '../connect/group-admin.js';
import type { GroupCoordinator } from '../lib/core/groups/index.js';

export const coordinatorGroupAdmin = (groups: GroupCoordinator): ConnectGroupAdmin => ({
  listConsumerGroupOffsets: async (groupId) =>
    (await groups.fetchOffsets(groupId)).offsets.map(({ topic, partition, offset }) => ({
      topic,
      partition,
      offset,
    })),
  alterConsumerGroupOffsets: async (groupId, offsets) => {
    const { results } = await groups.commitOffsets(groupId, {
      memberId: null,
      memberEpoch: null,
      offsets: offsets.map((o) => ({ ...o, metadata: '' })),
    });
    return results.map((r) =>
      'error' in r
        ? { topic: r.topic, partition: r.partition, error: { code: r.error.code, message: r.error.message } }
        : { topic: r.topic, partition: r.partition },
    );
  },
  deleteConsumerGroups: (groupId) => groups.deleteGroup(groupId),
});
