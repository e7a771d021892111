/**
 * The group routes of Sluice's HTTP API as the gateway's group handlers use them (API.md "Consumer
 * groups"): the same coordinator, authorization and errors as every HTTP client.
 */
import type { Transport } from '../sdk/transport.js';
import { path } from '../sdk/transport.js';
import type {
  ClassicMemberRequest,
  ClassicMemberResponse,
  CommittedOffset,
  GroupDescription,
  GroupSummary,
  HeartbeatRequest,
  HeartbeatResponse,
  OffsetCommitResult,
} from '../lib/wire/types.js';

export interface OffsetToCommit {
  topic: string;
  partition: number;
  offset: number;
  metadata: string;
}

export class GroupsBackend {
  constructor(private readonly transport: Transport) {}

  classic(group: string, body: ClassicMemberRequest): Promise<ClassicMemberResponse> {
    return this.transport.json({ method: 'POST', path: path`/v1/groups/${group}/classic`, json: body });
  }

  heartbeat(group: string, body: HeartbeatRequest): Promise<HeartbeatResponse> {
    return this.transport.json({ method: 'POST', path: path`/v1/groups/${group}/heartbeat`, json: body });
  }

  async commit(
    group: string,
    member: { memberId: string; memberEpoch: number } | null,
    offsets: OffsetToCommit[],
  ): Promise<OffsetCommitResult[]> {
    const { results } = await this.transport.json<{ results: OffsetCommitResult[] }>({
      method: 'POST',
      path: path`/v1/groups/${group}/offsets`,
      json: { ...(member ?? {}), offsets },
    });
    return results;
  }

  async offsets(group: string): Promise<CommittedOffset[]> {
    const { offsets } = await this.transport.json<{ offsets: CommittedOffset[] }>({
      method: 'GET',
      path: path`/v1/groups/${group}/offsets`,
    });
    return offsets;
  }

  async deleteOffsets(group: string, topic: string, partitions: number[]): Promise<OffsetCommitResult[]> {
    const { results } = await this.transport.json<{ results: OffsetCommitResult[] }>({
      method: 'DELETE',
      path: path`/v1/groups/${group}/offsets`,
      query: { topic, partitions: partitions.join(',') },
    });
    return results;
  }

  async list(): Promise<GroupSummary[]> {
    const { groups } = await this.transport.json<{ groups: GroupSummary[] }>({
      method: 'GET',
      path: '/v1/groups',
    });
    return groups;
  }

  describe(group: string): Promise<GroupDescription> {
    return this.transport.json({ method: 'GET', path: path`/v1/groups/${group}` });
  }

  async delete(group: string): Promise<void> {
    await this.transport.send({ method: 'DELETE', path: path`/v1/groups/${group}` });
  }
}
