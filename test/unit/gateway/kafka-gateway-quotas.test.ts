/**
 * Client quotas through the Kafka gateway: AlterClientQuotas/DescribeClientQuotas (keys 49/48) onto
 * Sluice's quota routes, each client's `client.id` sent to Sluice as its own, the throttle time put into
 * the Kafka response's throttleTimeMs, and CreateTopics over controller_mutation_rate refused with
 * THROTTLING_QUOTA_EXCEEDED (89) for that client only.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KafkaGateway } from '../../../gateway/server.js';
import { AlterClientQuotas, DescribeClientQuotas } from '../../../protocol/kafka/messages/client-quotas.js';
import { CreateTopics } from '../../../protocol/kafka/messages/create-topics.js';
import { kafkaWire } from '../../support/kafka-wire-client.js';
import type { KafkaWire } from '../../support/kafka-wire-client.js';
import { routerFetch } from '../../support/router-fetch.js';
import { memorySluice } from '../../support/log-support.js';

const open: { gateway: KafkaGateway; wires: KafkaWire[] }[] = [];
afterEach(async () => {
  for (const { gateway, wires } of open.splice(0)) {
    for (const w of wires) w.close();
    await gateway.close();
  }
});

const start = async () => {
  const { sluice } = memorySluice({ clientQuotas: {} });
  const gateway = new KafkaGateway({
    sluice: { url: 'http://sluice.test', fetch: routerFetch(sluice.router()) },
    port: 0,
    host: '127.0.0.1',
  });
  await gateway.listen();
  const entry = { gateway, wires: [] as KafkaWire[] };
  open.push(entry);
  const connect = async (clientId: string) => {
    const wire = await kafkaWire(gateway.bootstrap, clientId);
    entry.wires.push(wire);
    return wire;
  };
  return { sluice, connect };
};

const createTopic = (wire: KafkaWire, name: string, numPartitions: number) =>
  wire.send(CreateTopics, 7, {
    topics: [{ name, numPartitions, replicationFactor: -1, assignments: [], configs: [] }],
    timeoutMs: 10_000,
    validateOnly: false,
  });

describe('client quotas over the Kafka protocol', () => {
  it('alters and describes quotas as kafka-configs.sh --bootstrap-server does', async () => {
    const { connect, sluice } = await start();
    const admin = await connect('admin');
    const altered = await admin.send(AlterClientQuotas, 1, {
      entries: [
        {
          entity: [{ entityType: 'client-id', entityName: 'noisy' }],
          ops: [{ key: 'producer_byte_rate', value: 2048, remove: false }],
        },
        {
          entity: [{ entityType: 'user', entityName: null }],
          ops: [{ key: 'controller_mutation_rate', value: 5, remove: false }],
        },
      ],
      validateOnly: false,
    });
    expect(altered.entries.map((e: { errorCode: number }) => e.errorCode)).toEqual([0, 0]);
    expect(await sluice.quotas.configs.describe({})).toHaveLength(2);

    const byClient = await admin.send(DescribeClientQuotas, 1, {
      components: [{ entityType: 'client-id', matchType: 0, match: 'noisy' }],
      strict: false,
    });
    expect(byClient.errorCode).toBe(0);
    expect(byClient.entries).toEqual([
      {
        entity: [{ entityType: 'client-id', entityName: 'noisy' }],
        values: [{ key: 'producer_byte_rate', value: 2048 }],
      },
    ]);
    const anyUser = await admin.send(DescribeClientQuotas, 1, {
      components: [{ entityType: 'user', matchType: 2, match: null }],
      strict: true,
    });
    expect(anyUser.entries).toEqual([
      {
        entity: [{ entityType: 'user', entityName: null }],
        values: [{ key: 'controller_mutation_rate', value: 5 }],
      },
    ]);

    // Bad input: every entry carries INVALID_REQUEST and nothing is written.
    const bad = await admin.send(AlterClientQuotas, 1, {
      entries: [
        {
          entity: [{ entityType: 'client-id', entityName: 'x' }],
          ops: [{ key: 'producer_byte_rate', value: 1, remove: false }],
        },
        {
          entity: [{ entityType: 'topic', entityName: 't' }],
          ops: [{ key: 'producer_byte_rate', value: 1, remove: false }],
        },
      ],
      validateOnly: false,
    });
    expect(bad.entries.map((e: { errorCode: number }) => e.errorCode)).toEqual([42, 42]);
    expect(await sluice.quotas.configs.describe({})).toHaveLength(2);
  });

  it('puts the throttle time into the response and refuses a throttled client with error 89, its own only', async () => {
    const { connect, sluice } = await start();
    await sluice.quotas.configs.alter([
      { entity: { 'client-id': 'ci' }, ops: [{ key: 'controller_mutation_rate', value: 1 }] },
    ]);
    const ci = await connect('ci');
    const first = await createTopic(ci, 'a', 5);
    expect(first.topics[0].errorCode).toBe(0);
    expect(first.throttleTimeMs).toBe(4000);
    const second = await createTopic(ci, 'b', 1);
    expect(second.topics[0].errorCode).toBe(89);
    expect(second.throttleTimeMs).toBe(4000);
    // Another client through the same gateway is neither throttled nor held back.
    const other = await connect('other');
    const free = await createTopic(other, 'c', 1);
    expect(free.topics[0].errorCode).toBe(0);
    expect(free.throttleTimeMs).toBe(0);
    expect((await sluice.catalog.list()).map((t) => t.name).sort()).toEqual(['a', 'c']);
  });
});
