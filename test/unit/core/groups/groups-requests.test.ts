/**
 * Consumer-group request validation, field by field: each malformed body is refused with
 * INVALID_REQUEST and the exact message that names the field, and each valid one parses to exactly
 * the request the coordinator gets (defaults filled in, nothing else).
 */
import { describe, expect, it } from 'vitest';
import {
  parseClassicMemberRequest,
  parseCommitRequest,
  parseHeartbeatRequest,
  parseResetRequest,
  validateClassicMember,
  validateCommit,
  validateGroupId,
  validateHeartbeat,
  validateReset,
} from '../../../../lib/core/groups/requests.js';
import type {
  ClassicMemberRequest,
  CommitRequest,
  HeartbeatRequest,
  ResetRequest,
} from '../../../../lib/core/groups/types.js';
import { SluiceError } from '../../../../protocol/errors.js';

/** The message of the INVALID_REQUEST that `run` throws. */
const refusal = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(SluiceError);
    expect((error as SluiceError).code).toBe('INVALID_REQUEST');
    return (error as SluiceError).message;
  }
  throw new Error('expected an INVALID_REQUEST');
};

const join = { memberEpoch: 0, subscribedTopics: ['t'] };
const member = { memberId: 'm1', memberEpoch: 3 };
const long = 'x'.repeat(256);

describe('a heartbeat', () => {
  it('parses a join to exactly its fields, the rest null', () => {
    expect(parseHeartbeatRequest(join)).toEqual({
      memberId: null,
      memberEpoch: 0,
      instanceId: null,
      subscribedTopics: ['t'],
      ownedPartitions: null,
      rebalanceTimeoutMs: null,
      serverAssignor: null,
    });
  });

  it('parses every field when given, owned partitions as a sorted map', () => {
    expect(
      parseHeartbeatRequest({
        memberId: 'm1',
        memberEpoch: 4,
        instanceId: 'i1',
        subscribedTopics: ['b', 'a'],
        ownedPartitions: [
          { topic: 'b', partitions: [2, 0] },
          { topic: 'a', partitions: [1] },
        ],
        rebalanceTimeoutMs: 1,
        serverAssignor: 'range',
      }),
    ).toEqual({
      memberId: 'm1',
      memberEpoch: 4,
      instanceId: 'i1',
      subscribedTopics: ['b', 'a'],
      ownedPartitions: { a: [1], b: [0, 2] },
      rebalanceTimeoutMs: 1,
      serverAssignor: 'range',
    });
    expect(
      parseHeartbeatRequest({ ...member, memberEpoch: -2, instanceId: 'i', ownedPartitions: null }),
    ).toMatchObject({ memberEpoch: -2, ownedPartitions: null, subscribedTopics: null });
    expect(parseHeartbeatRequest({ ...member, serverAssignor: 'uniform' }).serverAssignor).toBe('uniform');
    expect(parseHeartbeatRequest({ ...member, memberEpoch: -1 }).memberEpoch).toBe(-1);
    expect(
      parseHeartbeatRequest({ ...member, rebalanceTimeoutMs: null, serverAssignor: null, instanceId: null }),
    ).toMatchObject({ rebalanceTimeoutMs: null, serverAssignor: null, instanceId: null });
    expect(parseHeartbeatRequest({ ...member, memberId: 'é'.repeat(255) }).memberId).toBe('é'.repeat(255));
  });

  it.each([
    [{ ...join, extra: 1, other: 2 }, 'heartbeat has unknown field(s): extra, other'],
    [{ subscribedTopics: ['t'] }, 'memberEpoch must be an integer ≥ -2'],
    [{ ...join, memberEpoch: -3 }, 'memberEpoch must be an integer ≥ -2'],
    [{ ...join, memberEpoch: 1.5 }, 'memberEpoch must be an integer ≥ -2'],
    [{ ...join, memberEpoch: '0' }, 'memberEpoch must be an integer ≥ -2'],
    [{ ...join, memberEpoch: 2 ** 53 }, 'memberEpoch must be an integer ≥ -2'],
    [{ ...join, memberId: '' }, 'memberId must be 1-255 printable characters or null'],
    [{ ...join, memberId: long }, 'memberId must be 1-255 printable characters or null'],
    [{ ...join, memberId: 'a\nb' }, 'memberId must be 1-255 printable characters or null'],
    [{ ...join, memberId: 7 }, 'memberId must be 1-255 printable characters or null'],
    // An array has a length and spreads like a string: only the type check refuses it.
    [{ ...join, memberId: ['m'] }, 'memberId must be 1-255 printable characters or null'],
    [{ ...join, instanceId: '' }, 'instanceId must be 1-255 printable characters or null'],
    [{ ...join, subscribedTopics: 't' }, 'subscribedTopics must be an array'],
    [
      { ...join, subscribedTopics: ['ok', '..'] },
      'subscribedTopics[1] must be a topic name ([a-zA-Z0-9._-]{1,249}, not . or ..)',
    ],
    [
      { ...join, subscribedTopics: ['.'] },
      'subscribedTopics[0] must be a topic name ([a-zA-Z0-9._-]{1,249}, not . or ..)',
    ],
    [
      { ...join, subscribedTopics: ['a b'] },
      'subscribedTopics[0] must be a topic name ([a-zA-Z0-9._-]{1,249}, not . or ..)',
    ],
    [
      { ...join, subscribedTopics: ['x'.repeat(250)] },
      'subscribedTopics[0] must be a topic name ([a-zA-Z0-9._-]{1,249}, not . or ..)',
    ],
    [{ ...join, ownedPartitions: {} }, 'ownedPartitions must be an array'],
    [{ ...join, ownedPartitions: [null] }, 'ownedPartitions[0] must be an object'],
    [{ ...join, ownedPartitions: [[]] }, 'ownedPartitions[0] must be an object'],
    [
      { ...join, ownedPartitions: [{ topic: 't', partitions: [0], x: 1 }] },
      'ownedPartitions[0] has unknown field(s): x',
    ],
    [
      { ...join, ownedPartitions: [{ topic: 1, partitions: [] }] },
      'ownedPartitions[0].topic must be a topic name ([a-zA-Z0-9._-]{1,249}, not . or ..)',
    ],
    [
      { ...join, ownedPartitions: [{ topic: 't', partitions: 0 }] },
      'ownedPartitions[0].partitions must be an array',
    ],
    [
      {
        ...join,
        ownedPartitions: [
          { topic: 't', partitions: [0] },
          { topic: 'u', partitions: [1, -1] },
        ],
      },
      'ownedPartitions[1].partitions[1] must be an integer ≥ 0',
    ],
    [{ ...join, rebalanceTimeoutMs: 0 }, 'rebalanceTimeoutMs must be an integer ≥ 1'],
    [{ ...join, serverAssignor: 'sticky' }, 'serverAssignor must be one of uniform, range or null'],
    [{ memberEpoch: 0 }, 'subscribedTopics is required when joining (memberEpoch 0)'],
    [{ memberEpoch: 0, subscribedTopics: null }, 'subscribedTopics is required when joining (memberEpoch 0)'],
    [{ memberEpoch: 5 }, 'memberId is required with memberEpoch 5'],
    [{ memberEpoch: -1 }, 'memberId is required with memberEpoch -1'],
    [
      { memberId: 'm', memberEpoch: -2 },
      'memberEpoch -2 (temporary leave) requires the static member instanceId',
    ],
  ])('refuses %j: %s', (body, message) => {
    expect(refusal(() => parseHeartbeatRequest(body as Record<string, unknown>))).toBe(message);
  });

  it('applies the same rules to a request that does not come through HTTP', () => {
    const ok: HeartbeatRequest = parseHeartbeatRequest(join);
    expect(() => validateHeartbeat(ok)).not.toThrow();
    expect(refusal(() => validateHeartbeat({ ...ok, memberEpoch: -3 }))).toBe(
      'memberEpoch must be an integer ≥ -2',
    );
    expect(refusal(() => validateHeartbeat({ ...ok, subscribedTopics: ['ok', ''] }))).toBe(
      'subscribedTopics[1] must be a topic name ([a-zA-Z0-9._-]{1,249}, not . or ..)',
    );
    expect(refusal(() => validateHeartbeat({ ...ok, subscribedTopics: null }))).toBe(
      'subscribedTopics is required when joining (memberEpoch 0)',
    );
  });
});

describe('a classic member request', () => {
  const classicJoin = { memberId: 'c1', subscribedTopics: ['t'] };
  const generation = { memberId: 'c1', memberEpoch: 2 };

  it('parses a JoinGroup (no memberEpoch) to exactly its fields, the rest null', () => {
    const parsed = {
      memberId: 'c1',
      memberEpoch: null,
      instanceId: null,
      subscribedTopics: ['t'],
      ownedPartitions: null,
      rebalanceTimeoutMs: null,
      serverAssignor: null,
    };
    expect(parseClassicMemberRequest(classicJoin)).toEqual(parsed);
    // null says the same as leaving a field out.
    expect(
      parseClassicMemberRequest({
        ...classicJoin,
        memberEpoch: null,
        instanceId: null,
        ownedPartitions: null,
        rebalanceTimeoutMs: null,
        serverAssignor: null,
      }),
    ).toEqual(parsed);
  });

  it('parses every field of a JoinGroup when given, owned partitions as a sorted map', () => {
    expect(
      parseClassicMemberRequest({
        ...classicJoin,
        instanceId: 'i1',
        subscribedTopics: ['b', 'a'],
        ownedPartitions: [
          { topic: 'b', partitions: [2, 0] },
          { topic: 'a', partitions: [1] },
        ],
        rebalanceTimeoutMs: 1,
        serverAssignor: 'range',
      }),
    ).toEqual({
      memberId: 'c1',
      memberEpoch: null,
      instanceId: 'i1',
      subscribedTopics: ['b', 'a'],
      ownedPartitions: { a: [1], b: [0, 2] },
      rebalanceTimeoutMs: 1,
      serverAssignor: 'range',
    });
  });

  it('parses a SyncGroup/Heartbeat (a generation, no subscription) with null topics and partitions', () => {
    const parsed = {
      memberId: 'c1',
      memberEpoch: 2,
      instanceId: 'i1',
      subscribedTopics: null,
      ownedPartitions: null,
      rebalanceTimeoutMs: null,
      serverAssignor: 'uniform',
    };
    expect(parseClassicMemberRequest({ ...generation, instanceId: 'i1', serverAssignor: 'uniform' })).toEqual(
      parsed,
    );
    expect(
      parseClassicMemberRequest({
        ...generation,
        instanceId: 'i1',
        serverAssignor: 'uniform',
        subscribedTopics: null,
        ownedPartitions: null,
      }),
    ).toEqual(parsed);
    expect(parseClassicMemberRequest({ ...generation, memberEpoch: 0 }).memberEpoch).toBe(0);
  });

  it.each([
    [{ ...classicJoin, extra: 1 }, 'classic member request has unknown field(s): extra'],
    [{ subscribedTopics: ['t'] }, 'memberId is required (1-255 printable characters)'],
    [{ ...classicJoin, memberId: null }, 'memberId is required (1-255 printable characters)'],
    [{ ...classicJoin, memberId: '' }, 'memberId must be 1-255 printable characters or null'],
    [{ ...generation, memberEpoch: -1 }, 'memberEpoch must be an integer ≥ 0'],
    [{ ...generation, memberEpoch: '2' }, 'memberEpoch must be an integer ≥ 0'],
    [{ ...classicJoin, instanceId: '' }, 'instanceId must be 1-255 printable characters or null'],
    [{ ...classicJoin, subscribedTopics: 't' }, 'subscribedTopics must be an array'],
    [
      { ...classicJoin, subscribedTopics: ['ok', '..'] },
      'subscribedTopics[1] must be a topic name ([a-zA-Z0-9._-]{1,249}, not . or ..)',
    ],
    [{ ...classicJoin, ownedPartitions: {} }, 'ownedPartitions must be an array'],
    [
      { ...classicJoin, ownedPartitions: [{ topic: 't', partitions: [-1] }] },
      'ownedPartitions[0].partitions[0] must be an integer ≥ 0',
    ],
    [{ ...classicJoin, rebalanceTimeoutMs: 0 }, 'rebalanceTimeoutMs must be an integer ≥ 1'],
    [{ ...classicJoin, serverAssignor: 'sticky' }, 'serverAssignor must be one of uniform, range or null'],
    [{ memberId: 'c1' }, 'subscribedTopics is required when joining (memberEpoch null)'],
    [
      { ...generation, ownedPartitions: [{ topic: 't', partitions: [0] }] },
      'subscribedTopics and ownedPartitions are sent only when joining (memberEpoch null)',
    ],
  ])('refuses %j: %s', (body, message) => {
    expect(refusal(() => parseClassicMemberRequest(body as Record<string, unknown>))).toBe(message);
  });

  it('applies the same rules to a request that does not come through HTTP', () => {
    const ok: ClassicMemberRequest = parseClassicMemberRequest(classicJoin);
    const beat: ClassicMemberRequest = parseClassicMemberRequest(generation);
    expect(() => validateClassicMember(ok)).not.toThrow();
    expect(() => validateClassicMember(beat)).not.toThrow();
    const cases: [ClassicMemberRequest, string][] = [
      [{ ...ok, memberId: '' }, 'memberId must be 1-255 printable characters'],
      [{ ...beat, memberEpoch: -1 }, 'memberEpoch must be an integer ≥ 0'],
      [
        { ...ok, subscribedTopics: ['ok', ''] },
        'subscribedTopics[1] must be a topic name ([a-zA-Z0-9._-]{1,249}, not . or ..)',
      ],
      [{ ...ok, subscribedTopics: null }, 'subscribedTopics is required when joining (memberEpoch null)'],
      [
        { ...beat, subscribedTopics: ['t'] },
        'subscribedTopics and ownedPartitions are sent only when joining (memberEpoch null)',
      ],
      [
        { ...beat, ownedPartitions: { t: [0] } },
        'subscribedTopics and ownedPartitions are sent only when joining (memberEpoch null)',
      ],
    ];
    for (const [request, message] of cases)
      expect(refusal(() => validateClassicMember(request))).toBe(message);
  });
});

describe('a group id', () => {
  it('is 1-255 printable characters', () => {
    expect(() => validateGroupId('g')).not.toThrow();
    expect(() => validateGroupId('x'.repeat(255))).not.toThrow();
    for (const id of ['', 'x'.repeat(256), 'a\tb', '\u0000'])
      expect(refusal(() => validateGroupId(id))).toBe('group id must be 1-255 printable characters');
  });
});

describe('an offset commit', () => {
  const offset = { topic: 't', partition: 0, offset: 5 };

  it('parses to exactly its offsets, metadata defaulting to ""', () => {
    expect(
      parseCommitRequest({ ...member, offsets: [offset, { ...offset, partition: 1, metadata: 'm' }] }),
    ).toEqual({
      memberId: 'm1',
      memberEpoch: 3,
      offsets: [
        { topic: 't', partition: 0, offset: 5, metadata: '' },
        { topic: 't', partition: 1, offset: 5, metadata: 'm' },
      ],
    });
    for (const epoch of [undefined, null, -1])
      expect(parseCommitRequest({ memberEpoch: epoch, offsets: [] })).toEqual({
        memberId: null,
        memberEpoch: null,
        offsets: [],
      });
    expect(
      parseCommitRequest({ offsets: [{ ...offset, metadata: 'x'.repeat(4096) }] }).offsets[0]!.metadata,
    ).toBe('x'.repeat(4096));
    expect(
      parseCommitRequest({ offsets: Array.from({ length: 99 }, (_, p) => ({ ...offset, partition: p })) })
        .offsets.length,
    ).toBe(99);
  });

  it.each([
    [{ offsets: [], group: 'g' }, 'offset commit has unknown field(s): group'],
    [{ memberId: 'm', offsets: [] }, 'memberEpoch must be an integer ≥ 0'],
    [{ memberId: '', memberEpoch: 1, offsets: [] }, 'memberId must be 1-255 printable characters or null'],
    [{ memberId: 'm', memberEpoch: -1, offsets: [] }, 'memberEpoch must be an integer ≥ 0'],
    [
      { memberEpoch: 0, offsets: [] },
      'memberEpoch needs a memberId (omit both, or use -1, to commit outside the group protocol)',
    ],
    [{ offsets: 'x' }, 'offsets must be an array'],
    [
      { offsets: Array.from({ length: 100 }, (_, p) => ({ ...offset, partition: p })) },
      'offsets lists 100 partitions; one commit is atomic and takes at most 99: commit in several requests',
    ],
    [{ offsets: [offset, 3] }, 'offsets[1] must be an object'],
    [{ offsets: [{ ...offset, leader: 1 }] }, 'offsets[0] has unknown field(s): leader'],
    [
      { offsets: [{ ...offset, topic: '' }] },
      'offsets[0].topic must be a topic name ([a-zA-Z0-9._-]{1,249}, not . or ..)',
    ],
    [{ offsets: [{ ...offset, partition: -1 }] }, 'offsets[0].partition must be an integer ≥ 0'],
    [{ offsets: [{ ...offset, offset: -1 }] }, 'offsets[0].offset must be an integer ≥ 0'],
    [
      { offsets: [{ ...offset, metadata: 'x'.repeat(4097) }] },
      'offsets[0].metadata must be a string of at most 4096 characters',
    ],
    [
      { offsets: [{ ...offset, metadata: 1 }] },
      'offsets[0].metadata must be a string of at most 4096 characters',
    ],
    [{ offsets: [offset, { ...offset, offset: 9 }] }, 'offsets[1]: t/0 is listed twice'],
  ])('refuses %j: %s', (body, message) => {
    expect(refusal(() => parseCommitRequest(body as Record<string, unknown>))).toBe(message);
  });

  it('applies the same rules to a request that does not come through HTTP', () => {
    const ok: CommitRequest = { memberId: 'm', memberEpoch: 1, offsets: [{ ...offset, metadata: '' }] };
    expect(() => validateCommit(ok)).not.toThrow();
    expect(() => validateCommit({ memberId: null, memberEpoch: null, offsets: [] })).not.toThrow();
    const cases: [CommitRequest, string][] = [
      [
        { ...ok, memberEpoch: null },
        'memberId and memberEpoch go together (omit both to commit outside the group protocol)',
      ],
      [
        { ...ok, memberId: null },
        'memberId and memberEpoch go together (omit both to commit outside the group protocol)',
      ],
      [
        {
          ...ok,
          offsets: Array.from({ length: 100 }, (_, p) => ({ ...offset, partition: p, metadata: '' })),
        },
        'offsets lists 100 partitions; one commit is atomic and takes at most 99: commit in several requests',
      ],
      [
        { ...ok, offsets: [{ ...offset, topic: '..', metadata: '' }] },
        'offsets[0].topic must be a topic name ([a-zA-Z0-9._-]{1,249}, not . or ..)',
      ],
      [
        { ...ok, offsets: [{ ...offset, partition: 0.5, metadata: '' }] },
        'offsets[0].partition must be an integer ≥ 0',
      ],
      [
        { ...ok, offsets: [{ ...offset, offset: -2, metadata: '' }] },
        'offsets[0].offset must be an integer ≥ 0',
      ],
      [
        { ...ok, offsets: [{ ...offset, metadata: 'x'.repeat(4097) }] },
        'offsets[0].metadata is longer than 4096 characters',
      ],
      [
        {
          ...ok,
          offsets: [
            { ...offset, metadata: '' },
            { ...offset, offset: 1, metadata: '' },
          ],
        },
        'offsets[1]: t/0 is listed twice',
      ],
    ];
    for (const [request, message] of cases) expect(refusal(() => validateCommit(request))).toBe(message);
    expect(() =>
      validateCommit({
        ...ok,
        offsets: [
          { ...offset, metadata: 'x'.repeat(4096) },
          { ...offset, partition: 1, metadata: '' },
        ],
      }),
    ).not.toThrow();
  });
});

describe('an offset reset', () => {
  it('parses each kind of target exactly', () => {
    expect(parseResetRequest({ topic: 't', to: 'earliest' })).toEqual({ topic: 't', to: 'earliest' });
    expect(parseResetRequest({ topic: 't', to: 'latest' })).toEqual({ topic: 't', to: 'latest' });
    expect(parseResetRequest({ topic: 't', to: 0 })).toEqual({ topic: 't', to: { timestamp: 0 } });
    expect(parseResetRequest({ topic: 't', to: { offset: 7 } })).toEqual({ topic: 't', to: { offset: 7 } });
  });

  it.each([
    [{ topic: 't', to: 'earliest', group: 'g' }, 'offset reset has unknown field(s): group'],
    [{ to: 'earliest' }, 'topic must be a topic name ([a-zA-Z0-9._-]{1,249}, not . or ..)'],
    [{ topic: 't', to: -1 }, 'to (a timestamp in ms) must be an integer ≥ 0'],
    [{ topic: 't', to: { offset: 1, x: 2 } }, 'to has unknown field(s): x'],
    [{ topic: 't', to: { offset: -1 } }, 'to.offset must be an integer ≥ 0'],
    [{ topic: 't', to: {} }, 'to.offset must be an integer ≥ 0'],
    [{ topic: 't', to: 'first' }, 'to must be "earliest", "latest", a timestamp in ms or {"offset": n}'],
    [{ topic: 't', to: null }, 'to must be "earliest", "latest", a timestamp in ms or {"offset": n}'],
    [{ topic: 't', to: [1] }, 'to must be "earliest", "latest", a timestamp in ms or {"offset": n}'],
    [{ topic: 't' }, 'to must be "earliest", "latest", a timestamp in ms or {"offset": n}'],
  ])('refuses %j: %s', (body, message) => {
    expect(refusal(() => parseResetRequest(body as Record<string, unknown>))).toBe(message);
  });

  it('applies the same rules to a request that does not come through HTTP', () => {
    for (const to of ['earliest', 'latest', { offset: 0 }, { timestamp: 0 }] as ResetRequest['to'][])
      expect(() => validateReset({ topic: 't', to })).not.toThrow();
    expect(refusal(() => validateReset({ topic: '.', to: 'latest' }))).toBe(
      'topic must be a topic name ([a-zA-Z0-9._-]{1,249}, not . or ..)',
    );
    expect(refusal(() => validateReset({ topic: 't', to: { offset: -1 } }))).toBe(
      'to.offset must be an integer ≥ 0',
    );
    expect(refusal(() => validateReset({ topic: 't', to: { timestamp: -5 } }))).toBe(
      'to (a timestamp in ms) must be an integer ≥ 0',
    );
    expect(refusal(() => validateReset({ topic: 't', to: 'first' as 'latest' }))).toBe(
      'to must be earliest, latest, a timestamp or an offset',
    );
  });
});
