/**
 * Replication through `npm start` with real store processes (test/support/replication-live.ts, short
 * phases; `npm run replication:live` runs the long ones): RF=3, min.insync.replicas=2, acks=all under a
 * steady produce stream while follower stores are frozen with SIGSTOP, restored, and the leader's store
 * is killed with SIGKILL.
 */
import { expect, it } from 'vitest';
import { runLiveReplication } from '../support/replication-live.js';

const LAG_MS = 1_500;

it(
  'loses nothing acknowledged through follower, double-follower and leader store failures',
  { timeout: 240_000 },
  async () => {
    const r = await runLiveReplication({ phaseMs: 2_500, lagMs: LAG_MS });
    console.log(`replication live: ${JSON.stringify(r)}`);
    expect([r.lost, r.duplicates]).toEqual([0, 0]);
    expect(r.acked).toBeGreaterThan(20);
    // One follower frozen: the ISR shrinks within the lag limit (plus the 50 ms poll and a loaded
    // machine's slack), and produce goes on.
    expect(r.shrinkMs).not.toBeNull();
    expect(r.shrinkMs!).toBeLessThanOrEqual(LAG_MS + 1_000);
    expect(r.phases['one follower down']!.acked).toBeGreaterThan(0);
    // Two frozen: acks=all is refused, nothing acknowledged, reads go on from the leader.
    expect(r.phases['two followers down']!.acked).toBe(0);
    expect(r.phases['two followers down']!.errors['NOT_ENOUGH_REPLICAS']).toBeGreaterThan(0);
    expect(r.readsWhileRefused).toBeGreaterThan(0);
    // Restored: both catch up and rejoin, produce resumes.
    expect(r.rejoinMs).not.toBeNull();
    expect(r.phases['restored']!.acked).toBeGreaterThan(0);
    // The leader's store killed: a new leader one epoch up, the old-epoch writer fenced, produce goes on.
    expect(r.electMs).not.toBeNull();
    expect(r.leaderEpochs).toEqual([0, 1]);
    expect(r.oldEpochWriter).toBe('FENCED_LEADER_EPOCH');
    expect(r.phases['leader down']!.acked).toBeGreaterThan(0);
    expect(r.stackFileRemoved).toBe(true);
    // Killing the leader's store left the segment store up: it is an emulator of its own.
    expect(r.segmentsApart).toBe(true);
  },
);
