import type { CfnElement } from 'aws-cdk-lib';
import { Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { topology as pageViews } from '../../examples/page-views.js';
import { topology as wordCount } from '../../examples/word-count.js';
import { StreamsApp } from '../../infra/constructs/streams-app.js';
import type { SluiceStack } from '../../infra/sluice-stack.js';
import { sluiceApp } from './app.js';
import type { PolicyStatement } from './template.js';
import { props, referencedId, resources, resourcesOfType, roleStatements } from './template.js';

let stack: SluiceStack;
let template: Template;
let words: StreamsApp;
let views: StreamsApp;

beforeAll(() => {
  ({ stack } = sluiceApp());
  words = new StreamsApp(stack, 'WordCount', {
    sluice: stack,
    entry: 'examples/word-count.ts',
    topology: wordCount(),
    config: { 'application.id': 'word-count', 'processing.guarantee': 'exactly_once_v2' },
  });
  views = new StreamsApp(stack, 'PageViews', {
    sluice: stack,
    entry: 'examples/page-views.ts',
    topology: pageViews(),
    config: { 'application.id': 'page-views', 'commit.interval.ms': '1000' },
  });
  template = Template.fromStack(stack);
});

const logicalId = (c: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(c.node.defaultChild as CfnElement);

const fnProps = (a: StreamsApp) => props(resources(template)[logicalId(a.function)]);

const roleOf = (a: StreamsApp): string => {
  const id = referencedId(fnProps(a).Role);
  if (!id) throw new Error('function has no role');
  return id;
};

/** The route of an execute-api ARN as the template builds it: "METHOD /path". */
const routes = (statements: PolicyStatement[]): string[] =>
  statements
    .filter((s) => JSON.stringify(s.Action).includes('execute-api:Invoke'))
    .flatMap((s) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]))
    .map((r) => {
      const parts = (r as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
      const tail = parts.at(-1) as string;
      return tail.replace(/^\/\$default\//, '').replace('/', ' /');
    })
    .sort();

describe('StreamsApp', () => {
  it('passes its Kafka Streams configs and the API endpoint to its function', () => {
    const env = (fnProps(words).Environment as { Variables: Record<string, unknown> }).Variables;
    const config = JSON.stringify(env['SLUICE_STREAMS_CONFIG']);
    expect(config).toContain('\\"application.id\\":\\"word-count\\"');
    expect(config).toContain('\\"processing.guarantee\\":\\"exactly_once_v2\\"');
    expect(config).toContain('ApiEndpoint');
    expect(referencedId(env['SLUICE_TABLE_NAME'])).toBe('MetadataTable');
    expect(env['SLUICE_STREAMS_SIGV4_REGION']).toEqual({ Ref: 'AWS::Region' });
    expect(fnProps(words)).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], Timeout: 300 });
    expect(words.config).toMatchObject({ applicationId: 'word-count', commitIntervalMs: 100 });
    expect(views.config).toMatchObject({ processingGuarantee: 'at_least_once', commitIntervalMs: 1000 });
  });

  it('is woken by the table stream, filtered to commits on its source partitions, never by a schedule', () => {
    const table = resources(template)['MetadataTable'];
    expect(props(table).StreamSpecification).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
    const mappings = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping');
    const mine = mappings.filter(
      ([, m]) => referencedId(props(m).FunctionName) === logicalId(words.function),
    );
    expect(mine.length).toBe(1);
    const mapping = props(mine[0]![1]);
    expect(mapping.EventSourceArn).toEqual({ 'Fn::GetAtt': ['MetadataTable', 'StreamArn'] });
    expect(mapping).toMatchObject({
      StartingPosition: 'LATEST',
      BatchSize: 100,
      MaximumRetryAttempts: -1,
    });
    // Omitted is CloudFormation's default, false: the event only wakes the run.
    expect(mapping.BisectBatchOnError).toBeUndefined();
    const filters = (mapping.FilterCriteria as { Filters: { Pattern: string }[] }).Filters;
    expect(filters.map((f) => JSON.parse(f.Pattern) as unknown)).toEqual([
      {
        eventName: ['MODIFY'],
        dynamodb: {
          Keys: { pk: { S: [{ prefix: 'P#' }] }, sk: { S: ['STATE'] } },
          NewImage: { topic: { S: ['text-input', 'word-count-counts-store-repartition'] } },
        },
      },
    ]);
    // Nothing invokes the function on a timer: no rule or schedule targets it.
    const target = JSON.stringify({ 'Fn::GetAtt': [logicalId(words.function), 'Arn'] });
    for (const type of ['AWS::Events::Rule', 'AWS::Scheduler::Schedule'])
      for (const [, r] of resourcesOfType(template, type))
        expect(JSON.stringify(props(r)).includes(target)).toBe(false);
    const permissions = resourcesOfType(template, 'AWS::Lambda::Permission').filter(
      ([, p]) => referencedId(props(p).FunctionName) === logicalId(words.function),
    );
    expect(permissions).toEqual([]);
  });

  it('may call exactly the routes of its topics, its group and topic creation', () => {
    const statements = roleStatements(template, roleOf(words));
    const topics = (t: string) => [
      `GET /v1/topics/${t}`,
      `GET /v1/topics/${t}/partitions/*/offsets`,
      `GET /v1/topics/${t}/partitions/*/records`,
    ];
    const group = [
      'GET /v1/groups/word-count',
      'GET /v1/groups/word-count/offsets',
      'POST /v1/groups/word-count/heartbeat',
      'POST /v1/groups/word-count/classic',
      'POST /v1/groups/word-count/offsets',
      'POST /v1/groups/word-count/offsets/reset',
    ];
    const produce = (t: string) => [
      `GET /v1/topics/${t}`,
      `POST /v1/topics/${t}/partitions/*/batches`,
      `POST /v1/topics/${t}/records`,
      'POST /v1/producers',
    ];
    const repartition = 'word-count-counts-store-repartition';
    expect(new Set(routes(statements))).toEqual(
      new Set([
        ...topics('text-input'),
        ...topics(repartition),
        ...group,
        ...produce(repartition),
        ...produce('word-counts'),
        'POST /v1/topics',
        'POST /v1/fetch',
        // Every client grant lets its principal learn who it is (the Kafka gateway's SASL token).
        'GET /v1/whoami',
      ]),
    );
    // No repartition topic, no topic creation.
    expect(routes(roleStatements(template, roleOf(views)))).not.toContain('POST /v1/topics');
  });

  it('may touch only its own state and lease items in the table, and read the table stream', () => {
    const statements = roleStatements(template, roleOf(words)).filter((s) =>
      JSON.stringify(s.Action).includes('dynamodb:'),
    );
    const onTable = statements.filter(
      (s) => JSON.stringify(s.Resource) === JSON.stringify({ 'Fn::GetAtt': ['MetadataTable', 'Arn'] }),
    );
    expect(onTable).toEqual([
      {
        Effect: 'Allow',
        Action: [
          'dynamodb:BatchWriteItem',
          'dynamodb:ConditionCheckItem',
          'dynamodb:DeleteItem',
          'dynamodb:GetItem',
          'dynamodb:PutItem',
          'dynamodb:Query',
          'dynamodb:UpdateItem',
        ],
        Resource: { 'Fn::GetAtt': ['MetadataTable', 'Arn'] },
        Condition: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['S#word-count#*', 'ST#word-count#*'] },
        },
      },
    ]);
    // The rest is the event source mapping's stream reads (the stream ARN, and ListStreams).
    const rest = statements.filter((s) => !onTable.includes(s));
    for (const s of rest) {
      const actions = (Array.isArray(s.Action) ? s.Action : [s.Action]) as string[];
      expect(
        actions.every((a) =>
          [
            'dynamodb:ListStreams',
            'dynamodb:DescribeStream',
            'dynamodb:GetRecords',
            'dynamodb:GetShardIterator',
          ].includes(a),
        ),
      ).toBe(true);
    }
    expect(rest.length).toBeGreaterThan(0);
  });

  it('refuses bad configs at synth time', () => {
    const base = { sluice: stack, entry: 'examples/word-count.ts', topology: wordCount() };
    expect(
      () =>
        new StreamsApp(stack, 'Bad1', {
          ...base,
          config: { 'application.id': 'x', 'processing.guarantee': 'exactly_once' },
        }),
    ).toThrow('processing.guarantee must be at_least_once or exactly_once_v2, not exactly_once');
    expect(() => new StreamsApp(stack, 'Bad2', { ...base, config: {} })).toThrow(
      'application.id is required',
    );
    expect(
      () =>
        new StreamsApp(stack, 'Bad3', {
          ...base,
          config: { 'application.id': 'x', 'bootstrap.servers': 'http://h' },
        }),
    ).toThrow('bootstrap.servers is the deployment API');
    expect(
      () =>
        new StreamsApp(stack, 'Bad4', {
          ...base,
          config: { 'application.id': 'x', 'num.stream.threads': '2' },
        }),
    ).toThrow('unknown config num.stream.threads');
  });
});

describe('StreamsApp under cdk-nag AwsSolutions', () => {
  it('leaves no unacknowledged finding, and acknowledges each with a reason', () => {
    const { app: nagApp, stack: nagStack } = sluiceApp();
    const streamsApp = new StreamsApp(nagStack, 'WordCount', {
      sluice: nagStack,
      entry: 'examples/word-count.ts',
      topology: wordCount(),
      config: { 'application.id': 'word-count' },
    });
    const pack = new AwsSolutionsChecks(nagApp);
    const report = pack.validateScope(streamsApp);
    const findings = report.violations
      .filter((v) => v.severity === 'error' || v.severity === 'warning')
      .flatMap((v) =>
        v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath ?? r.resourceLogicalId}`),
      );
    expect(findings).toEqual([]);
    const acks: Record<string, Record<string, string>> = {};
    for (const c of streamsApp.node.findAll())
      for (const entry of c.node.metadata)
        if (entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
          Object.assign((acks[c.node.path] ??= {}), entry.data as Record<string, string>);
    const partitions = (method: string, t: string, route: string) =>
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<ApiHttpApi4C294DC0>/$default/${method}/v1/topics/${t}/partitions/*/${route}]`;
    const repartition = 'word-count-counts-store-repartition';
    expect(
      Object.fromEntries(
        Object.entries(acks).map(([p, rules]) => [
          p,
          Object.keys(rules)
            .map((id) => id.replace(/^annotation::/i, ''))
            .sort(),
        ]),
      ),
    ).toEqual({
      'Sluice/WordCount/Processor': ['AwsSolutions-L1'],
      'Sluice/WordCount/Role': [
        'AwsSolutions-IAM5[Resource::*]',
        partitions('GET', repartition, 'offsets'),
        partitions('GET', repartition, 'records'),
        partitions('GET', 'text-input', 'offsets'),
        partitions('GET', 'text-input', 'records'),
        partitions('POST', repartition, 'batches'),
        partitions('POST', 'word-counts', 'batches'),
      ].sort(),
    });
    for (const reason of Object.values(acks).flatMap((r) => Object.values(r)))
      expect(reason.length).toBeGreaterThan(60);
  });
});
