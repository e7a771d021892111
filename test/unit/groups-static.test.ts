/**
 * Static membership (KIP-345 with KIP-848's heartbeat) through the coordinator, with exact errors: an
 * instance id names one member, a temporary leave (epoch -2) keeps its place, a rejoin under the same
 * id starts over, and a member leaves for good with epoch -1.
 */
import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../lib/adapters/memory/metadata-store.js';
import { GroupCoordinator } from '../../lib/core/groups/coordinator.js';
import { InMemoryTopics, ManualClock, seededRandom } from '../../lib/core/groups/simulation.js';
import type { HeartbeatRequest } from '../../lib/core/groups/types.js';
import { SluiceError } from '../../lib/errors.js';

const setup = () => {
  const topics = new InMemoryTopics({ t: 4 });
  const coordinator = new GroupCoordinator({
    store: new MemoryMetadataStore(),
    clock: new ManualClock(),
    topics,
    offsets: topics,
    random: seededRandom(5),
  });
  const beat = (request: Partial<HeartbeatRequest>) =>
    coordinator.heartbeat('g', {
      memberId: null,
      memberEpoch: 0,
      instanceId: null,
      subscribedTopics: null,
      ownedPartitions: null,
      rebalanceTimeoutMs: null,
      serverAssignor: null,
      ...request,
    });
  const members = async () =>
    (await coordinator.describeGroup('g')).members.map((m) => ({ id: m.memberId, epoch: m.memberEpoch }));
  return { coordinator, beat, members };
};

const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SluiceError);
  const { code, message } = error as SluiceError;
  return { code, message };
};

describe('static membership', () => {
  it('refuses a member id used with another instance id, on join and on heartbeat', async () => {
    const s = setup();
    const a = await s.beat({ memberId: 'ma', instanceId: 'ia', subscribedTopics: ['t'] });
    expect(a).toMatchObject({ memberId: 'ma', memberEpoch: 1 });
    expect(await refusal(s.beat({ memberId: 'ma', instanceId: 'ib', subscribedTopics: ['t'] }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'member ma is not the member of instance ib',
    });
    expect(await refusal(s.beat({ memberId: 'ma', memberEpoch: 1, instanceId: 'ib' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'member ma is not the member of instance ib',
    });
    expect(await s.members()).toEqual([{ id: 'ma', epoch: 1 }]);
  });

  it('refuses a second member for a held instance id until the holder leaves with epoch -2', async () => {
    const s = setup();
    await s.beat({ memberId: 'ma', instanceId: 'ia', subscribedTopics: ['t'] });
    expect(await refusal(s.beat({ memberId: 'mb', instanceId: 'ia', subscribedTopics: ['t'] }))).toEqual({
      code: 'UNRELEASED_INSTANCE_ID',
      message: 'instance ia is still held by member ma; it must leave (epoch -2) or time out first',
    });
    expect(await s.beat({ memberId: 'ma', memberEpoch: -2, instanceId: 'ia' })).toEqual({
      memberId: 'ma',
      memberEpoch: -2,
      heartbeatIntervalMs: expect.any(Number),
      assignment: null,
    });
    const b = await s.beat({ memberId: 'mb', instanceId: 'ia', subscribedTopics: ['t'] });
    // The new incarnation takes the old one's place and epoch: no rebalance.
    expect(b).toMatchObject({ memberId: 'mb', memberEpoch: 1 });
    expect(await s.members()).toEqual([{ id: 'mb', epoch: 1 }]);
  });

  it('refuses -2 from a dynamic member, and a leave without its member id', async () => {
    const s = setup();
    await s.beat({ memberId: 'ma', instanceId: 'ia', subscribedTopics: ['t'] });
    await s.beat({ memberId: 'md', subscribedTopics: ['t'] });
    expect(await refusal(s.beat({ memberId: 'md', memberEpoch: -2, instanceId: null }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'memberEpoch -2 (temporary leave) requires the static member instanceId',
    });
    expect(await refusal(s.beat({ memberId: 'md', memberEpoch: -2, instanceId: 'ix' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'only a static member (with an instanceId) leaves with epoch -2',
    });
    // A leave needs its member id (validateHeartbeat), so the lookup by instance id is never reached.
    expect(await refusal(s.beat({ memberId: null, memberEpoch: -1, instanceId: 'ia' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'memberId is required with memberEpoch -1',
    });
    expect(await s.beat({ memberId: 'ma', memberEpoch: -1, instanceId: 'ia' })).toMatchObject({
      memberId: 'ma',
      memberEpoch: -1,
    });
    expect((await s.members()).map((m) => m.id)).toEqual(['md']);
  });

  it('starts a member that rejoins under its id over with nothing assigned', async () => {
    const s = setup();
    const first = await s.beat({ memberId: 'ma', subscribedTopics: ['t'] });
    expect(first.assignment).toEqual({ topicPartitions: [{ topic: 't', partitions: [0, 1, 2, 3] }] });
    const again = await s.beat({ memberId: 'ma', memberEpoch: 0, subscribedTopics: ['t'] });
    expect(again).toMatchObject({ memberId: 'ma', memberEpoch: 1 });
    expect(again.assignment).toEqual({ topicPartitions: [{ topic: 't', partitions: [0, 1, 2, 3] }] });
    expect(await refusal(s.beat({ memberId: 'zz', memberEpoch: 3 }))).toEqual({
      code: 'UNKNOWN_MEMBER_ID',
      message: 'member zz is not in the group; rejoin with epoch 0',
    });
  });
});
