/**
 * How a task's work becomes durable. At-least-once: outputs are acknowledged, then state is written,
 * then the group's offsets are committed, so a crash repeats work but never loses any.
 * Exactly-once lives in eos.ts.
 */
import type { GroupMember, Producer } from '../../sdk/index.js';
import type { SerializedRecord } from '../processor.js';
import type { TaskStores } from '../state/task-stores.js';
import type { TaskLease } from './lease.js';

export interface TaskOutput {
  topic: string;
  record: SerializedRecord;
}

export interface CommitInput {
  offsets: { topic: string; offset: number }[];
  outputs: TaskOutput[];
  stores: TaskStores;
}

export interface Committer {
  /** Takes the task over and returns where each input topic's partition resumes (absent: from the start). */
  start(topics: string[]): Promise<Map<string, number>>;
  commit(input: CommitInput): Promise<void>;
  /** Whether the pending work must be committed before more is added (transaction limits). */
  full(input: { stateWrites: number; outputBytes: number }): boolean;
}

/** Records per produce request: well under the API's 4 MiB body limit for ordinary records. */
export const PRODUCE_CHUNK = 500;

/** Outputs grouped by topic in first-appearance order, each topic's records in order, in chunks. */
export const outputChunks = (outputs: TaskOutput[]): { topic: string; records: SerializedRecord[] }[] => {
  const byTopic = new Map<string, SerializedRecord[]>();
  for (const { topic, record } of outputs) {
    let list = byTopic.get(topic);
    if (!list) byTopic.set(topic, (list = []));
    list.push(record);
  }
  return [...byTopic].flatMap(([topic, records]) =>
    Array.from({ length: Math.ceil(records.length / PRODUCE_CHUNK) }, (_, i) => ({
      topic,
      records: records.slice(i * PRODUCE_CHUNK, (i + 1) * PRODUCE_CHUNK),
    })),
  );
};

export const messagesOf = (records: SerializedRecord[]) =>
  records.map((r) => ({ key: r.key, value: r.value, timestamp: r.timestamp, headers: r.headers }));

export class AtLeastOnceCommitter implements Committer {
  /**
   * With a lease (state in the metadata table), state writes are fenced by the task's epoch, so a
   * zombie cannot overwrite the state of the instance that took its task over.
   */
  constructor(
    private readonly member: GroupMember,
    private readonly producer: Producer,
    private readonly partition: number,
    private readonly lease?: TaskLease,
  ) {}

  async start(topics: string[]): Promise<Map<string, number>> {
    await this.lease?.acquire();
    const positions = new Map<string, number>();
    for (const topic of topics) {
      const committed = (await this.member.committed(topic)).get(this.partition);
      if (committed !== undefined) positions.set(topic, committed);
    }
    return positions;
  }

  async commit({ offsets, outputs, stores }: CommitInput): Promise<void> {
    for (const { topic, records } of outputChunks(outputs))
      await this.producer.send({ topic, messages: messagesOf(records) });
    if (this.lease) {
      await this.lease.writeFenced(stores.pending());
      stores.committed();
    } else await stores.flush();
    await this.member.commit(offsets.map((o) => ({ ...o, partition: this.partition })));
  }

  full(): boolean {
    return false;
  }
}
