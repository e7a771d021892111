/**
 * REST parity with Kafka Connect: every path of /v1/connect, its bodies and its status codes, on the
 * in-process router over in-memory storage (the same routes serve Lambda and the local stack).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { memorySluice } from '../../support/log-support.js';

const S3 = 'io.sluice.connect.s3.S3SinkConnector';
const JDBC = 'io.sluice.connect.jdbc.JdbcSourceConnector';

const s3Config = (extra: Record<string, string> = {}) => ({
  'connector.class': S3,
  topics: 'orders',
  's3.bucket.name': 'archive',
  'flush.size': '100',
  'tasks.max': '2',
  ...extra,
});

const jdbcConfig = {
  'connector.class': JDBC,
  'connection.url': 'postgresql://127.0.0.1:5432/shop',
  'table.whitelist': 'orders,customers,items',
  mode: 'incrementing',
  'incrementing.column.name': 'id',
  'topic.prefix': 'pg-',
  'tasks.max': '2',
};

let http: ReturnType<typeof memorySluice>['http'];
let sluice: ReturnType<typeof memorySluice>['sluice'];
const C = '/v1/connect/connectors';

beforeEach(() => {
  ({ http, sluice } = memorySluice());
});

const create = (name: string, config: Record<string, string>) => http('POST', C, { name, config });

describe('connectors collection', () => {
  it('POST creates (201, ConnectorInfo, Location), a second POST is 409, GET lists names sorted', async () => {
    const created = await create('s3-archive', s3Config());
    expect(created.status).toBe(201);
    expect(created.headers?.['location']).toBe('/v1/connect/connectors/s3-archive');
    expect(created.body).toEqual({
      name: 's3-archive',
      config: { ...s3Config(), name: 's3-archive' },
      tasks: [],
      type: 'sink',
    });
    const again = await create('s3-archive', s3Config());
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      error_code: 409,
      error: { code: 'ALREADY_EXISTS', message: 'Connector s3-archive already exists', retriable: false },
    });
    expect((await create('pg', jdbcConfig)).status).toBe(201);
    const list = await http('GET', C);
    expect(list).toMatchObject({ status: 200, body: ['pg', 's3-archive'] });
  });

  it('GET ?expand=status,info answers with both per connector', async () => {
    await create('pg', jdbcConfig);
    const expanded = await http('GET', `${C}?expand=status,info`);
    expect(expanded.status).toBe(200);
    expect(expanded.body).toEqual({
      pg: {
        status: {
          name: 'pg',
          connector: { state: 'RUNNING', worker_id: 'sluice-connect' },
          tasks: [
            { id: 0, state: 'UNASSIGNED', worker_id: 'sluice-connect' },
            { id: 1, state: 'UNASSIGNED', worker_id: 'sluice-connect' },
          ],
          type: 'source',
        },
        info: {
          name: 'pg',
          config: { ...jdbcConfig, name: 'pg' },
          tasks: [
            { connector: 'pg', task: 0 },
            { connector: 'pg', task: 1 },
          ],
          type: 'source',
        },
      },
    });
    expect(Object.keys((await http('GET', `${C}?expand=info`)).body.pg)).toEqual(['info']);
    expect((await http('GET', `${C}?expand=bogus`)).status).toBe(400);
  });

  it('rejects an invalid config with 400 INVALID_CONFIG listing every error, and stores nothing', async () => {
    const bad = await create('bad', { 'connector.class': S3, 'flush.size': 'ten', topics: 'orders' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('INVALID_CONFIG');
    expect(bad.body.error.message).toContain('contains the following 2 error(s)');
    expect(bad.body.error.message).toContain('s3.bucket.name');
    expect(bad.body.error.message).toContain('flush.size');
    const unknown = await create('x', { 'connector.class': 'com.example.Nope' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('com.example.Nope');
    expect((await http('POST', C, { config: s3Config() })).status).toBe(400);
    expect((await http('POST', C, { name: 'n', config: { ...s3Config(), name: 'other' } })).status).toBe(400);
    expect((await http('GET', C)).body).toEqual([]);
  });
});

describe('one connector', () => {
  beforeEach(async () => {
    expect((await create('pg', jdbcConfig)).status).toBe(201);
  });

  it('GET info, config, tasks and task status', async () => {
    expect((await http('GET', `${C}/pg`)).body).toEqual({
      name: 'pg',
      config: { ...jdbcConfig, name: 'pg' },
      tasks: [
        { connector: 'pg', task: 0 },
        { connector: 'pg', task: 1 },
      ],
      type: 'source',
    });
    expect((await http('GET', `${C}/pg/config`)).body).toEqual({ ...jdbcConfig, name: 'pg' });
    const tasks = await http('GET', `${C}/pg/tasks`);
    expect(
      tasks.body.map((t: { id: unknown; config: Record<string, string> }) => [t.id, t.config['tables']]),
    ).toEqual([
      [{ connector: 'pg', task: 0 }, 'orders,items'],
      [{ connector: 'pg', task: 1 }, 'customers'],
    ]);
    expect(await http('GET', `${C}/pg/tasks/1/status`)).toMatchObject({
      status: 200,
      body: { id: 1, state: 'UNASSIGNED', worker_id: 'sluice-connect' },
    });
    expect((await http('GET', `${C}/pg/tasks/2/status`)).status).toBe(404);
    expect((await http('GET', `${C}/pg/tasks/x/status`)).status).toBe(400);
    expect(await http('GET', `${C}/nope`)).toMatchObject({ status: 404, body: { error_code: 404 } });
    expect((await http('GET', `${C}/nope/status`)).status).toBe(404);
  });

  it('PUT config: 200 on update (tasks follow tasks.max), 201 on create, 400 on a changed type', async () => {
    const updated = await http('PUT', `${C}/pg/config`, { ...jdbcConfig, 'tasks.max': '3' });
    expect(updated.status).toBe(200);
    expect(updated.body.tasks).toHaveLength(3);
    const fresh = await http('PUT', `${C}/archive/config`, s3Config());
    expect(fresh.status).toBe(201);
    expect(fresh.body).toMatchObject({ name: 'archive', type: 'sink', tasks: [] });
    expect((await http('PUT', `${C}/pg/config`, s3Config())).status).toBe(400);
    expect((await http('PUT', `${C}/pg/config`, { ...jdbcConfig, mode: 'sometimes' })).status).toBe(400);
    expect((await http('GET', `${C}/pg/config`)).body['tasks.max']).toBe('3');
  });

  it('pause and resume are 202, stop is 204, and status follows', async () => {
    expect((await http('PUT', `${C}/pg/pause`)).status).toBe(202);
    const paused = (await http('GET', `${C}/pg/status`)).body;
    expect(paused.connector.state).toBe('PAUSED');
    expect(paused.tasks.map((t: { state: string }) => t.state)).toEqual(['PAUSED', 'PAUSED']);
    expect((await http('PUT', `${C}/pg/resume`)).status).toBe(202);
    expect((await http('GET', `${C}/pg/status`)).body.connector.state).toBe('RUNNING');
    expect((await http('PUT', `${C}/pg/stop`)).status).toBe(204);
    const stopped = (await http('GET', `${C}/pg/status`)).body;
    expect(stopped).toEqual({
      name: 'pg',
      connector: { state: 'STOPPED', worker_id: 'sluice-connect' },
      tasks: [],
      type: 'source',
    });
    expect((await http('PUT', `${C}/nope/pause`)).status).toBe(404);
    expect((await http('PUT', `${C}/nope/stop`)).status).toBe(404);
  });

  it('restart: 204 without flags, 202 with the RESTARTING status with includeTasks, onlyFailed filters', async () => {
    expect((await http('POST', `${C}/pg/restart`)).status).toBe(204);
    const all = await http('POST', `${C}/pg/restart?includeTasks=true`);
    expect(all.status).toBe(202);
    expect(all.body).toEqual({
      name: 'pg',
      connector: { state: 'RESTARTING', worker_id: 'sluice-connect' },
      tasks: [
        { id: 0, state: 'RESTARTING', worker_id: 'sluice-connect' },
        { id: 1, state: 'RESTARTING', worker_id: 'sluice-connect' },
      ],
      type: 'source',
    });
    const onlyFailed = await http('POST', `${C}/pg/restart?includeTasks=true&onlyFailed=true`);
    expect(onlyFailed.status).toBe(202);
    // Nothing failed: the connector keeps RUNNING and the RESTARTING tasks are left as they are.
    expect(onlyFailed.body.connector.state).toBe('RUNNING');
    expect(onlyFailed.body.tasks.map((t: { state: string }) => t.state)).toEqual([
      'RESTARTING',
      'RESTARTING',
    ]);
    expect((await http('POST', `${C}/pg/restart?includeTasks=maybe`)).status).toBe(400);
    expect((await http('POST', `${C}/pg/tasks/0/restart`)).status).toBe(204);
    expect((await http('POST', `${C}/pg/tasks/9/restart`)).status).toBe(404);
    expect((await http('POST', `${C}/nope/restart`)).status).toBe(404);
  });

  it('offsets: GET always, PATCH and DELETE only while STOPPED (400 otherwise)', async () => {
    expect(await http('GET', `${C}/pg/offsets`)).toMatchObject({ status: 200, body: { offsets: [] } });
    const alter = { offsets: [{ partition: { table: 'orders' }, offset: { incrementing: 41 } }] };
    const refused = await http('PATCH', `${C}/pg/offsets`, alter);
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('Connectors must be in the STOPPED state');
    expect((await http('DELETE', `${C}/pg/offsets`)).status).toBe(400);
    await http('PUT', `${C}/pg/stop`);
    expect(await http('PATCH', `${C}/pg/offsets`, alter)).toEqual(
      expect.objectContaining({
        status: 200,
        body: { message: 'The offsets for this connector have been altered successfully' },
      }),
    );
    expect((await http('GET', `${C}/pg/offsets`)).body).toEqual(alter);
    expect((await http('PATCH', `${C}/pg/offsets`, { offsets: [] })).status).toBe(400);
    expect((await http('PATCH', `${C}/pg/offsets`, { offsets: [{ partition: 1, offset: {} }] })).status).toBe(
      400,
    );
    expect((await http('DELETE', `${C}/pg/offsets`)).body).toEqual({
      message: 'The offsets for this connector have been reset successfully',
    });
    expect((await http('GET', `${C}/pg/offsets`)).body).toEqual({ offsets: [] });
  });

  it('sink offsets are the connect-{name} group offsets, in Connect shape', async () => {
    await sluice.catalog.create({ name: 'orders', partitions: 2 });
    await create('archive', s3Config());
    await http('PUT', `${C}/archive/stop`);
    const alter = {
      offsets: [{ partition: { kafka_topic: 'orders', kafka_partition: 1 }, offset: { kafka_offset: 7 } }],
    };
    expect((await http('PATCH', `${C}/archive/offsets`, alter)).status).toBe(200);
    expect((await http('GET', `${C}/archive/offsets`)).body).toEqual(alter);
    expect((await http('GET', '/v1/groups/connect-archive/offsets')).body.offsets).toEqual([
      { topic: 'orders', partition: 1, offset: 7, metadata: '' },
    ]);
    const bad = {
      offsets: [{ partition: { kafka_topic: 'orders', kafka_partition: 0 }, offset: { kafka_offset: -1 } }],
    };
    expect((await http('PATCH', `${C}/archive/offsets`, bad)).status).toBe(400);
    expect((await http('DELETE', `${C}/archive/offsets`)).status).toBe(200);
    expect((await http('GET', `${C}/archive/offsets`)).body).toEqual({ offsets: [] });
  });

  it('DELETE is 204, then 404', async () => {
    expect((await http('DELETE', `${C}/pg`)).status).toBe(204);
    expect((await http('DELETE', `${C}/pg`)).status).toBe(404);
    expect((await http('GET', C)).body).toEqual([]);
  });

  it('KIP-980 initial_state creates a stopped connector', async () => {
    const created = await http('POST', C, { name: 'later', config: jdbcConfig, initial_state: 'STOPPED' });
    expect(created.status).toBe(201);
    expect((await http('GET', `${C}/later/status`)).body.connector.state).toBe('STOPPED');
    expect((await http('POST', C, { name: 'x', config: jdbcConfig, initial_state: 'ASLEEP' })).status).toBe(
      400,
    );
  });
});

describe('connector plugins', () => {
  it('lists plugins, and with connectorsOnly=false the transforms, predicates and converters', async () => {
    const plugins = await http('GET', '/v1/connect/connector-plugins');
    expect(plugins.status).toBe(200);
    expect(plugins.body).toEqual([
      { class: 'io.sluice.connect.s3.S3SinkConnector', type: 'sink', version: '0.1.0' },
      { class: 'io.sluice.connect.jdbc.JdbcSourceConnector', type: 'source', version: '0.1.0' },
      { class: 'io.sluice.connect.jdbc.JdbcSinkConnector', type: 'sink', version: '0.1.0' },
      { class: 'io.sluice.connect.http.HttpSinkConnector', type: 'sink', version: '0.1.0' },
      { class: 'io.sluice.connect.dynamodb.DynamoDbSourceConnector', type: 'source', version: '0.1.0' },
      { class: 'io.sluice.connect.aws.lambda.AwsLambdaSinkConnector', type: 'sink', version: '0.1.0' },
    ]);
    const all = (await http('GET', '/v1/connect/connector-plugins?connectorsOnly=false')).body as {
      type: string;
    }[];
    expect(all.filter((p) => p.type === 'transformation')).toHaveLength(12);
    expect(all.filter((p) => p.type === 'predicate')).toHaveLength(3);
    expect(all.filter((p) => p.type === 'converter')).toHaveLength(3);
  });

  it('validate answers in the ConfigInfos shape with error_count and per-value errors', async () => {
    const answer = await http('PUT', '/v1/connect/connector-plugins/S3SinkConnector/config/validate', {
      'connector.class': S3,
      name: 'a',
      topics: 'orders',
      'flush.size': '0',
      transforms: 'route',
      'transforms.route.type': 'org.apache.kafka.connect.transforms.RegexRouter',
      'transforms.route.regex': '(',
    });
    expect(answer.status).toBe(200);
    expect(answer.body.name).toBe(S3);
    const errors = Object.fromEntries(
      (answer.body.configs as { value: { name: string; errors: string[] } }[])
        .filter((c) => c.value.errors.length > 0)
        .map((c) => [c.value.name, c.value.errors.length]),
    );
    expect(errors).toEqual({
      's3.bucket.name': 1,
      'flush.size': 1,
      'transforms.route.regex': 1,
      'transforms.route.replacement': 1,
    });
    expect(answer.body.error_count).toBe(4);
    const flush = answer.body.configs.find((c: { value: { name: string } }) => c.value.name === 'flush.size');
    expect(flush.definition).toMatchObject({
      name: 'flush.size',
      type: 'INT',
      required: true,
      default_value: null,
    });
    expect(flush.value).toEqual({
      name: 'flush.size',
      value: '0',
      recommended_values: [],
      errors: ['Invalid value 0 for configuration flush.size: Value must be at least 1'],
      visible: true,
    });
    expect(answer.body.groups).toContain('Transforms: route');
    expect((await http('PUT', '/v1/connect/connector-plugins/Nope/config/validate', {})).status).toBe(404);
    const mismatch = await http('PUT', '/v1/connect/connector-plugins/S3SinkConnector/config/validate', {
      'connector.class': JDBC,
    });
    expect(mismatch.status).toBe(400);
  });

  it('unknown methods are 405 and unknown query parameters 400', async () => {
    expect((await http('PATCH', C)).status).toBe(405);
    expect((await http('GET', `${C}?limit=3`)).status).toBe(400);
  });
});
