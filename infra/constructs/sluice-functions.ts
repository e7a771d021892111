import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import {
  ArnFormat,
  AssetHashType,
  Duration,
  Fn,
  RemovalPolicy,
  Stack,
  Token,
  Validations,
} from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { BUNDLE_ALIASES, BUNDLE_EXTERNALS, REPO_ROOT, REQUIRE_BANNER } from '../bundling.js';
import { ENV, NODE_OPTIONS_VALUE } from '../../lib/config/environment.js';
import type { LogStorage } from './log-storage.js';
import type { MetadataTable } from './metadata-table.js';
import type { SegmentStorage } from './segment-storage.js';

/** The jobs that get a function each; `functions/<job>.ts` exports `handler`. */
export const SLUICE_JOBS = [
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
export type SluiceJob = (typeof SLUICE_JOBS)[number];

/**
 * The functions behind API routes: each checks, with IAM's policy simulator for the caller, the
 * resources a request body names (heartbeat subscriptions, committed topics, a multi-partition fetch,
 * connector configs) and every request a Kafka gateway makes on behalf of a SASL-authenticated
 * client (lib/auth/delegation.ts): the route's own path for that client, and the gateway's right to
 * act for it.
 */
const API_JOBS: ReadonlySet<SluiceJob> = new Set(['admin', 'produce', 'fetch', 'groups', 'connect', 'wait']);

interface JobSizing {
  readonly memorySize: number;
  readonly timeout: Duration;
  readonly description: string;
}

/**
 * Memory and timeout per job. Memory is Lambda's CPU share (a whole vCPU at 1,769 MB), and most of a
 * request's time is waiting on S3 and DynamoDB, which is billed per GB-second whatever the CPU: each
 * function gets the least memory whose CPU share keeps its own work small beside that wait, from
 * `npm run bench:function-cpu` (whole-core CPU per request of each function's code; docs/cost.md
 * "Right-sizing"). All run on arm64 (Graviton, 20 % below x86 per GB-second).
 */
const SIZING: Record<SluiceJob, JobSizing> = {
  // Cluster and topic admin: no request measured 0.1 ms of CPU.
  admin: { memorySize: 256, timeout: Duration.seconds(30), description: 'Sluice cluster and topic admin' },
  // 1.5-2.3 ms of CPU per 1 MiB batch (0.1-0.3 per 16 KiB batch) on a whole core, about 3x that with the SDK's
  // signing and checksums: 512 MB adds under 10 ms to a 1 MiB batch and under 1 ms to the small
  // batches of a latency-bound producer, and up to 4 MiB bodies fit with room to spare.
  produce: { memorySize: 512, timeout: Duration.seconds(30), description: 'Sluice produce' },
  // Long-polls up to 20 s (maxWaitMs) over every partition of a member, which is waiting, then reads:
  // 1.9 ms of CPU per MiB read on a whole core, 13 ms at 256 MB's share.
  fetch: { memorySize: 256, timeout: Duration.seconds(30), description: 'Sluice fetch and list offsets' },
  // 1.5 ms of CPU per heartbeat (a join) on a whole core. The transaction coordinator is here too: an
  // EndTxn writes a marker into each of up to 1,000 partitions, so it has the 30 s the produce function
  // gave it (API Gateway's own limit); a coordinator stopped half way is rolled forward by the next call.
  groups: {
    memorySize: 256,
    timeout: Duration.seconds(30),
    description: 'Sluice consumer groups and transactions',
  },
  connect: { memorySize: 256, timeout: Duration.seconds(15), description: 'Sluice Kafka Connect REST API' },
  // Runs every Connect task for SLUICE_CONNECT_BUDGET_MS (45 s) with Sluice in-process; the rest of the
  // timeout covers the final commits and lease releases. Connectors' CPU is the user's: not resized.
  'connect-worker': {
    memorySize: 1024,
    timeout: Duration.seconds(90),
    description: 'Sluice Connect runtime (connector tasks)',
  },
  // Flushes segments, compacts, applies retention and collects garbage in one scheduled run. A run with
  // nothing to do is 0.1 ms of CPU plus 0.05 ms per partition on a whole core; rolling is 3.4-3.9 ms per
  // MiB, and a 16 MiB segment's roll holds 32-48 MiB of heap and buffers (two or three copies of it) over
  // Node's 51 MiB with this bundle loaded; a run rolls 8 partitions at once (partitionConcurrency, so their
  // S3 waits overlap), 256-384 MiB. Memory alone would allow 512 MB, but one run rolls a minute of every
  // partition's data: 6,000 MiB at 100 MiB/s, 40 s of that CPU at 1,024 MB's share (121 s with the SDK's
  // checksums and TLS, times 3 as for produce) against 80 s (241 s) at 512 MB, past the run's 4-minute
  // budget before any S3 wait. So 1,024 MB.
  maintenance: {
    memorySize: 1024,
    timeout: Duration.minutes(5),
    description: 'Sluice scheduled maintenance',
  },
  // The wait socket's routes: a registration is a read, two small writes and a read per partition.
  wait: {
    memorySize: 128,
    timeout: Duration.seconds(10),
    description: 'Sluice wait socket (WebSocket routes)',
  },
  // One stream batch: a Query per changed partition, a read and a write per waiting member told.
  'wait-notifier': {
    memorySize: 128,
    timeout: Duration.seconds(30),
    description: 'Sluice wait notifier (tells waiting consumers from the table stream)',
  },
};

export { REPO_ROOT } from '../bundling.js';

/**
 * What every Sluice function shares (the API's jobs and each Streams app's processor): Node.js 22 on
 * arm64, bundled by esbuild into one ESM file that includes the pinned AWS SDK.
 */
export const SLUICE_NODEJS_DEFAULTS = {
  runtime: lambda.Runtime.NODEJS_22_X,
  architecture: lambda.Architecture.ARM_64,
  projectRoot: REPO_ROOT,
  depsLockFilePath: path.join(REPO_ROOT, 'package-lock.json'),
  bundling: {
    format: nodejs.OutputFormat.ESM,
    target: 'node22',
    minify: true,
    sourceMap: true,
    // Source maps resolve file and line; the sources themselves would double the bundle.
    sourcesContent: false,
    mainFields: ['module', 'main'],
    // Bundle the SDK version pinned in package.json instead of the runtime's floating copy.
    bundleAwsSDK: true,
    // pg's optional native binding (pg-native) is never installed; pg falls back to pure JS.
    externalModules: [...BUNDLE_EXTERNALS],
    // The SDK's default credential chain becomes the environment provider Lambda needs
    // (functions/lambda-credentials.ts); paths relative to the project root, esbuild's working directory.
    esbuildArgs: {
      '--alias': Object.entries(BUNDLE_ALIASES).map(
        ([from, to]) => `${from}=./${path.relative(REPO_ROOT, to).split(path.sep).join('/')}`,
      ),
    },
    // CommonJS dependencies call require(); ESM output has none unless the banner makes one.
    banner: REQUIRE_BANNER,
    tsconfig: path.join(REPO_ROOT, 'tsconfig.json'),
  },
} satisfies Partial<nodejs.NodejsFunctionProps>;

const TSX_CLI = createRequire(import.meta.url).resolve('tsx/cli');

/**
 * One API function's code: its entry bundled by infra/bundling.ts (the build the cold-start bench and
 * `npm run bench:bundle` measure, with the plugin that drops the SDK operations it never calls), run
 * locally in a child process; the asset is hashed by what it holds. A synth that skips bundling (the
 * infra tests' `aws:cdk:bundling-stacks`) skips it too.
 */
export const functionCode = (entry: string): lambda.Code =>
  lambda.Code.fromAsset(REPO_ROOT, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never pulled: the local build always succeeds or throws.
      image: lambda.Runtime.NODEJS_22_X.bundlingImage,
      // The staging cache keys on these options (not on `local`): one entry per asset.
      command: ['npx', 'tsx', 'infra/build-function.ts', path.relative(REPO_ROOT, entry), '/asset-output'],
      local: {
        tryBundle(outputDir) {
          execFileSync(
            process.execPath,
            [TSX_CLI, path.join(REPO_ROOT, 'infra', 'build-function.ts'), entry, outputDir],
            {
              cwd: REPO_ROOT,
              stdio: ['ignore', 'inherit', 'inherit'],
            },
          );
          return true;
        },
      },
    },
  });

/** The cdk-nag finding every pinned function gets, acknowledged with the reason. */
export const acknowledgeRuntimePin = (fn: lambda.IFunction): void =>
  Validations.of(fn).acknowledge({
    id: 'AwsSolutions-L1',
    reason:
      'Pinned to nodejs22.x on purpose: the bundle targets node22 and the pinned AWS SDK supports it; a runtime upgrade is a deliberate, tested change rather than drift.',
  });

export interface SluiceFunctionsProps {
  readonly table: MetadataTable;
  readonly storage: LogStorage;
  /**
   * The segment store; without it SLUICE_SEGMENT_BUCKET is unset and maintenance does not roll.
   * @default none
   */
  readonly segments?: SegmentStorage;
  /** Value of SLUICE_CLUSTER_ID. */
  readonly clusterId: string;
  /** Value of SLUICE_MAX_REQUEST_BYTES. */
  readonly maxRequestBytes: number;
  /**
   * Retention of each function's log group.
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Directory holding `<job>.ts` entry points.
   * @default <repo>/functions
   */
  readonly entryDir?: string;
}

/**
 * One Node.js 22 / arm64 function per job, bundled by esbuild into a single ESM file that includes
 * the pinned AWS SDK (the runtime's SDK version floats), each with its own role holding only the
 * grants its job needs and its own log group. No AWS managed policies: log writing is granted on the
 * function's own log group only.
 */
export class SluiceFunctions extends Construct {
  readonly functions: Readonly<Record<SluiceJob, nodejs.NodejsFunction>>;
  readonly logGroups: Readonly<Record<SluiceJob, logs.LogGroup>>;

  constructor(scope: Construct, id: string, props: SluiceFunctionsProps) {
    super(scope, id);
    const entryDir = props.entryDir ?? path.join(REPO_ROOT, 'functions');
    const environment: Record<string, string> = {
      [ENV.tableName]: props.table.tableName,
      [ENV.buckets]: Fn.join(',', props.storage.bucketNames),
      ...(props.segments ? { [ENV.segmentBucket]: props.segments.bucket.bucketName } : {}),
      [ENV.clusterId]: props.clusterId,
      [ENV.maxRequestBytes]: String(props.maxRequestBytes),
      [ENV.nodeOptions]: NODE_OPTIONS_VALUE,
    };

    const functions = {} as Record<SluiceJob, nodejs.NodejsFunction>;
    const logGroups = {} as Record<SluiceJob, logs.LogGroup>;
    for (const job of SLUICE_JOBS) {
      const sizing = SIZING[job];
      const logGroup = new logs.LogGroup(this, `${pascal(job)}Logs`, {
        retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      });
      const role = new iam.Role(this, `${pascal(job)}Role`, {
        assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
        description: `Execution role of the Sluice ${job} function`,
      });
      logGroup.grantWrite(role);

      functions[job] = new nodejs.NodejsFunction(this, pascal(job), {
        ...SLUICE_NODEJS_DEFAULTS,
        code: functionCode(path.join(entryDir, `${job}.ts`)),
        handler: 'index.handler',
        description: sizing.description,
        memorySize: sizing.memorySize,
        timeout: sizing.timeout,
        role,
        logGroup,
        environment: API_JOBS.has(job) ? { ...environment, [ENV.authorizer]: 'iam' } : environment,
      });
      acknowledgeRuntimePin(functions[job]);
      logGroups[job] = logGroup;
    }
    this.functions = functions;
    this.logGroups = logGroups;

    const { table, storage } = props;
    table.grantReadWriteData(functions.produce);
    storage.grantPutObjects(functions.produce);
    // An acks=all write that finds a follower behind copies the missing batches from the leader
    // first (lib/core/replication/replicator.ts), and a failed leader is probed before an election.
    storage.grantReadObjects(functions.produce);

    table.grantReadData(functions.fetch);
    table.grantWaitRegistrations(functions.fetch);
    storage.grantReadObjects(functions.fetch);

    table.grantReadWriteData(functions.groups);
    // The transaction coordinator is the groups function's: ending a transaction writes its markers
    // into every partition it touched (an object on each in-sync store, lib/core/transactions/markers.ts),
    // copying a lagging follower's missing batches from the leader first, as a produce does.
    storage.grantPutObjects(functions.groups);
    storage.grantReadObjects(functions.groups);
    for (const job of API_JOBS) grantPolicySimulation(functions[job]);

    // Connector configs, states and source offsets (and the sink groups' offsets) live in the table.
    table.grantReadWriteData(functions.connect);
    // The runtime hosts Sluice in-process (its tasks produce, fetch and commit through the router).
    table.grantReadWriteData(functions['connect-worker']);
    storage.grantReadObjects(functions['connect-worker']);
    storage.grantPutObjects(functions['connect-worker']);

    table.grantReadWriteData(functions.admin);
    storage.grantReadObjects(functions.admin);
    storage.grantDeleteObjects(functions.admin);

    table.grantReadWriteData(functions.maintenance);
    storage.grantReadObjects(functions.maintenance);
    storage.grantPutObjects(functions.maintenance);
    storage.grantDeleteObjects(functions.maintenance);

    // Registrations, their partition items and the connection's caller; the check reads partitions.
    table.grantReadWriteData(functions.wait);
    // Reads waiters and partitions, marks registrations told, forgets connections that are gone.
    table.grantReadWriteData(functions['wait-notifier']);

    const { segments } = props;
    segments?.grantRead(functions.fetch);
    segments?.grantReadWrite(functions.maintenance);
    segments?.grantDelete(functions.admin);
  }
}

/**
 * An API function checks the resources a request names beyond its path by simulating the caller's
 * policies (lib/adapters/aws/iam-authorizer.ts): SimulatePrincipalPolicy on this account's users and
 * roles, and GetRole to find an assumed-role session's role ARN.
 */
function grantPolicySimulation(fn: nodejs.NodejsFunction): void {
  const stack = Stack.of(fn);
  const arn = (resource: string) =>
    stack.formatArn({
      service: 'iam',
      region: '',
      resource,
      resourceName: '*',
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
  fn.addToRolePolicy(
    new iam.PolicyStatement({
      actions: ['iam:SimulatePrincipalPolicy'],
      resources: [arn('user'), arn('role')],
    }),
  );
  fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['iam:GetRole'], resources: [arn('role')] }));
  // cdk-nag names a finding by the resource as the template spells it: a pseudo parameter while the
  // stack is environment-agnostic, a literal once the CLI knows the region (`cdk synth` defaults it to
  // us-east-1, so the partition becomes "aws") or the account. The acknowledgement names the same.
  const spelled = (value: string, pseudo: string): string =>
    Token.isUnresolved(value) ? `<${pseudo}>` : value;
  const prefix = `arn:${spelled(stack.partition, 'AWS::Partition')}:iam::${spelled(stack.account, 'AWS::AccountId')}`;
  for (const kind of ['user', 'role'])
    Validations.of(fn.role!).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${prefix}:${kind}/*]`,
      reason: `Any ${kind} of this account may call the API; the function simulates the caller's own policies (read-only) to check the resources a request body names and the client a Kafka gateway acts for, and cannot know callers in advance.`,
    });
}

function pascal(job: string): string {
  return job
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}
