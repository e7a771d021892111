/**
 * Consumer groups over Kafka's wire protocol through the gateway of the local stack: classic members
 * join the server-assigned group (MEMBER_ID_REQUIRED, no leader, the server's assignment in
 * SyncGroup, REBALANCE_IN_PROGRESS until a rejoin, ILLEGAL_GENERATION for a stale generation), their
 * commits are the offsets the HTTP API shows, and the admin APIs see the same groups; hostile requests
 * get Kafka's error codes.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { LocalStack } from '../../local/stack.js';
import { startLocalStack } from '../../local/stack.js';
import { decodeAssignment, encodeSubscription } from '../../protocol/kafka/consumer-protocol.js';
import { ERROR } from '../../protocol/kafka/error-codes.js';
import { OffsetCommit, OffsetDelete, OffsetFetch } from '../../protocol/kafka/messages/group-offsets.js';
import {
  ConsumerGroupDescribe,
  ConsumerGroupHeartbeat,
  DeleteGroups,
  DescribeGroups,
  ListGroups,
} from '../../protocol/kafka/messages/groups-admin.js';
import { Heartbeat, JoinGroup, LeaveGroup, SyncGroup } from '../../protocol/kafka/messages/groups-classic.js';
import type { KafkaWire } from '../support/kafka-wire-client.js';
import { kafkaWire } from '../support/kafka-wire-client.js';
import { call } from './stack.js';

let stack: LocalStack;
let wire: KafkaWire;

beforeAll(async () => {
  const suffix = randomUUID().slice(0, 8);
  stack = await startLocalStack({
    port: 0,
    kafkaPort: 0,
    maintenanceIntervalMs: 0,
    env: {
      ...process.env,
      AWS_ENDPOINT_URL_S3: inject('s3Endpoint'),
      AWS_ENDPOINT_URL_DYNAMODB: inject('dynamodbEndpoint'),
      SLUICE_TABLE_NAME: `gwg-${suffix}`,
      SLUICE_BUCKETS: `gwg-${suffix}`,
      SLUICE_SEGMENT_BUCKET: `gwg-${suffix}-segments`,
    },
  });
  expect((await call(stack.url, 'POST', '/v1/topics', { name: 'orders', partitions: 4 })).status).toBe(201);
  wire = await kafkaWire(stack.kafka!.bootstrap);
}, 120_000);

afterAll(async () => {
  wire?.close();
  await stack?.stop();
});

const protocols = (owned: { topic: string; partitions: number[] }[] = []) => {
  void owned;
  return [{ name: 'range', metadata: encodeSubscription(['orders']) }];
};

const join = (group: string, memberId: string, version = 5) =>
  wire.send(JoinGroup, version, {
    groupId: group,
    sessionTimeoutMs: 30_000,
    rebalanceTimeoutMs: 60_000,
    memberId,
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: protocols(),
  });

const sync = async (group: string, memberId: string, generationId: number) => {
  const answer = await wire.send(SyncGroup, 3, {
    groupId: group,
    generationId,
    memberId,
    groupInstanceId: null,
    assignments: [],
  });
  return {
    errorCode: answer.errorCode as number,
    partitions:
      answer.errorCode === 0 ? decodeAssignment(answer.assignment).flatMap((tp) => tp.partitions) : [],
  };
};

const beat = async (group: string, memberId: string, generationId: number): Promise<number> =>
  (await wire.send(Heartbeat, 3, { groupId: group, generationId, memberId, groupInstanceId: null }))
    .errorCode;

/** Joins as a new member: MEMBER_ID_REQUIRED first, then the join under the issued id. */
const newMember = async (group: string) => {
  const first = await join(group, '');
  expect(first.errorCode).toBe(ERROR.MEMBER_ID_REQUIRED);
  expect(first.memberId).toMatch(/^wire-test-[0-9a-f-]{36}$/);
  const joined = await join(group, first.memberId);
  expect(joined).toMatchObject({ errorCode: 0, leader: '', protocolName: 'range', members: [] });
  return { memberId: first.memberId as string, generationId: joined.generationId as number };
};

describe('classic members through the Kafka gateway', () => {
  it('rebalance between two members: each partition handed over only after its owner rejoined', async () => {
    const a = await newMember('g1');
    expect(a.generationId).toBe(1);
    expect(await sync('g1', a.memberId, 1)).toEqual({ errorCode: 0, partitions: [0, 1, 2, 3] });
    expect(await beat('g1', a.memberId, 1)).toBe(ERROR.NONE);

    const b = await newMember('g1');
    expect(b.generationId).toBe(2);
    expect(await sync('g1', b.memberId, 2)).toEqual({ errorCode: 0, partitions: [] });
    expect(await beat('g1', a.memberId, 1)).toBe(ERROR.REBALANCE_IN_PROGRESS);
    // b waits for what a holds: no point rejoining yet.
    expect(await beat('g1', b.memberId, 2)).toBe(ERROR.NONE);

    const aAgain = await join('g1', a.memberId);
    expect(aAgain).toMatchObject({ errorCode: 0, generationId: 2 });
    const aParts = (await sync('g1', a.memberId, 2)).partitions;
    expect(aParts).toHaveLength(2);
    expect(await beat('g1', a.memberId, 1)).toBe(ERROR.ILLEGAL_GENERATION);
    expect(await beat('g1', a.memberId, 2)).toBe(ERROR.NONE);

    // a let go of b's share: now b is told to rejoin.
    expect(await beat('g1', b.memberId, 2)).toBe(ERROR.REBALANCE_IN_PROGRESS);
    await join('g1', b.memberId);
    const bParts = (await sync('g1', b.memberId, 2)).partitions;
    expect([...aParts, ...bParts].sort()).toEqual([0, 1, 2, 3]);
    expect(await beat('g1', b.memberId, 2)).toBe(ERROR.NONE);

    // The HTTP API sees the same group and the same assignment.
    const described = (await call(stack.url, 'GET', '/v1/groups/g1')).json;
    expect(described.state).toBe('STABLE');
    expect(
      Object.fromEntries(
        described.members.map(
          (m: { memberId: string; assignment: { topicPartitions: { partitions: number[] }[] } }) => [
            m.memberId,
            m.assignment.topicPartitions.flatMap((tp) => tp.partitions),
          ],
        ),
      ),
    ).toEqual({ [a.memberId]: aParts, [b.memberId]: bParts });

    // Commits are fenced by the generation and are the group's offsets over HTTP.
    const commit = (generationId: number, offset: number) =>
      wire.send(OffsetCommit, 7, {
        groupId: 'g1',
        generationIdOrMemberEpoch: generationId,
        memberId: a.memberId,
        groupInstanceId: null,
        topics: [
          {
            name: 'orders',
            partitions: [{ partitionIndex: aParts[0], committedOffset: offset, committedMetadata: 'm' }],
          },
        ],
      });
    expect((await commit(1, 5)).topics[0].partitions[0].errorCode).toBe(ERROR.ILLEGAL_GENERATION);
    expect((await commit(2, 42)).topics[0].partitions[0]).toEqual({
      partitionIndex: aParts[0],
      errorCode: 0,
    });
    expect((await call(stack.url, 'GET', '/v1/groups/g1/offsets')).json.offsets).toEqual([
      { topic: 'orders', partition: aParts[0], offset: 42, metadata: 'm' },
    ]);
    const fetched = await wire.send(OffsetFetch, 5, {
      groupId: 'g1',
      topics: [{ name: 'orders', partitionIndexes: [aParts[0], bParts[0]] }],
    });
    expect(fetched.errorCode).toBe(0);
    expect(fetched.topics[0].partitions.map((p: { committedOffset: number }) => p.committedOffset)).toEqual([
      42, -1,
    ]);
    const fetched8 = await wire.send(OffsetFetch, 8, { groups: [{ groupId: 'g1', topics: null }] });
    expect(fetched8.groups[0].topics).toEqual([
      {
        name: 'orders',
        partitions: [
          {
            partitionIndex: aParts[0],
            committedOffset: 42,
            committedLeaderEpoch: -1,
            metadata: 'm',
            errorCode: 0,
          },
        ],
      },
    ]);

    // Admin APIs: the group, its state and members, in Kafka's shapes.
    const listed = await wire.send(ListGroups, 4, { statesFilter: ['Stable'] });
    expect(listed.groups).toContainEqual({
      groupId: 'g1',
      protocolType: 'consumer',
      groupState: 'Stable',
      groupType: '', // v5+
    });
    expect(
      (await wire.send(ListGroups, 4, { statesFilter: ['Empty'] })).groups.map(
        (g: { groupId: string }) => g.groupId,
      ),
    ).not.toContain('g1');
    const dg = await wire.send(DescribeGroups, 5, {
      groups: ['g1', 'nope'],
      includeAuthorizedOperations: false,
    });
    expect(dg.groups[0]).toMatchObject({
      errorCode: 0,
      groupId: 'g1',
      groupState: 'Stable',
      protocolType: 'consumer',
      protocolData: 'uniform',
    });
    expect(dg.groups[0].members).toHaveLength(2);
    expect(dg.groups[1]).toMatchObject({ errorCode: 0, groupId: 'nope', groupState: 'Dead' });
    const cgd = await wire.send(ConsumerGroupDescribe, 0, {
      groupIds: ['g1'],
      includeAuthorizedOperations: false,
    });
    expect(cgd.groups[0]).toMatchObject({
      errorCode: 0,
      groupState: 'Stable',
      groupEpoch: 2,
      assignorName: 'uniform',
    });

    // A non-empty group cannot be deleted; after both leave it can.
    expect((await wire.send(DeleteGroups, 2, { groupsNames: ['g1'] })).results).toEqual([
      { groupId: 'g1', errorCode: ERROR.NON_EMPTY_GROUP },
    ]);
    const left = await wire.send(LeaveGroup, 4, {
      groupId: 'g1',
      members: [
        { memberId: a.memberId, groupInstanceId: null, reason: null },
        { memberId: b.memberId, groupInstanceId: null, reason: null },
        { memberId: 'ghost', groupInstanceId: null, reason: null },
      ],
    });
    expect(left.members.map((m: { errorCode: number }) => m.errorCode)).toEqual([
      0,
      0,
      ERROR.UNKNOWN_MEMBER_ID,
    ]);
    expect(
      (
        await wire.send(OffsetDelete, 0, {
          groupId: 'g1',
          topics: [{ name: 'orders', partitions: [{ partitionIndex: aParts[0] }] }],
        })
      ).topics[0].partitions,
    ).toEqual([{ partitionIndex: aParts[0], errorCode: 0 }]);
    expect((await call(stack.url, 'GET', '/v1/groups/g1/offsets')).json.offsets).toEqual([]);
    expect((await wire.send(DeleteGroups, 2, { groupsNames: ['g1', 'never'] })).results).toEqual([
      { groupId: 'g1', errorCode: 0 },
      { groupId: 'never', errorCode: ERROR.GROUP_ID_NOT_FOUND },
    ]);
    expect((await call(stack.url, 'GET', '/v1/groups/g1')).status).toBe(404);
  }, 60_000);

  it('a KIP-848 member joins by ConsumerGroupHeartbeat with topic ids', async () => {
    const joined = await wire.send(ConsumerGroupHeartbeat, 0, {
      groupId: 'g848',
      memberId: '',
      memberEpoch: 0,
      rebalanceTimeoutMs: 60_000,
      subscribedTopicNames: ['orders'],
      topicPartitions: [],
    });
    expect(joined).toMatchObject({ errorCode: 0, memberEpoch: 1 });
    const topicId = (await call(stack.url, 'GET', '/v1/topics/orders')).json.topicId.replace(/-/g, '');
    expect(joined.assignment).toEqual({ topicPartitions: [{ topicId, partitions: [0, 1, 2, 3] }] });
    const again = await wire.send(ConsumerGroupHeartbeat, 0, {
      groupId: 'g848',
      memberId: joined.memberId,
      memberEpoch: 1,
      topicPartitions: [{ topicId, partitions: [0, 1, 2, 3] }],
    });
    expect(again).toMatchObject({ errorCode: 0, memberEpoch: 1, assignment: null });
    const fenced = await wire.send(ConsumerGroupHeartbeat, 0, {
      groupId: 'g848',
      memberId: joined.memberId,
      memberEpoch: 7,
    });
    expect(fenced.errorCode).toBe(ERROR.FENCED_MEMBER_EPOCH);
  }, 30_000);

  it('answers hostile group requests with Kafka error codes and changes nothing', async () => {
    const base = { sessionTimeoutMs: 30_000, rebalanceTimeoutMs: 60_000, groupInstanceId: null };
    expect(
      (
        await wire.send(JoinGroup, 5, {
          ...base,
          groupId: 'h',
          memberId: 'x',
          protocolType: 'connect',
          protocols: protocols(),
        })
      ).errorCode,
    ).toBe(ERROR.INCONSISTENT_GROUP_PROTOCOL);
    expect(
      (
        await wire.send(JoinGroup, 5, {
          ...base,
          groupId: 'h',
          memberId: 'x',
          protocolType: 'consumer',
          protocols: [{ name: 'range', metadata: new Uint8Array([0, 0, 0, 0, 0, 9, 1]) }],
        })
      ).errorCode,
    ).toBe(ERROR.INCONSISTENT_GROUP_PROTOCOL);
    expect(
      (
        await wire.send(JoinGroup, 5, {
          ...base,
          groupId: 'h',
          memberId: 'x',
          protocolType: 'consumer',
          protocols: [],
        })
      ).errorCode,
    ).toBe(ERROR.INCONSISTENT_GROUP_PROTOCOL);
    expect((await join('', 'x')).errorCode).toBe(ERROR.INVALID_GROUP_ID);
    expect(await beat('h', 'ghost', 1)).toBe(ERROR.UNKNOWN_MEMBER_ID);
    expect(await beat('h', '', 1)).toBe(ERROR.UNKNOWN_MEMBER_ID);
    expect((await sync('h', 'ghost', -3)).errorCode).toBe(ERROR.ILLEGAL_GENERATION);
    expect((await call(stack.url, 'GET', '/v1/groups/h')).status).toBe(404);
    // A simple consumer's commit (no member) to an empty group is accepted, negative offsets are not.
    const simple = await wire.send(OffsetCommit, 2, {
      groupId: 'simple',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      topics: [
        {
          name: 'orders',
          partitions: [
            { partitionIndex: 0, committedOffset: 3, committedMetadata: null },
            { partitionIndex: 1, committedOffset: -5, committedMetadata: null },
            { partitionIndex: 9, committedOffset: 1, committedMetadata: null },
          ],
        },
      ],
    });
    expect(simple.topics[0].partitions.map((p: { errorCode: number }) => p.errorCode)).toEqual([
      0,
      ERROR.INVALID_COMMIT_OFFSET_SIZE,
      ERROR.UNKNOWN_TOPIC_OR_PARTITION,
    ]);
    expect((await call(stack.url, 'GET', '/v1/groups/simple/offsets')).json.offsets).toEqual([
      { topic: 'orders', partition: 0, offset: 3, metadata: '' },
    ]);
  }, 30_000);
});
