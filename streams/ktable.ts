/** KTable: a changelog stream, the latest value per key. */
import { SluiceError } from '../protocol/errors.js';
import type { Graph } from './graph.js';
import { KStream } from './kstream.js';
import type { Named, Suppressed } from './options.js';
import type { ValueGetter } from './processors/aggregate.js';
import { filteredGetter, mappedGetter } from './processors/aggregate.js';
import type { Joiner, TableJoinKind } from './processors/joins.js';
import { joinedGetter, tableTableJoinProcessor } from './processors/joins.js';
import * as ops from './processors/stateless.js';
import { suppressProcessor } from './processors/windowed.js';
import type { Serde } from './serdes.js';
import type { StoreSpec } from './topology.js';

export interface TableState {
  graph: Graph;
  node: string;
  keySerde: Serde<unknown> | undefined;
  valueSerde: Serde<unknown> | undefined;
  /** How joins read this table's current value; windowed tables have none. */
  getter?: ValueGetter;
  /** Set on a windowed aggregation's table: its store and grace, which suppress needs. */
  windowed?: { spec: StoreSpec; graceMs: number };
}

export class KTable<K, V> {
  /** @internal */
  constructor(readonly state: TableState) {}

  filter(predicate: (key: K, value: V) => boolean, named?: Named): KTable<K, V> {
    return this.filtered(predicate as never, true, named);
  }

  filterNot(predicate: (key: K, value: V) => boolean, named?: Named): KTable<K, V> {
    return this.filtered(predicate as never, false, named);
  }

  mapValues<V2>(mapper: (value: V, key: K) => V2, named?: Named): KTable<K, V2> {
    const { graph, getter } = this.state;
    const node = graph.add(named?.name ?? graph.name('KTABLE-MAPVALUES'), [this.state.node], () =>
      ops.tableMapValuesProcessor(mapper as never),
    );
    return new KTable({
      graph,
      node,
      keySerde: this.state.keySerde,
      valueSerde: undefined,
      ...(getter ? { getter: mappedGetter(getter, mapper as never) } : {}),
    });
  }

  toStream(named?: Named): KStream<K, V> {
    const { graph } = this.state;
    const node = graph.add(
      named?.name ?? graph.name('KTABLE-TOSTREAM'),
      [this.state.node],
      ops.toStreamProcessor,
    );
    return new KStream({
      graph,
      node,
      keySerde: this.state.keySerde,
      valueSerde: this.state.valueSerde,
      repartitionRequired: false,
    });
  }

  /** Holds each window's result until the window closes, then emits it once (windowed tables only). */
  suppress(_suppressed: Suppressed, named?: Named): KTable<K, V> {
    const { graph, windowed } = this.state;
    if (!windowed)
      throw new SluiceError(
        'INVALID_CONFIG',
        'suppress(untilWindowCloses) needs a windowed aggregation upstream',
      );
    const name = named?.name ?? graph.name('KTABLE-SUPPRESS');
    const buffer = graph.store(
      'key-value',
      undefined,
      name,
      windowed.spec.keySerde,
      windowed.spec.valueSerde,
    );
    buffer.internal = true;
    const node = graph.add(
      name,
      [this.state.node],
      () => suppressProcessor(buffer, windowed.spec, windowed.graceMs),
      { stores: [buffer.name] },
    );
    return new KTable({ ...this.state, node });
  }

  join<VO, VR>(other: KTable<K, VO>, joiner: (value: V, otherValue: VO) => VR): KTable<K, VR> {
    return this.tableJoin(other, joiner as Joiner, 'inner');
  }

  leftJoin<VO, VR>(other: KTable<K, VO>, joiner: (value: V, otherValue: VO | null) => VR): KTable<K, VR> {
    return this.tableJoin(other, joiner as Joiner, 'left');
  }

  outerJoin<VO, VR>(
    other: KTable<K, VO>,
    joiner: (value: V | null, otherValue: VO | null) => VR,
  ): KTable<K, VR> {
    return this.tableJoin(other, joiner as Joiner, 'outer');
  }

  /** @internal */
  getter(): ValueGetter {
    if (!this.state.getter) throw new SluiceError('INVALID_CONFIG', 'a windowed table cannot be joined');
    return this.state.getter;
  }

  private filtered(
    predicate: (k: unknown, v: unknown) => boolean,
    keepWhen: boolean,
    named?: Named,
  ): KTable<K, V> {
    const { graph, getter } = this.state;
    const node = graph.add(named?.name ?? graph.name('KTABLE-FILTER'), [this.state.node], () =>
      ops.tableFilterProcessor(predicate, keepWhen),
    );
    return new KTable({
      ...this.state,
      node,
      ...(getter ? { getter: filteredGetter(getter, predicate, keepWhen) } : {}),
    });
  }

  private tableJoin(other: KTable<K, unknown>, joiner: Joiner, kind: TableJoinKind): KTable<K, never> {
    const { graph } = this.state;
    const [mine, theirs] = [this.getter(), other.getter()];
    const stores = [...mine.stores, ...theirs.stores];
    const prefix =
      kind === 'inner' ? 'KTABLE-JOIN' : kind === 'left' ? 'KTABLE-LEFTJOIN' : 'KTABLE-OUTERJOIN';
    const thisNode = graph.add(
      graph.name(`${prefix}THIS`),
      [this.state.node],
      () => tableTableJoinProcessor(theirs, joiner, kind, true),
      { stores },
    );
    const otherNode = graph.add(
      graph.name(`${prefix}OTHER`),
      [other.state.node],
      () => tableTableJoinProcessor(mine, joiner, kind, false),
      { stores },
    );
    const node = graph.add(graph.name('KTABLE-MERGE'), [thisNode, otherNode], ops.passThrough);
    return new KTable({
      graph,
      node,
      keySerde: this.state.keySerde,
      valueSerde: undefined,
      getter: joinedGetter(mine, theirs, joiner, kind),
    });
  }
}
