/**
 * `npx tsx bench/groups.ts`: how fast a consumer group heals and converges, in process with the memory
 * store and a simulated clock (so the figures are protocol time, not machine speed).
 *
 * (a) A member is killed without leaving: how long until every partition it had is owned by another
 *     member, against the bound session timeout + one heartbeat interval. Members heartbeat every
 *     interval at staggered phases; only heartbeats find the dead member (no sweep).
 * (b) 10 members over 60 partitions: heartbeat rounds after a join until the group is stable and every
 *     member owns exactly its assignment (each member heartbeats once per round; bound: 3).
 * (c) What a heartbeat costs in DynamoDB requests and capacity units, steady and during a rebalance.
 *
 * Flags: --trials 20 (kills in (a)), --seed 1. The last stdout line is one JSON object.
 */
import { MemoryMetadataStore } from '../lib/adapters/memory/metadata-store.js';
import { GroupCoordinator } from '../lib/core/groups/coordinator.js';
import type { PartitionMap } from '../lib/core/groups/partition-map.js';
import {
  EMPTY_PARTITIONS,
  count,
  fromTopicPartitions,
  intersect,
  pairs,
  samePartitions,
} from '../lib/core/groups/partition-map.js';
import { InMemoryTopics, ManualClock, seededRandom } from '../test/support/group-simulation.js';

const SESSION_MS = 45_000;
const INTERVAL_MS = 5_000;
const GROUP = 'bench';

const flag = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  const value = i < 0 ? undefined : Number(process.argv[i + 1]);
  return value === undefined || Number.isNaN(value) ? fallback : value;
};

interface Member {
  memberId: string | null;
  epoch: number;
  owned: PartitionMap;
  nextBeat: number;
  alive: boolean;
}

class Group {
  readonly store = new MemoryMetadataStore();
  readonly clock = new ManualClock();
  readonly coordinator: GroupCoordinator;
  readonly members: Member[] = [];

  constructor(partitions: number, seed: number) {
    const topics = new InMemoryTopics({ events: partitions });
    this.coordinator = new GroupCoordinator({
      store: this.store,
      clock: this.clock,
      topics,
      offsets: topics,
      sessionTimeoutMs: SESSION_MS,
      heartbeatIntervalMs: INTERVAL_MS,
      random: seededRandom(seed),
    });
  }

  /** One heartbeat of a member that applies every answer at once (fast revocation). */
  async heartbeat(m: Member): Promise<void> {
    const res = await this.coordinator.heartbeat(GROUP, {
      memberId: m.memberId,
      memberEpoch: m.epoch,
      instanceId: null,
      subscribedTopics: m.epoch === 0 ? ['events'] : null,
      ownedPartitions: m.owned,
      rebalanceTimeoutMs: 60_000,
      serverAssignor: null,
    });
    m.memberId = res.memberId;
    m.epoch = res.memberEpoch;
    if (res.assignment) m.owned = fromTopicPartitions(res.assignment.topicPartitions);
    m.nextBeat = this.clock.now() + INTERVAL_MS;
  }

  async join(): Promise<Member> {
    const m: Member = { memberId: null, epoch: 0, owned: EMPTY_PARTITIONS, nextBeat: 0, alive: true };
    this.members.push(m);
    await this.heartbeat(m);
    return m;
  }

  async stable(): Promise<boolean> {
    const group = await this.coordinator.describeGroup(GROUP);
    if (group.state !== 'STABLE') return false;
    return this.members
      .filter((m) => m.alive)
      .every((m) => {
        const described = group.members.find((d) => d.memberId === m.memberId);
        return (
          described !== undefined &&
          samePartitions(m.owned, fromTopicPartitions(described.assignment.topicPartitions))
        );
      });
  }

  /** Everyone alive heartbeats once, in the given order. */
  async round(order: Member[]): Promise<void> {
    for (const m of order) if (m.alive) await this.heartbeat(m);
  }
}

/** (a) Kill a member at a random moment of a stable group; time until its partitions have new owners. */
const killTrial = async (seed: number): Promise<{ fromKillMs: number; fromLastHeartbeatMs: number }> => {
  const random = seededRandom(seed);
  const group = new Group(60, seed);
  for (let i = 0; i < 10; i++) await group.join();
  for (let r = 0; r < 4 && !(await group.stable()); r++) await group.round(group.members);
  // Staggered phases, as independent consumers have.
  group.members.forEach((m, i) => (m.nextBeat = group.clock.now() + Math.floor((i * INTERVAL_MS) / 10)));
  const tick = 100;
  const runUntil = async (done: () => boolean, limitMs: number): Promise<void> => {
    const end = group.clock.now() + limitMs;
    while (!done() && group.clock.now() < end) {
      group.clock.advance(tick);
      for (const m of group.members) if (m.alive && m.nextBeat <= group.clock.now()) await group.heartbeat(m);
    }
  };
  const warmup = INTERVAL_MS + Math.floor(random() * 2 * INTERVAL_MS);
  await runUntil(() => false, warmup);
  const victim = group.members[Math.floor(random() * group.members.length)] as Member;
  const orphaned = victim.owned;
  const lastHeartbeat = victim.nextBeat - INTERVAL_MS;
  victim.alive = false;
  const killedAt = group.clock.now();
  const adopted = (): boolean =>
    pairs(orphaned).every(([topic, p]) =>
      group.members.some((m) => m.alive && count(intersect(m.owned, { [topic]: [p] })) === 1),
    );
  await runUntil(adopted, 3 * SESSION_MS);
  if (!adopted()) throw new Error(`seed ${seed}: the dead member's partitions were never adopted`);
  return { fromKillMs: group.clock.now() - killedAt, fromLastHeartbeatMs: group.clock.now() - lastHeartbeat };
};

type Order = 'joiner first' | 'joiner last' | 'shuffled';

const shuffle = <T>(items: readonly T[], random: () => number): T[] => {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
};

/** (b) Rounds after the 10th member joins 9 stable members over 60 partitions. */
const joinRounds = async (order: Order, seed: number): Promise<number> => {
  const random = seededRandom(seed);
  const group = new Group(60, seed);
  for (let i = 0; i < 9; i++) await group.join();
  for (let r = 0; r < 4 && !(await group.stable()); r++) await group.round(group.members);
  if (!(await group.stable())) throw new Error('9 members did not settle');
  const joiner = await group.join();
  const others = group.members.filter((m) => m !== joiner);
  for (let round = 1; round <= 10; round++) {
    const sequence =
      order === 'joiner first'
        ? [joiner, ...others]
        : order === 'joiner last'
          ? [...others, joiner]
          : shuffle(group.members, random);
    await group.round(sequence);
    if (await group.stable()) return round;
  }
  throw new Error(`no convergence in 10 rounds (${order})`);
};

/** (c) Requests and capacity units per heartbeat of a 10-member group, steady and during a rebalance. */
const heartbeatCost = async () => {
  const group = new Group(60, 7);
  for (let i = 0; i < 10; i++) await group.join();
  for (let r = 0; r < 4 && !(await group.stable()); r++) await group.round(group.members);
  const measure = async (rounds: number) => {
    group.store.meter.reset();
    for (let r = 0; r < rounds; r++) await group.round(group.members);
    const m = group.store.meter.read();
    const n = rounds * group.members.filter((x) => x.alive).length;
    return {
      reads: m.metadataReads / n,
      writes: m.metadataWrites / n,
      readUnits: m.readUnits / n,
      writeUnits: m.writeUnits / n,
    };
  };
  const steady = await measure(5);
  await group.join();
  const rebalance = await measure(3);
  return { steady, rebalance };
};

const fmt = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
};
const r2 = (x: number): number => Math.round(x * 100) / 100;

const main = async (): Promise<void> => {
  const trials = flag('trials', 20);
  const seed = flag('seed', 1);
  const kills = [];
  for (let t = 0; t < trials; t++) kills.push(await killTrial(seed + t));
  const bound = SESSION_MS + INTERVAL_MS;
  const fromKill = kills.map((k) => k.fromKillMs);
  const fromLast = kills.map((k) => k.fromLastHeartbeatMs);
  const orders: Order[] = ['joiner first', 'joiner last', 'shuffled'];
  const rounds = Object.fromEntries(
    await Promise.all(orders.map(async (o) => [o, await joinRounds(o, seed)] as const)),
  );
  const worstRounds = Math.max(...Object.values(rounds));
  const cost = await heartbeatCost();

  const rows: [string, string, string][] = [
    [
      '(a) kill → partitions re-owned, median',
      fmt(median(fromKill)),
      `bound ${fmt(bound)} (session + interval)`,
    ],
    ['(a) kill → partitions re-owned, max', fmt(Math.max(...fromKill)), `${trials} kills at random moments`],
    ['(a) last heartbeat → re-owned, max', fmt(Math.max(...fromLast)), 'the session runs from here'],
    ...orders.map((o): [string, string, string] => [`(b) join, ${o}`, `${rounds[o]} rounds`, 'bound 3']),
    [
      '(c) steady heartbeat',
      `${r2(cost.steady.reads)} reads, ${r2(cost.steady.writes)} writes`,
      `${r2(cost.steady.readUnits)} RCU, ${r2(cost.steady.writeUnits)} WCU`,
    ],
    [
      '(c) heartbeat, 3 rounds after a join',
      `${r2(cost.rebalance.reads)} reads, ${r2(cost.rebalance.writes)} writes`,
      `${r2(cost.rebalance.readUnits)} RCU, ${r2(cost.rebalance.writeUnits)} WCU`,
    ],
  ];
  const width = Math.max(...rows.map((r) => r[0].length));
  const width2 = Math.max(...rows.map((r) => r[1].length));
  for (const [a, b, c] of rows) console.log(`${a.padEnd(width)}  ${b.padStart(width2)}  ${c}`);
  console.log(
    JSON.stringify({
      bench: 'groups',
      sessionTimeoutMs: SESSION_MS,
      heartbeatIntervalMs: INTERVAL_MS,
      killToReownedMs: { median: median(fromKill), max: Math.max(...fromKill), bound, trials },
      lastHeartbeatToReownedMs: { median: median(fromLast), max: Math.max(...fromLast) },
      joinRoundsToConvergence: { ...rounds, worst: worstRounds, bound: 3 },
      heartbeatCost: cost,
    }),
  );
  if (worstRounds > 3) process.exitCode = 1;
};

await main();
