/**
 * A built topology: processor nodes named as Kafka Streams names them (KSTREAM-FILTER-0000000001),
 * their stores, and the sub-topologies they fall into. Nodes joined by an edge or by a shared store
 * belong to one sub-topology; a repartition topic ends one and starts another, so a task
 * (sub-topology × partition) only ever reads its own input partitions and its own state.
 */
import type { Processor, SerdePair, StoreSpec } from './processor.js';

export type { StoreKind, StoreSpec } from './processor.js';

export interface TopicRef {
  name: string;
  /** Internal topics (repartition) are prefixed with the application id at run time. */
  internal: boolean;
}

export interface NodeSpec {
  name: string;
  parents: string[];
  stores: string[];
  create: () => Processor;
  /** Set on sources: the topics read and how their records decode. */
  source?: { topics: TopicRef[]; serdes: SerdePair };
  /** Set on sinks. */
  sink?: TopicRef;
}

export interface SubTopology {
  id: number;
  nodes: NodeSpec[];
  sources: TopicRef[];
  sinks: TopicRef[];
  stores: string[];
}

export class Topology {
  readonly subTopologies: SubTopology[];

  constructor(
    readonly nodes: NodeSpec[],
    readonly stores: Map<string, StoreSpec>,
  ) {
    this.subTopologies = split(nodes);
  }

  /** The sub-topology that reads `topic` (after internal names are resolved by `resolve`). */
  subTopologyOf(topic: string, resolve: (t: TopicRef) => string): SubTopology | undefined {
    return this.subTopologies.find((s) => s.sources.some((t) => resolve(t) === topic));
  }

  /** Internal topics the application needs created. */
  internalTopics(): string[] {
    return [
      ...new Set(this.subTopologies.flatMap((s) => s.sources.filter((t) => t.internal).map((t) => t.name))),
    ];
  }

  /** Kafka's TopologyDescription, as text: sub-topologies, their nodes, topics and stores. */
  describe(): string {
    const lines = ['Topologies:'];
    for (const sub of this.subTopologies) {
      lines.push(`   Sub-topology: ${sub.id}`);
      for (const node of sub.nodes) {
        const children = this.nodes.filter((n) => n.parents.includes(node.name)).map((n) => n.name);
        const what = node.source
          ? `Source: ${node.name} (topics: [${node.source.topics.map((t) => t.name).join(', ')}])`
          : node.sink
            ? `Sink: ${node.name} (topic: ${node.sink.name})`
            : `Processor: ${node.name} (stores: [${node.stores.join(', ')}])`;
        lines.push(`    ${what}`);
        lines.push(
          node.sink ? `      <-- ${node.parents.join(', ')}` : `      --> ${children.join(', ') || 'none'}`,
        );
      }
    }
    return lines.join('\n');
  }
}

/** Connected components over edges and shared stores, numbered by their first node. */
const split = (nodes: NodeSpec[]): SubTopology[] => {
  const root = new Map<string, string>(nodes.map((n) => [n.name, n.name]));
  const find = (name: string): string => {
    let r = name;
    while (root.get(r) !== r) r = root.get(r) ?? r;
    root.set(name, r);
    return r;
  };
  const union = (a: string, b: string): void => {
    const [ra, rb] = [find(a), find(b)];
    const order = nodes.findIndex((n) => n.name === ra) <= nodes.findIndex((n) => n.name === rb);
    root.set(order ? rb : ra, order ? ra : rb);
  };
  const storeOwner = new Map<string, string>();
  for (const node of nodes) {
    for (const parent of node.parents) union(node.name, parent);
    for (const store of node.stores) {
      const owner = storeOwner.get(store);
      if (owner === undefined) storeOwner.set(store, node.name);
      else union(owner, node.name);
    }
  }
  const groups = new Map<string, NodeSpec[]>();
  for (const node of nodes) groups.set(find(node.name), [...(groups.get(find(node.name)) ?? []), node]);
  return [...groups.values()].map((members, id) => ({
    id,
    nodes: members,
    sources: members.flatMap((n) => n.source?.topics ?? []),
    sinks: members.flatMap((n) => (n.sink ? [n.sink] : [])),
    stores: [...new Set(members.flatMap((n) => n.stores))],
  }));
};
