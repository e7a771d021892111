/**
 * Seeded simulation of a consumer group: members join, leave, crash, run slow, come back as zombies,
 * change subscriptions and commit offsets while topics grow, all against the coordinator over the
 * in-memory store with interleaved concurrent requests and injected storage faults (failures before
 * the write, after it, and dropped responses), which clients answer by retrying like the SDK does. After every step it checks invariant 5
 * (no partition with two owners, stale commits change nothing, committed offsets read back), and after
 * a quiet period that every subscribed partition is owned exactly once.
 *
 * A failure names its seed; replay it alone with SLUICE_SEED=<seed> (SLUICE_SIM_RUNS=<n> runs more seeds).
 */
import { describe, expect, it } from 'vitest';
import { FaultInjector, FaultyMetadataStore } from '../../lib/adapters/fault/index.js';
import { MemoryMetadataStore } from '../../lib/adapters/memory/metadata-store.js';
import { isSluiceError } from '../../protocol/errors.js';
import { GroupCoordinator } from '../../lib/core/groups/coordinator.js';
import { decodeMember } from '../../lib/core/groups/group-items.js';
import type { PartitionMap } from '../../lib/core/groups/partition-map.js';
import {
  EMPTY_PARTITIONS,
  fromTopicPartitions,
  intersect,
  isSubset,
  minus,
  pairs,
  samePartitions,
  union,
} from '../../lib/core/groups/partition-map.js';
import { InMemoryTopics, InterleavingStore, ManualClock, seededRandom } from '../support/group-simulation.js';
import type { CommittedOffset, HeartbeatRequest } from '../../lib/core/groups/types.js';

const GROUP = 'sim';
const SESSION_MS = 45_000;
const INTERVAL_MS = 5_000;
const REBALANCE_MS = 20_000;
const STEPS = 50;
/** Share of store writes that fail (before the write, after it, or with the response lost). */
const FAULT_RATE = 0.06;
const RETRIABLE = new Set([
  'KAFKA_STORAGE_ERROR',
  'THROTTLING_QUOTA_EXCEEDED',
  'REQUEST_TIMED_OUT',
  'COORDINATOR_NOT_AVAILABLE',
]);

interface Client {
  name: string;
  memberId: string | null;
  epoch: number;
  instanceId: string | null;
  subscriptions: string[];
  subscriptionChanged: boolean;
  /** What the client believes it owns and consumes. */
  owned: PartitionMap;
  /** Its last assignment from the coordinator. */
  assigned: PartitionMap;
  status: 'active' | 'crashed' | 'gone';
  /** Heartbeats it takes to finish revoking (0 = at once). */
  slowness: number;
  revokeWait: number;
  nextBeat: number;
}

class Simulation {
  readonly rng: () => number;
  readonly memory = new MemoryMetadataStore();
  readonly clock = new ManualClock();
  readonly topics: InMemoryTopics;
  /** What clients talk to: the store under it interleaves and fails. */
  readonly coordinator: GroupCoordinator;
  /** For the checks: the same table without faults. */
  readonly observer: GroupCoordinator;
  readonly injector: FaultInjector;
  readonly clients: Client[] = [];
  /** Clients removed from the group that may still act on their old identity. */
  readonly ghosts: { memberId: string; epoch: number }[] = [];
  /** Invariant 5: the last accepted commit per partition. */
  readonly committed = new Map<string, CommittedOffset>();
  /** Commits that failed ambiguously (they may have been written) since the last check. */
  readonly maybeCommitted = new Map<string, CommittedOffset[]>();
  readonly log: string[] = [];
  private counter = 0;
  /** Set by every commit attempt, so the read-back check runs when offsets may have changed. */
  private offsetsTouched = true;

  constructor(readonly seed: number) {
    this.rng = seededRandom(seed);
    this.topics = new InMemoryTopics({ orders: 2 + this.int(8), payments: 1 + this.int(4) });
    this.injector = new FaultInjector({
      seed,
      rate: FAULT_RATE,
      ops: ['put', 'update', 'delete', 'transact', 'batchWrite'],
      kinds: { failBefore: 1, failAfter: 2, dropResponse: 1 },
    });
    const options = {
      clock: this.clock,
      topics: this.topics,
      offsets: this.topics,
      sessionTimeoutMs: SESSION_MS,
      heartbeatIntervalMs: INTERVAL_MS,
    };
    const interleaving = new InterleavingStore(this.memory, seededRandom(seed * 7919 + 1), 1 + (seed % 3));
    this.coordinator = new GroupCoordinator({
      ...options,
      store: new FaultyMetadataStore(interleaving, this.injector),
      random: seededRandom(seed * 31 + 7),
    });
    this.observer = new GroupCoordinator({ ...options, store: this.memory });
  }

  int(n: number): number {
    return Math.floor(this.rng() * n);
  }

  pick<T>(items: readonly T[]): T | undefined {
    return items.length === 0 ? undefined : items[this.int(items.length)];
  }

  active(): Client[] {
    return this.clients.filter((c) => c.status === 'active');
  }

  /** Server-side members, straight from the table. */
  async serverMembers() {
    const page = await this.memory.query({ pk: `G#${GROUP}`, sk: { beginsWith: 'M#' }, consistent: true });
    return page.items.map(decodeMember);
  }

  join(): Client {
    const names = this.topics.names();
    const subscriptions = names.filter(() => this.rng() < 0.6);
    if (subscriptions.length === 0) subscriptions.push(this.pick(names) ?? 'orders');
    if (this.rng() < 0.15) subscriptions.push('audit');
    const name = `c${this.counter++}`;
    const client: Client = {
      name,
      // Half the clients choose their member id (KIP-1082), so a retried join lands on the same member.
      memberId: this.rng() < 0.5 ? `${name}-${this.seed}` : null,
      epoch: 0,
      instanceId: this.rng() < 0.3 ? `host-${this.int(3)}` : null,
      subscriptions: [...new Set(subscriptions)].sort(),
      subscriptionChanged: false,
      owned: EMPTY_PARTITIONS,
      assigned: EMPTY_PARTITIONS,
      status: 'active',
      slowness: this.rng() < 0.25 ? 1 + this.int(3) : 0,
      revokeWait: 0,
      nextBeat: this.clock.now(),
    };
    this.clients.push(client);
    return client;
  }

  async heartbeat(c: Client): Promise<void> {
    const joining = c.epoch === 0;
    const request: HeartbeatRequest = {
      memberId: c.memberId,
      memberEpoch: c.epoch,
      instanceId: c.instanceId,
      subscribedTopics: joining || c.subscriptionChanged ? c.subscriptions : null,
      ownedPartitions: c.owned,
      rebalanceTimeoutMs: REBALANCE_MS,
      serverAssignor: null,
    };
    c.nextBeat = this.clock.now() + INTERVAL_MS + (c.slowness > 0 && this.rng() < 0.2 ? this.int(50_000) : 0);
    try {
      // Like the SDK: a retriable failure is retried with the same request; its answer may have been lost.
      const res = await this.retrying(() => this.coordinator.heartbeat(GROUP, request));
      c.memberId = res.memberId;
      c.epoch = res.memberEpoch;
      c.subscriptionChanged = false;
      if (res.assignment) {
        const assigned = fromTopicPartitions(res.assignment.topicPartitions);
        if (!samePartitions(assigned, c.assigned)) c.revokeWait = c.slowness;
        c.assigned = assigned;
      }
      // New partitions are consumed at once; revoked ones only after the client finished with them.
      c.owned = union(c.owned, minus(c.assigned, c.owned));
      if (c.revokeWait > 0) c.revokeWait--;
      else c.owned = intersect(c.owned, c.assigned);
    } catch (error) {
      if (!isSluiceError(error)) throw error;
      if (RETRIABLE.has(error.code)) return;
      if (error.code === 'UNRELEASED_INSTANCE_ID' && joining) {
        c.status = 'gone';
        return;
      }
      if (error.code !== 'UNKNOWN_MEMBER_ID' && error.code !== 'FENCED_MEMBER_EPOCH') throw error;
      if (c.memberId !== null) this.ghosts.push({ memberId: c.memberId, epoch: c.epoch });
      // Fenced or forgotten: drop everything and rejoin (same id after fencing, a new one otherwise).
      if (error.code === 'UNKNOWN_MEMBER_ID' && !c.memberId?.startsWith(`${c.name}-`)) c.memberId = null;
      c.epoch = 0;
      c.owned = EMPTY_PARTITIONS;
      c.assigned = EMPTY_PARTITIONS;
    }
  }

  /** Up to three tries on retriable errors, as the SDK's retrier does. */
  async retrying<T>(call: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (error) {
        if (attempt >= 3 || !isSluiceError(error) || !RETRIABLE.has(error.code)) throw error;
      }
    }
  }

  async commit(memberId: string | null, epoch: number | null, owned: PartitionMap): Promise<'ok' | string> {
    const chosen = pairs(owned).filter(() => this.rng() < 0.7);
    const offsets = chosen.map(([topic, partition]) => ({
      topic,
      partition,
      offset: this.int(1000),
      metadata: '',
    }));
    this.offsetsTouched = true;
    try {
      const res = await this.coordinator.commitOffsets(GROUP, { memberId, memberEpoch: epoch, offsets });
      for (const [i, entry] of offsets.entries()) {
        if ('error' in (res.results[i] ?? {})) continue;
        const key = `${entry.topic}/${entry.partition}`;
        this.committed.set(key, entry);
        this.maybeCommitted.delete(key);
      }
      return 'ok';
    } catch (error) {
      if (!isSluiceError(error)) throw error;
      if (RETRIABLE.has(error.code)) {
        // It may or may not have been written; the next check settles which.
        for (const entry of offsets) {
          const key = `${entry.topic}/${entry.partition}`;
          this.maybeCommitted.set(key, [...(this.maybeCommitted.get(key) ?? []), entry]);
        }
      }
      return error.code;
    }
  }

  growTopic(): void {
    const topic = this.pick(this.topics.names());
    const partitions = topic === undefined ? undefined : this.topics.partitionCount(topic);
    if (topic === undefined || partitions === undefined || partitions >= 16) return;
    this.topics.grow(topic, partitions + 1 + this.int(3));
    this.log.push(`${topic} grows`);
  }

  /** Checked after every step. */
  async checkInvariants(): Promise<void> {
    const members = await this.serverMembers();
    const serverOwner = new Map<string, string>();
    for (const m of members) {
      for (const [topic, p] of pairs(union(m.assigned, m.revoking))) {
        const key = `${topic}/${p}`;
        check(!serverOwner.has(key), `${key} held by two members`);
        serverOwner.set(key, m.memberId);
      }
    }
    const byId = new Map(members.map((m) => [m.memberId, m]));
    const clientOwner = new Map<string, string>();
    for (const c of this.clients) {
      const m = c.memberId === null ? undefined : byId.get(c.memberId);
      if (c.status === 'gone' || !m) continue;
      // What a client consumes, the coordinator knows it holds.
      if (c.status === 'active') {
        check(isSubset(c.owned, union(m.assigned, m.revoking)), `${c.name} owns more than its member holds`);
      }
      for (const [topic, p] of pairs(c.owned)) {
        const key = `${topic}/${p}`;
        check(!clientOwner.has(key), `${key} consumed by ${clientOwner.get(key)} and ${c.name}`);
        clientOwner.set(key, c.name);
      }
    }
    if (!this.offsetsTouched) return;
    this.offsetsTouched = false;
    const stored = new Map(
      (await this.observer.fetchOffsets(GROUP)).offsets.map((o) => [`${o.topic}/${o.partition}`, o]),
    );
    const same = (a: CommittedOffset | undefined, b: CommittedOffset | undefined): boolean =>
      a?.offset === b?.offset && a?.metadata === b?.metadata;
    for (const key of new Set([...stored.keys(), ...this.committed.keys()])) {
      const found = stored.get(key);
      const accepted = this.committed.get(key);
      const maybe = this.maybeCommitted.get(key) ?? [];
      check(
        same(found, accepted) || maybe.some((m) => same(found, m)),
        `${key} reads ${found?.offset} but the last accepted commit was ${accepted?.offset}`,
      );
      if (found) this.committed.set(key, found);
    }
    this.maybeCommitted.clear();
  }

  /** No joins, crashes or slowness: everyone heartbeats until the group is stable; then full coverage. */
  async settle(): Promise<void> {
    for (const c of this.active()) c.slowness = 0;
    for (let round = 0; round < 40; round++) {
      this.clock.advance(INTERVAL_MS);
      await Promise.all(this.active().map((c) => this.heartbeat(c)));
      // The maintenance function's sweep removes crashed members even when nobody heartbeats.
      await this.coordinator.sweep().catch((e: unknown) => {
        if (!isSluiceError(e) || !RETRIABLE.has(e.code)) throw e;
      });
      await this.checkInvariants();
      const members = await this.serverMembers();
      const activeIds = new Set(this.active().map((c) => c.memberId));
      const state = (await this.observer.describeGroup(GROUP).catch(() => undefined))?.state;
      const converged =
        members.every((m) => activeIds.has(m.memberId)) &&
        this.active().every(
          (c) =>
            c.epoch !== 0 &&
            samePartitions(c.owned, members.find((m) => m.memberId === c.memberId)?.assigned ?? {}),
        ) &&
        (state === 'STABLE' || state === 'EMPTY' || state === undefined);
      if (!converged) continue;
      const subscribed = new Set(this.active().flatMap((c) => c.subscriptions));
      const expected: string[] = [];
      for (const topic of subscribed) {
        const info = await this.topics.describe(topic);
        for (let p = 0; p < (info?.partitions ?? 0); p++) expected.push(`${topic}/${p}`);
      }
      const owned = this.active().flatMap((c) => pairs(c.owned).map(([t, p]) => `${t}/${p}`));
      expect(owned.sort(), 'every subscribed partition owned exactly once').toEqual(expected.sort());
      return;
    }
    throw new Error(`group did not settle: ${JSON.stringify(await this.observer.describeGroup(GROUP))}`);
  }

  async step(): Promise<void> {
    const roll = this.rng();
    const now = this.clock.now();
    if (roll < 0.1 && this.active().length < 8) {
      const c = this.join();
      this.log.push(`join ${c.name}${c.instanceId ? ` as ${c.instanceId}` : ''}`);
      await this.heartbeat(c);
    } else if (roll < 0.45) {
      // Time passes; whoever is due heartbeats, concurrently.
      this.clock.advance(500 + this.int(3000));
      const due = this.active().filter((c) => c.nextBeat <= this.clock.now() || c.epoch === 0);
      // Sometimes the membership or the topics change while those heartbeats are in flight.
      if (this.rng() < 0.3 && this.active().length < 8) due.push(this.join());
      if (this.rng() < 0.15) this.growTopic();
      this.log.push(`tick → ${due.map((c) => c.name).join(',')}`);
      await Promise.all(due.map((c) => this.heartbeat(c)));
    } else if (roll < 0.5) {
      const c = this.pick(this.active().filter((x) => x.memberId !== null && x.epoch > 0));
      if (!c) return;
      const temporary = c.instanceId !== null && this.rng() < 0.6;
      this.log.push(`${c.name} leaves${temporary ? ' temporarily' : ''}`);
      const res = await this.coordinator
        .heartbeat(GROUP, { ...leaveRequest(c), memberEpoch: temporary ? -2 : -1 })
        .catch((e: unknown) => e);
      if (isSluiceError(res)) expect(['UNKNOWN_MEMBER_ID', ...RETRIABLE]).toContain(res.code);
      else expect(res).toMatchObject({ memberEpoch: temporary ? -2 : -1, assignment: null });
      c.status = 'gone';
      c.owned = EMPTY_PARTITIONS;
    } else if (roll < 0.56) {
      const c = this.pick(this.active().filter((x) => x.memberId !== null));
      if (!c) return;
      this.log.push(`${c.name} crashes`);
      c.status = 'crashed';
      this.ghosts.push({ memberId: c.memberId as string, epoch: c.epoch });
    } else if (roll < 0.7) {
      const c = this.pick(this.active().filter((x) => x.memberId !== null && x.epoch > 0));
      if (!c) return;
      const outcome = await this.commit(c.memberId, c.epoch, c.owned);
      this.log.push(`${c.name} commits at epoch ${c.epoch}: ${outcome}`);
      expect(['ok', 'UNKNOWN_MEMBER_ID', ...RETRIABLE]).toContain(outcome);
    } else if (roll < 0.78) {
      // A stale epoch or a zombie: rejected, and nothing changes.
      const c = this.pick(this.active().filter((x) => x.memberId !== null && x.epoch > 1));
      const ghost = this.pick(this.ghosts);
      const live = new Map((await this.serverMembers()).map((m) => [m.memberId, m]));
      const target = this.rng() < 0.5 && c ? { memberId: c.memberId as string, epoch: c.epoch - 1 } : ghost;
      if (!target) return;
      const member = live.get(target.memberId);
      if (member && member.memberEpoch === target.epoch && now < member.lastSeen + SESSION_MS) return;
      const everything = union(
        fromTopicPartitions([{ topic: 'orders', partitions: [0, 1] }]),
        fromTopicPartitions([{ topic: 'payments', partitions: [0] }]),
      );
      const outcome = await this.commit(target.memberId, target.epoch, everything);
      this.log.push(`stale commit ${target.memberId.slice(0, 8)}@${target.epoch}: ${outcome}`);
      expect(['STALE_MEMBER_EPOCH', 'UNKNOWN_MEMBER_ID', ...RETRIABLE]).toContain(outcome);
      const hb = await this.coordinator
        .heartbeat(GROUP, {
          ...leaveRequest({ memberId: target.memberId, instanceId: null }),
          memberEpoch: target.epoch,
        })
        .catch((e: unknown) => e);
      if (target.epoch > 0) {
        expect(['UNKNOWN_MEMBER_ID', 'FENCED_MEMBER_EPOCH', ...RETRIABLE], 'zombie heartbeat').toContain(
          isSluiceError(hb) ? hb.code : 'accepted',
        );
      }
    } else if (roll < 0.82) {
      this.growTopic();
    } else if (roll < 0.84) {
      if ((await this.topics.describe('audit')) === undefined) {
        this.topics.create('audit', 1 + this.int(4));
        this.log.push('audit created');
      }
    } else if (roll < 0.9) {
      const c = this.pick(this.active().filter((x) => x.epoch > 0));
      if (!c) return;
      const names = [...this.topics.names(), 'audit'];
      const next = [...new Set(names.filter(() => this.rng() < 0.5))].sort();
      if (next.length === 0) return;
      c.subscriptions = next;
      c.subscriptionChanged = true;
      this.log.push(`${c.name} subscribes to ${next.join(',')}`);
      await this.heartbeat(c);
    } else if (roll < 0.93) {
      const result = await this.coordinator.sweep().then(
        (r) => `${r.membersExpired} expired`,
        (e: unknown) => (isSluiceError(e) && RETRIABLE.has(e.code) ? e.code : Promise.reject(e)),
      );
      this.log.push(`sweep: ${result}`);
    } else if (roll < 0.96) {
      const state = (await this.observer.describeGroup(GROUP).catch(() => undefined))?.state;
      const outcome = await this.commit(
        null,
        null,
        fromTopicPartitions([{ topic: 'orders', partitions: [0] }]),
      );
      this.log.push(`simple commit (${state}): ${outcome}`);
      if (RETRIABLE.has(outcome)) return;
      if (state === 'EMPTY' || state === undefined) expect(outcome).toBe('ok');
      else if ((await this.serverMembers()).some((m) => now < m.lastSeen + SESSION_MS))
        expect(outcome).toBe('UNKNOWN_MEMBER_ID');
    } else {
      const c = this.pick(this.clients.filter((x) => x.status === 'crashed'));
      if (!c) return;
      // A crashed process restarts: a fresh client, the same static identity if it had one.
      c.status = 'gone';
      const fresh = this.join();
      fresh.instanceId = c.instanceId;
      this.log.push(`${c.name} restarts as ${fresh.name}`);
      await this.heartbeat(fresh);
    }
  }
}

/** A cheap assertion for the hot per-partition checks (vitest's expect costs more than the step). */
const check = (condition: boolean, message: string): void => {
  if (!condition) throw new Error(`invariant violated: ${message}`);
};

const leaveRequest = (c: Pick<Client, 'memberId' | 'instanceId'>): HeartbeatRequest => ({
  memberId: c.memberId,
  memberEpoch: -1,
  instanceId: c.instanceId,
  subscribedTopics: null,
  ownedPartitions: null,
  rebalanceTimeoutMs: null,
  serverAssignor: null,
});

const run = async (seed: number): Promise<void> => {
  const sim = new Simulation(seed);
  try {
    for (let i = 0; i < 3; i++) await sim.heartbeat(sim.join());
    for (let step = 0; step < STEPS; step++) {
      await sim.step();
      await sim.checkInvariants();
      if (step === STEPS / 2) await sim.settle();
    }
    await sim.settle();
  } catch (error) {
    const history = sim.log.slice(-15).join('\n  ');
    throw new Error(
      `groups simulation failed for seed ${seed} (replay: SLUICE_SEED=${seed} npx vitest run --project sim test/sim/groups-sim.test.ts)\n  last steps:\n  ${history}\n${(error as Error).message}`,
      { cause: error },
    );
  } finally {
    sim.injector.dispose();
  }
};

describe('consumer group simulation', () => {
  const replay = process.env['SLUICE_SEED'];
  const runs = Number(process.env['SLUICE_SIM_RUNS'] ?? 200);
  const seeds = replay !== undefined ? [Number(replay)] : Array.from({ length: runs }, (_, i) => i + 1);

  it(`keeps invariant 5 over ${seeds.length} seeded runs`, { timeout: 600_000 }, async () => {
    for (const seed of seeds) await run(seed);
  });
});
