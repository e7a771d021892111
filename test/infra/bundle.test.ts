import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { CfnElement } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, SDK_OPERATIONS, buildFunction } from '../../infra/bundling.js';
import { sluiceApp } from './app.js';

// The one test that runs esbuild: it checks what skipping bundling elsewhere cannot, that each
// bundle is ESM that loads on Node with its CommonJS dependencies and the pinned SDK inside.

const JOBS = [
  'admin',
  'produce',
  'fetch',
  'groups',
  'connect',
  'connect-worker',
  'maintenance',
  'wait',
  'wait-notifier',
] as const;
type Job = (typeof JOBS)[number];

let bundles: Record<Job, string>;

beforeAll(() => {
  const { app, stack } = sluiceApp({ bundle: true });
  const assembly = app.synth();
  const template = assembly.getStackArtifact(stack.artifactId).template as {
    Resources: Record<string, { Properties: { Code: { S3Key: string }; Handler: string } }>;
  };
  bundles = {} as Record<Job, string>;
  for (const job of JOBS) {
    const id = stack.getLogicalId(stack.functions.functions[job].node.defaultChild as CfnElement);
    const fn = template.Resources[id];
    if (!fn) throw new Error(`no function ${id}`);
    expect(fn.Properties.Handler).toBe('index.handler');
    bundles[job] = path.join(
      assembly.directory,
      `asset.${fn.Properties.Code.S3Key.replace(/\.zip$/, '')}`,
      'index.mjs',
    );
  }
}, 120_000);

describe('function bundles', () => {
  it.each(JOBS)('%s is ESM with a require shim, a source map and no external AWS SDK', (job) => {
    const code = readFileSync(bundles[job], 'utf8');
    expect(code.startsWith('import { createRequire as __sluiceCreateRequire }')).toBe(true);
    expect(existsSync(`${bundles[job]}.map`)).toBe(true);
    // An external SDK would show up as a static import (the load test below would fail too).
    expect(/\bfrom\s*["']@aws-sdk\//.test(code)).toBe(false);
  });

  // The DynamoDB Streams source imports its client lazily; the bundle must still carry it (a
  // devDependency that esbuild bundles; nothing is installed beside the function).
  it('connect-worker carries the DynamoDB Streams client', () => {
    expect(readFileSync(bundles['connect-worker'], 'utf8').includes('DynamoDBStreams_20120810')).toBe(true);
  });

  // Each function's composition root (functions/<job>.ts) builds only its routes and their
  // dependencies, and Lambda's credentials come from the environment (functions/lambda-credentials.ts):
  // a budget per bundle holds both. Before the roots every function was the whole of Sluice, 1,359 KiB;
  // at e5e9779 produce was 897 KiB. Since then the request validators are compiled at build time
  // (lib/http/validators: no ajv), the SDK clients carry only the operation schemas a function calls
  // (infra/bundling.ts sdkSchemaLiterals): 701 KiB; IAM is called without its SDK client
  // (lib/adapters/aws/iam-query.ts), X-Ray subsegments are sent without the X-Ray SDK
  // (functions/xray.ts) and the SDK's event-stream codec is left out (functions/event-streams-absent.ts):
  // produce 563 KiB (568 KiB at 29ec50b). Issue 28 then gave each function one job: the transaction
  // coordinator and its routes moved to the groups function (Kafka's coordinator of groups and
  // transactions), so produce checks a transactional batch with the transaction log alone
  // (lib/core/transactions/verify.ts) and carries no coordinator, consumer groups or fetch path; the
  // produce and fetch routes have validator modules of their own; topic administration
  // (lib/core/topics/catalog.ts) is built only where topics are administered; and the bundles leave out
  // what never runs in them (infra/bundling.ts): the SDK clients' package.json but its version, the
  // DynamoDB client's endpoint-discovery cache, the JavaScript hash fallbacks of node:crypto, the error
  // classes no operation Sluice sends can throw, and the validators' unused schema paths. Produce
  // 446 KiB, the rest as measured by `npm run bench:bundle` (after main's waits registered by the
  // fetch: fetch 432 KiB), each budget ~2 % above it (produce's is issue 28's ceiling, 450 KiB). What
  // remains of produce: the S3 and DynamoDB clients with @smithy/core and @aws-sdk/core, ~250 KiB;
  // Sluice's own code, ~145 KiB; Powertools' Logger and Metrics, ~31 KiB.
  const BUDGET_KIB: Record<Job, number> = {
    admin: 546,
    produce: 450,
    fetch: 441,
    groups: 529,
    connect: 1_017,
    // Hosts the SDK, whose consumers can wait on the wait socket: ws (~30 KiB) is in it although its
    // consumers long-poll (functions/connect-worker.ts waitUrl: false).
    'connect-worker': 1_326,
    maintenance: 470,
    // The wait socket's routes and its notifier: the log's registry, the table, the management API client.
    wait: 372,
    'wait-notifier': 365,
  };
  it.each(JOBS)('%s stays within its size budget', (job) => {
    expect(statSync(bundles[job]).size / 1024).toBeLessThanOrEqual(BUDGET_KIB[job]);
  });

  // Markers of what only some functions may carry (strings each package has, minified or not).
  const MARKERS = {
    iam: 'SimulatePrincipalPolicy',
    'dynamodb-streams': 'DynamoDBStreams_20120810',
    lambda: 'AWSGirApiService',
    pg: 'SCRAM-SHA-256',
    re2js: 'RE2JS',
    'credential chain': 'AWS_CONTAINER_CREDENTIALS_FULL_URI',
    // Compiling schemas at run time: the validators are compiled at build time (lib/http/validators).
    ajv: 'strictSchema',
    semver: 'SEMVER_SPEC_VERSION',
    // X-Ray subsegments are written by functions/xray.ts, not by the X-Ray SDK under Powertools' Tracer.
    'xray-sdk': 'AWS_XRAY_CONTEXT_MISSING',
    // IAM is called by lib/adapters/aws/iam-query.ts, not by the SDK's IAM client.
    'iam-client': 'EntityTemporarilyUnmodifiable',
    // The coordinators and topic administration: only the functions whose job they are.
    'group coordinator': 'still has members',
    'transaction coordinator': 'transaction.max.timeout.ms=',
    'topic administration': 'partitions can only grow',
  } as const;
  const CARRIES: Record<Job, readonly (keyof typeof MARKERS)[]> = {
    // Every API function checks body-named resources and delegated callers with IAM's policy
    // simulator (functions/authorizer.ts); the scheduled ones serve no API route.
    // Admin: deleting a topic purges it at once (the log's maintenance, with its group and transaction
    // sweeps), and it lists transactions.
    admin: ['iam', 'group coordinator', 'transaction coordinator', 'topic administration'],
    produce: ['iam'],
    fetch: ['iam'],
    groups: ['iam', 'group coordinator', 'transaction coordinator'],
    // The herder reads, alters and deletes connectors' offsets through the group coordinator (KIP-875).
    connect: ['iam', 'dynamodb-streams', 'lambda', 'pg', 're2js', 'group coordinator'],
    // The runtime hosts the whole of Sluice in-process (functions/app.ts).
    'connect-worker': [
      'dynamodb-streams',
      'lambda',
      'pg',
      're2js',
      'group coordinator',
      'transaction coordinator',
      'topic administration',
    ],
    maintenance: ['group coordinator', 'transaction coordinator'],
    // A registration's topics are checked for READ for the caller $connect admitted.
    wait: ['iam'],
    'wait-notifier': [],
  };
  it.each(JOBS)('%s carries only the SDK clients and libraries its job uses', (job) => {
    const code = readFileSync(bundles[job], 'utf8');
    const carried = (Object.keys(MARKERS) as (keyof typeof MARKERS)[]).filter((k) =>
      code.includes(MARKERS[k]),
    );
    expect(carried).toEqual(CARRIES[job]);
  });

  // The bundles register only the errors of the SDK operations Sluice sends (infra/bundling.ts
  // SDK_OPERATIONS): every command Sluice's own code in a bundle imports from those clients must be one
  // of them, or an error it can throw would arrive as the bare service exception. (The connect bundles
  // carry every command of the clients, kept by their lazily loaded connectors, but send only these.)
  it.each(JOBS)(
    '%s sends only operations of SDK_OPERATIONS on the clients whose errors it trims',
    async (job) => {
      const dir = mkdtempSync(path.join(tmpdir(), `sluice-ops-${job}-`));
      try {
        const metafile = await buildFunction(path.join(REPO_ROOT, 'functions', `${job}.ts`), dir);
        const sent = Object.keys(metafile.inputs)
          .filter((input) => !input.includes('node_modules') && input.endsWith('.ts'))
          .flatMap((input) =>
            [
              ...readFileSync(path.resolve(REPO_ROOT, input), 'utf8').matchAll(
                /import \{([^}]*)\} from '@aws-sdk\/(client-[a-z0-9-]+)'/g,
              ),
            ].flatMap(([, names, client]) =>
              SDK_OPERATIONS[client!]
                ? [...names!.matchAll(/\b(\w+)Command\b/g)].map(([, operation]) => `${client} ${operation}`)
                : [],
            ),
          );
        expect(sent.length).toBeGreaterThan(0);
        for (const command of sent) {
          const [client, operation] = command.split(' ') as [string, string];
          expect([command, SDK_OPERATIONS[client]!.includes(operation)]).toEqual([command, true]);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  // Fault injection and the latency model are the local stack's layers (local/stack.ts); a deployed
  // function must not carry them, even unused.
  it.each(JOBS)('%s carries no fault injector and no latency model', (job) => {
    const code = readFileSync(bundles[job], 'utf8');
    // includes(), not toContain(): a failure would print the whole minified bundle.
    expect(code.includes('SLUICE_FAULTS must be a JSON object')).toBe(false);
    expect(code.includes('unknown latency model')).toBe(false);
  });

  // The assembly lives in a temporary directory outside the repo, so nothing but the bundle itself
  // can satisfy an import: an unbundled dependency fails here.
  it.each(JOBS)('%s loads on Node and exports a handler function', (job) => {
    expect(path.relative(process.cwd(), bundles[job]).startsWith('..')).toBe(true);
    expect(loadBundle(job)).toBe('function');
  });

  // With X-Ray active (as the CDK app deploys by default) the tracer (functions/xray.ts) is made at
  // import and instruments the clients as the function builds them.
  it.each(['produce', 'maintenance'] as const)('%s loads with X-Ray tracing active', (job) => {
    expect(
      loadBundle(job, {
        AWS_LAMBDA_FUNCTION_NAME: `sluice-${job}`,
        AWS_XRAY_DAEMON_ADDRESS: '127.0.0.1:2000',
        _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
      }),
    ).toBe('function');
  });
});

/** Imports a bundle in a fresh Node process; what `typeof handler` printed. */
const loadBundle = (job: Job, env: Record<string, string> = {}): string => {
  let out: string;
  try {
    out = execFileSync(
      process.execPath,
      [
        '--enable-source-maps',
        '--input-type=module',
        '-e',
        'const m = await import(process.argv[1]); console.log(typeof m.handler);',
        bundles[job],
      ],
      {
        encoding: 'utf8',
        timeout: 30_000,
        env: {
          PATH: process.env.PATH ?? '',
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'test',
          AWS_SECRET_ACCESS_KEY: 'test',
          AWS_EC2_METADATA_DISABLED: 'true',
          SLUICE_TABLE_NAME: 'sluice-test',
          SLUICE_BUCKETS: 'sluice-test-s0',
          SLUICE_CLUSTER_ID: 'test-cluster',
          SLUICE_MAX_REQUEST_BYTES: '4194304',
          ...env,
        },
      },
    );
  } catch (e) {
    const stderr = String((e as { stderr?: unknown }).stderr ?? e);
    // The minified bundle echoes in Node's error output; keep the message, not the code.
    throw new Error(
      `${job} bundle failed to load:\n${stderr
        .split('\n')
        .filter((l) => l.length < 500)
        .join('\n')}`,
    );
  }
  return out.trim().split('\n').at(-1)!;
};
