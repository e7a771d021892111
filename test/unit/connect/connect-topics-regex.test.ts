/** topics.regex: Connect's validate answers for topics / topics.regex, and which topics a pattern takes. */
import { describe, expect, it } from 'vitest';
import { validateConnectorConfig } from '../../../connect/connector-config.js';
import { HTTP_SINK } from '../../../connect/connectors/http-sink-plugin.js';
import { sinkTopicsOf } from '../../../connect/worker/sink-topics.js';

const base = { name: 'h', 'connector.class': HTTP_SINK.class, 'http.api.url': 'http://127.0.0.1:1/x' };
const errorsOf = (config: Record<string, string>) => {
  const infos = validateConnectorConfig(HTTP_SINK, { ...base, ...config });
  const of = (name: string) => infos.configs.find((c) => c.value.name === name)!.value.errors;
  return {
    count: infos.error_count,
    topics: of('topics'),
    regex: of('topics.regex'),
    dlq: of('errors.deadletterqueue.topic.name'),
  };
};

describe('topics and topics.regex validation (SinkConnectorConfig.validate)', () => {
  it('accepts exactly one of them', () => {
    expect(errorsOf({ topics: 'a,b' }).count).toBe(0);
    expect(errorsOf({ 'topics.regex': 'orders\\..*' }).count).toBe(0);
  });

  it('refuses both, and neither, on both settings', () => {
    const both = 'topics and topics.regex are mutually exclusive options, but both are set.';
    expect(errorsOf({ topics: 'a', 'topics.regex': 'a.*' })).toEqual({
      count: 2,
      topics: [both],
      regex: [both],
      dlq: [],
    });
    const none = 'Must configure one of topics or topics.regex';
    expect(errorsOf({})).toEqual({ count: 2, topics: [none], regex: [none], dlq: [] });
    expect(errorsOf({ topics: ' , ', 'topics.regex': '  ' })).toEqual({
      count: 2,
      topics: [none],
      regex: [none],
      dlq: [],
    });
  });

  it('refuses a regex that does not compile, in the Invalid value form', () => {
    const { count, regex } = errorsOf({ 'topics.regex': 'orders(' });
    expect(count).toBe(1);
    expect(regex).toHaveLength(1);
    expect(regex[0]).toMatch(
      /^Invalid value orders\( for configuration topics\.regex: error parsing regexp: missing closing \)/,
    );
  });

  it('refuses a DLQ topic that the regex or the list would consume', () => {
    expect(
      errorsOf({ 'topics.regex': 'orders.*', 'errors.deadletterqueue.topic.name': 'orders-dlq' }),
    ).toEqual({
      count: 1,
      topics: [],
      regex: [
        "The DLQ topic 'orders-dlq' may not be included in the regex matching the topics ('topics.regex=orders.*') consumed by the connector",
      ],
      dlq: [],
    });
    expect(
      errorsOf({ 'topics.regex': 'orders\\.[a-z]+', 'errors.deadletterqueue.topic.name': 'orders-dlq' })
        .count,
    ).toBe(0);
    expect(errorsOf({ topics: 'a,dlq', 'errors.deadletterqueue.topic.name': 'dlq' }).dlq).toEqual([
      'The DLQ topic cannot be one of the consumed topics.',
    ]);
  });
});

describe('sinkTopicsOf', () => {
  const existing = ['orders.eu', 'orders.us', 'orders-dlq', 'xorders.eu', 'orders.eu.old', 'payments'];

  it('matches whole names only, as Java matches() does, sorted', () => {
    expect(sinkTopicsOf({ 'topics.regex': 'orders\\.[a-z]+' }, existing)).toEqual(['orders.eu', 'orders.us']);
    expect(sinkTopicsOf({ 'topics.regex': 'orders|payments' }, existing)).toEqual(['payments']);
    expect(sinkTopicsOf({ 'topics.regex': '.*eu.*' }, existing)).toEqual([
      'orders.eu',
      'orders.eu.old',
      'xorders.eu',
    ]);
  });

  it('a list is taken as it is, whatever exists', () => {
    expect(sinkTopicsOf({ topics: 'b, a ,,c' }, [])).toEqual(['b', 'a', 'c']);
  });
});
