/**
 * A stream task: one sub-topology over one input partition (Kafka's task id `<subTopology>_<partition>`).
 * It decodes an input record with its source's serdes and pushes it depth-first through the nodes;
 * sinks hand encoded records to the collector and state changes wait in the task's stores until commit.
 */
import { SluiceError } from '../protocol/errors.js';
import type { Header, Processor, ProcessorContext, RecordCollector, StreamRecord } from './processor.js';
import { deserializeNullable } from './serdes.js';
import type { StateBackend } from './state/backend.js';
import { TaskStores } from './state/task-stores.js';
import type { NodeSpec, SubTopology, Topology, TopicRef } from './topology.js';

export interface InputRecord {
  topic: string;
  key: Uint8Array | null;
  value: Uint8Array | null;
  timestamp: number;
  headers: Header[];
}

export const taskIdOf = (subTopology: number, partition: number): string => `${subTopology}_${partition}`;

/** The full topic name: internal topics are `<application.id>-<name>`. */
export const topicNameOf = (applicationId: string, topic: TopicRef): string =>
  topic.internal ? `${applicationId}-${topic.name}` : topic.name;

interface Instance {
  spec: NodeSpec;
  processor: Processor;
  context: ProcessorContext;
}

export class StreamTask {
  readonly id: string;
  readonly stores: TaskStores;
  private readonly instances = new Map<string, Instance>();
  private readonly sourceByTopic = new Map<string, Instance>();

  constructor(
    topology: Topology,
    readonly subTopology: SubTopology,
    readonly partition: number,
    readonly applicationId: string,
    backend: StateBackend,
    private readonly collector: RecordCollector,
  ) {
    this.id = taskIdOf(subTopology.id, partition);
    this.stores = new TaskStores(backend, this.id);
    const children = new Map<string, string[]>();
    for (const node of topology.nodes)
      for (const p of node.parents) children.set(p, [...(children.get(p) ?? []), node.name]);
    for (const spec of subTopology.nodes) {
      const kids = children.get(spec.name) ?? [];
      const context: ProcessorContext = {
        taskId: this.id,
        stores: this.stores,
        collector: this.collector,
        topicName: (name, internal) => topicNameOf(applicationId, { name, internal }),
        forward: async (record, child) => {
          for (const kid of child === undefined ? kids : [child]) {
            const next = this.instances.get(kid);
            if (!next)
              throw new SluiceError(
                'UNKNOWN_SERVER_ERROR',
                `${spec.name} forwards to ${kid}, which is not in sub-topology ${subTopology.id}`,
              );
            await next.processor.process(record, next.context);
          }
        },
      };
      const instance = { spec, processor: spec.create(), context };
      this.instances.set(spec.name, instance);
      for (const t of spec.source?.topics ?? [])
        this.sourceByTopic.set(topicNameOf(applicationId, t), instance);
    }
  }

  /** Topics (full names) this task reads, one partition each. */
  inputTopics(): string[] {
    return [...this.sourceByTopic.keys()];
  }

  async process(input: InputRecord): Promise<void> {
    const source = this.sourceByTopic.get(input.topic);
    if (!source?.spec.source)
      throw new SluiceError('UNKNOWN_TOPIC_OR_PARTITION', `task ${this.id} does not read ${input.topic}`);
    const { keySerde, valueSerde } = source.spec.source.serdes;
    const record: StreamRecord = {
      key: deserializeNullable(keySerde, input.key),
      value: deserializeNullable(valueSerde, input.value),
      timestamp: input.timestamp,
      headers: input.headers,
    };
    await source.processor.process(record, source.context);
  }
}
