/**
 * Issue 23, classes 3-5 on Connect: one request cannot stop the stack (untrusted regexes in RE2,
 * numeric configs typed and bounded as Kafka's ConfigDef types them, tasks.max bounded), limits fail
 * up front with a 400 that names them, and every Connect error carries Kafka Connect's top-level
 * `error_code` and `message`. Each refused request changes nothing, and /v1/health answers during
 * and after the request (the router shares one event loop with everything else).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { CONNECT_LIMITS } from '../../../connect/connector-config.js';
import { TOPIC_REGEX_LIMITS, compileTopicRegex } from '../../../connect/topic-regex.js';
import { buildChain } from '../../../connect/transforms/chain.js';
import { memorySluice } from '../../support/log-support.js';

const S3 = 'io.sluice.connect.s3.S3SinkConnector';
const C = '/v1/connect/connectors';
const VALIDATE = '/v1/connect/connector-plugins/S3SinkConnector/config/validate';
const s3 = (extra: Record<string, string> = {}) => ({
  'connector.class': S3,
  topics: 'orders',
  's3.bucket.name': 'archive',
  'flush.size': '100',
  ...extra,
});

let s: ReturnType<typeof memorySluice>;
beforeEach(() => {
  s = memorySluice();
});

/** Sends `request` and, while it runs, /v1/health; both answers and how long health waited. */
const withHealth = async <T>(request: () => Promise<T>) => {
  const started = Date.now();
  const pending = request();
  const health = await s.http('GET', '/v1/health');
  const healthMs = Date.now() - started;
  const answer = await pending;
  const after = await s.http('GET', '/v1/health');
  return { answer, health: health.status, healthMs, after: after.status };
};

const connectors = async () => (await s.http('GET', C)).body as string[];

describe('untrusted regular expressions run in linear time (RE2)', () => {
  const evil = '(a+)+';
  const name = `${'a'.repeat(40)}!`;

  it.each([
    [
      'topics.regex, its DLQ check at validate',
      VALIDATE,
      s3({ topics: '', 'topics.regex': evil, 'errors.deadletterqueue.topic.name': name }),
    ],
    [
      'RegexRouter at validate',
      VALIDATE,
      s3({
        transforms: 'r',
        'transforms.r.type': 'org.apache.kafka.connect.transforms.RegexRouter',
        'transforms.r.regex': evil,
        'transforms.r.replacement': 'x',
      }),
    ],
  ])('%s: answers at once and health answers during and after', async (_, path, config) => {
    const { answer, health, healthMs, after } = await withHealth(() => s.http('PUT', path, config));
    expect(answer.status).toBe(200);
    expect([health, after]).toEqual([200, 200]);
    expect(healthMs).toBeLessThan(2_000);
  });

  it.each([
    [
      'RegexRouter',
      {
        'transforms.r.type': 'org.apache.kafka.connect.transforms.RegexRouter',
        'transforms.r.regex': evil,
        'transforms.r.replacement': 'x',
      },
    ],
    [
      'TopicNameMatches',
      {
        'transforms.r.type': 'org.apache.kafka.connect.transforms.Filter',
        'transforms.r.predicate': 'p',
        predicates: 'p',
        'predicates.p.type': 'org.apache.kafka.connect.transforms.predicates.TopicNameMatches',
        'predicates.p.pattern': evil,
      },
    ],
  ])('%s runs (a+)+ against a 249-character topic name at once', (_, config) => {
    const chain = buildChain({ transforms: 'r', ...config });
    const topic = `${'a'.repeat(248)}.`;
    const started = Date.now();
    const out = chain({ topic, timestamp: 0, key: null, value: 'v', headers: [] });
    expect(out?.topic).toBe(topic);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('matches whole names as Java does, and RegexRouter replaces with $1', () => {
    const r = compileTopicRegex('orders-(.*)');
    expect([r.matches('orders-1'), r.matches('x-orders-1'), r.matches('orders')]).toEqual([
      true,
      false,
      false,
    ]);
    expect(r.replaceFirst('orders-eu', 'copy-$1')).toBe('copy-eu');
    expect(compileTopicRegex(evil).matches(name)).toBe(false);
  });

  it.each([
    ['too long', 'a'.repeat(TOPIC_REGEX_LIMITS.maxChars + 1), /the limit is 1000/],
    ['repetitions adding up', '[a-z]{1,600}[a-z]{1,600}', /repetition counts add up to more than 1000/],
    ['a huge program', '[a-z]{1,1000}', /compiles to 2001 instructions; the limit is 2000/],
    ['a backreference', '(a)\\1', /invalid escape sequence/],
  ])('refuses a pattern %s with its reason', (_, pattern, reason) => {
    expect(() => compileTopicRegex(pattern)).toThrow(reason);
  });

  it('refuses a DLQ that is no topic name (1000 characters) as the invalid value it is', async () => {
    const reply = await s.http('POST', C, {
      name: 'sink',
      config: s3({ 'errors.deadletterqueue.topic.name': 'a'.repeat(1000) }),
    });
    expect([reply.status, reply.body.error_code]).toEqual([400, 400]);
    expect(reply.body.message).toMatch(/errors\.deadletterqueue\.topic\.name: .*must be a topic name/);
    expect(await connectors()).toEqual([]);
  });
});

describe('numeric configs typed and bounded as ConfigDef types them', () => {
  it.each([
    ['tasks.max', '2147483648', 'Not a number of type INT'],
    ['tasks.max', '100000000', `Value must be between 1 and ${CONNECT_LIMITS.maxTasks}`],
    ['tasks.max', '65', `Value must be between 1 and ${CONNECT_LIMITS.maxTasks}`],
    ['tasks.max', '0', `Value must be between 1 and ${CONNECT_LIMITS.maxTasks}`],
    ['tasks.max', '1e3', 'Not a number of type INT'],
    ['flush.size', '2147483648', 'Not a number of type INT'],
    ['flush.size', '-2147483649', 'Not a number of type INT'],
    ['errors.retry.timeout', '100000000000000000000', 'Not a number of type LONG'],
    ['rotate.interval.ms', '9007199254740992', 'Not a number of type LONG'],
  ])('%s=%s → 400 (%s), nothing created, health answers', async (key, value, message) => {
    const { answer, health, after } = await withHealth(() =>
      s.http('POST', C, { name: 'sink', config: s3({ [key]: value }) }),
    );
    expect([answer.status, answer.body.error_code, answer.body.error.code]).toEqual([
      400,
      400,
      'INVALID_CONFIG',
    ]);
    expect(answer.body.message).toContain(`${key}: Invalid value ${value} for configuration`);
    expect(answer.body.message).toContain(message);
    expect([health, after]).toEqual([200, 200]);
    expect(await connectors()).toEqual([]);
  });

  it(`accepts tasks.max=${CONNECT_LIMITS.maxTasks} and 2147483647 as an INT (then the range refuses it)`, async () => {
    expect((await s.http('POST', C, { name: 'sink', config: s3({ 'tasks.max': '64' }) })).status).toBe(201);
    expect((await s.http('GET', `${C}/sink/tasks`)).body).toHaveLength(64);
    const max = await s.http('PUT', VALIDATE, s3({ 'tasks.max': '2147483647' }));
    const tasks = max.body.configs.find((c: { value: { name: string } }) => c.value.name === 'tasks.max');
    expect(tasks.value.errors).toEqual([
      `Invalid value 2147483647 for configuration tasks.max: Value must be between 1 and ${CONNECT_LIMITS.maxTasks}`,
    ]);
  });
});

describe('limits that used to fail late fail up front', () => {
  const big = () => s3({ 'big.value': 'x'.repeat(600 * 1024) });

  it.each([
    ['POST create', 'POST', C, () => ({ name: 'sink', config: big() })],
    ['PUT config', 'PUT', `${C}/sink/config`, big],
    ['PUT validate', 'PUT', VALIDATE, big],
  ])('%s with a 600 KB config → 400 naming the limit, nothing stored', async (_, method, path, body) => {
    const reply = await s.http(method, path, body());
    expect([reply.status, reply.body.error_code, reply.body.error.code]).toEqual([
      400,
      400,
      'INVALID_CONFIG',
    ]);
    expect(reply.body.message).toMatch(/^Connector configuration is \d+ bytes; the limit is 65536 bytes$/);
    expect(await connectors()).toEqual([]);
  });

  it('refuses a name whose group id connect-{name} would pass 255 characters, and takes the longest that fits', async () => {
    const long = 'n'.repeat(CONNECT_LIMITS.maxNameChars + 1);
    const refused = await s.http('POST', C, { name: long, config: s3() });
    expect([refused.status, refused.body.error.code]).toEqual([400, 'INVALID_CONFIG']);
    expect(refused.body.message).toContain('must be 1-247 characters without / or controls');
    const viaPut = await s.http('PUT', `${C}/${long}/config`, s3());
    expect(viaPut.status).toBe(400);
    expect(await connectors()).toEqual([]);
    const fits = 'n'.repeat(CONNECT_LIMITS.maxNameChars);
    expect((await s.http('POST', C, { name: fits, config: s3() })).status).toBe(201);
    expect(`connect-${fits}`).toHaveLength(255);
  });
});

describe("Connect's error body", () => {
  it.each([
    ['unknown connector', 'GET', `${C}/nope`, undefined, 404],
    ['invalid config', 'POST', C, { name: 'x', config: { 'connector.class': S3 } }, 400],
    ['unknown plugin', 'PUT', '/v1/connect/connector-plugins/Nope/config/validate', {}, 404],
    ['malformed body', 'POST', C, 'not json', 400],
    ['unknown query parameter', 'GET', `${C}/nope/status`, undefined, 404],
  ])('%s: {"error_code": status, "message": …} at the top level', async (_, method, path, body, status) => {
    const reply = await s.http(method, path, body);
    expect(reply.status).toBe(status);
    expect(reply.body.error_code).toBe(status);
    expect(typeof reply.body.message).toBe('string');
    expect(reply.body.message).toBe(reply.body.error.message);
    expect(reply.body.message.length).toBeGreaterThan(0);
  });

  it('keeps the top-level message on a conflict', async () => {
    expect((await s.http('POST', C, { name: 'a', config: s3() })).status).toBe(201);
    const again = await s.http('POST', C, { name: 'a', config: s3() });
    expect(again.body).toMatchObject({ error_code: 409, message: 'Connector a already exists' });
  });
});
