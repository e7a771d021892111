/**
 * Mutation check for consumer groups: hand a partition to its new owner before the old owner released
 * it (the coordinator's "held by another member" test answers no), and show that the checker reports
 * two owners — while the real coordinator, in the same scenario, keeps one.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GroupDraft } from '../../lib/core/groups/group.js';
import { check, describeReport } from '../support/checker.js';
import { tpId } from '../support/group-workload.js';
import type { HeartbeatOp } from '../support/history.js';
import { errorName, outcomeOfError } from '../support/history.js';
import type { SimWorld } from '../support/sim.js';
import { createSimWorld, runLogSimulation } from '../support/sim.js';

const TOPIC = 't';

afterEach(() => {
  vi.restoreAllMocks();
});

/** Skips revocation: a member gets target partitions even while another member still holds them. */
const handOverBeforeRelease = () =>
  vi.spyOn(GroupDraft.prototype, 'heldByOther').mockReturnValue(() => false);

/** One recorded heartbeat; returns the epoch and the assignment (null = unchanged). */
const heartbeat = async (world: SimWorld, member: string, memberEpoch: number, owned: number[]) => {
  const done = world.recorder.invoke<HeartbeatOp>('heartbeat', member, {
    group: 'g',
    member,
    memberEpochSent: memberEpoch,
    owned: owned.map((p) => tpId(TOPIC, p)),
  });
  try {
    const r = await world.client.heartbeat('g', {
      memberId: member,
      memberEpoch,
      subscribedTopics: memberEpoch === 0 ? [TOPIC] : null,
      ownedPartitions: [{ topic: TOPIC, partitions: owned }],
    });
    const assigned =
      r.assignment?.topicPartitions.find((t) => t.topic === TOPIC)?.partitions ?? (r.assignment ? [] : null);
    done('ok', { memberEpoch: r.memberEpoch, assignment: assigned?.map((p) => tpId(TOPIC, p)) ?? null });
    return { epoch: r.memberEpoch, assigned };
  } catch (error) {
    done(outcomeOfError(error), {}, errorName(error));
    throw error;
  }
};

/** A holds all four partitions; B joins; A revokes half and releases it; B takes it. */
const handover = async (planted: boolean) => {
  const world = createSimWorld({ seed: 21, faults: { rate: 0 } });
  if (planted) handOverBeforeRelease();
  const seen = await world.run(
    (async () => {
      await world.client.createTopic(TOPIC, 4);
      const a1 = await heartbeat(world, 'a', 0, []);
      const b1 = await heartbeat(world, 'b', 0, []);
      const a2 = await heartbeat(world, 'a', a1.epoch, a1.assigned!);
      const kept = a2.assigned ?? a1.assigned!;
      const a3 = await heartbeat(world, 'a', a2.epoch, kept);
      const b2 = await heartbeat(world, 'b', b1.epoch, b1.assigned ?? []);
      return { a1: a1.assigned, b1: b1.assigned, a2: a2.assigned, a3: a3.assigned, b2: b2.assigned };
    })(),
  );
  return { seen, report: check(world.recorder.history()) };
};

describe('mutation: a partition is handed over before its owner released it', () => {
  it('is clean with revocation first: the new member gets the partitions only after they were released', async () => {
    const { seen, report } = await handover(false);
    expect(seen.a1).toEqual([0, 1, 2, 3]);
    expect(seen.b1).toEqual([]);
    expect(seen.a2).toHaveLength(2);
    expect(seen.b2).toHaveLength(2);
    expect(report.valid, describeReport(report)).toBe(true);
  });

  it('is caught without it: two owners at once', async () => {
    const { seen, report } = await handover(true);
    expect(seen.b1).toHaveLength(2);
    expect(report.counts.twoOwners).toBe(2);
    expect(report.examples.twoOwners?.[0]).toMatchObject({ first: { member: 'a' }, second: { member: 'b' } });
  });

  it('is caught under seeded faults, crashes and rebalances too', async () => {
    handOverBeforeRelease();
    let twoOwners = 0;
    for (const seed of [1, 2, 3]) {
      const r = await runLogSimulation({
        seed,
        partitions: 4,
        producers: { idempotent: 1, keyed: 1 },
        writesPerProducer: 8,
        consumers: 0,
        group: { members: 3, crashChance: 0.01 },
      });
      twoOwners += r.report.counts.twoOwners;
    }
    expect(twoOwners).toBeGreaterThan(0);
  });
});
