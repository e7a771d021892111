/**
 * The dependency boundaries are lint rules (eslint.config.js): each test plants a forbidden import
 * (or global) in a file of the guarded folder and shows the rule refuses it, and that the same line
 * passes where it is allowed, so a rule that stops matching fails here rather than silently.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: process.cwd() });

const problems = async (filePath: string, code: string): Promise<string[]> => {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
};

const BOUNDARIES: { rule: string; file: string; planted: string; allowedIn: string; message: RegExp }[] = [
  {
    rule: 'sdk/ never imports lib/core',
    file: 'sdk/planted.ts',
    planted: "import { Fetcher } from '../lib/core/log/fetch.js';\nexport const f = Fetcher;\n",
    allowedIn: 'lib/planted.ts',
    message: /sdk\/ imports protocol\/ and lib\/wire, never lib\/core/,
  },
  {
    rule: 'gateway/ never imports lib/core',
    file: 'gateway/planted.ts',
    planted:
      "import { DEFAULT_TOPIC_CONFIG } from '../lib/core/topics/configs.js';\nexport const d = DEFAULT_TOPIC_CONFIG;\n",
    allowedIn: 'lib/planted.ts',
    message: /gateway\/ imports protocol\/, lib\/wire and lib\/http, never lib\/core/,
  },
  {
    rule: 'protocol/ is a leaf (no lib/)',
    file: 'protocol/planted.ts',
    planted: "import { EDGE_LIMITS } from '../lib/http/limits.js';\nexport const l = EDGE_LIMITS;\n",
    allowedIn: 'sdk/planted.ts',
    message: /protocol\/ is a leaf/,
  },
  {
    rule: 'protocol/ is a leaf (no sdk/)',
    file: 'protocol/planted.ts',
    planted: "import { SluiceClient } from '../sdk/client.js';\nexport const c = SluiceClient;\n",
    allowedIn: 'cli/planted.ts',
    message: /protocol\/ is a leaf/,
  },
  {
    rule: 'lib/ imports no AWS SDK outside lib/adapters/aws',
    file: 'lib/http/planted.ts',
    planted: "import { S3Client } from '@aws-sdk/client-s3';\nexport const s = S3Client;\n",
    allowedIn: 'lib/adapters/aws/planted.ts',
    message: /Only lib\/adapters\/aws may import the AWS SDK/,
  },
  {
    rule: 'lib/core imports no AWS SDK',
    file: 'lib/core/planted.ts',
    planted: "import { S3Client } from '@aws-sdk/client-s3';\nexport const s = S3Client;\n",
    allowedIn: 'lib/adapters/aws/planted.ts',
    message: /Only lib\/adapters\/aws may import the AWS SDK/,
  },
  {
    rule: 'lib/core imports no HTTP edge',
    file: 'lib/core/planted.ts',
    planted: "import { json } from '../http/types.js';\nexport const j = json;\n",
    allowedIn: 'lib/auth/planted.ts',
    message: /lib\/core imports no HTTP edge or adapter/,
  },
  {
    rule: 'lib/core imports no adapter',
    file: 'lib/core/log/planted.ts',
    planted:
      "import { MemoryStore } from '../../adapters/memory/metadata-store.js';\nexport const m = MemoryStore;\n",
    allowedIn: 'lib/planted.ts',
    message: /lib\/core imports no HTTP edge or adapter/,
  },
  {
    rule: 'lib/core reads no process state',
    file: 'lib/core/planted.ts',
    planted: "export const region = process.env['AWS_REGION'];\n",
    allowedIn: 'lib/adapters/aws/planted.ts',
    message: /lib\/core reads no process state/,
  },
  {
    rule: 'lib/ never imports connect/',
    file: 'lib/http/planted.ts',
    planted: "import { Herder } from '../../../connect/herder.js';\nexport const h = Herder;\n",
    allowedIn: 'functions/planted.ts',
    message: /lib\/ never imports connect\/, streams\/ or a composition root/,
  },
  {
    rule: 'lib/adapters/aws never imports connect/ (the DynamoDB Streams adapter implements a port)',
    file: 'lib/adapters/aws/planted.ts',
    planted:
      "import { RetriableConnectError } from '../../../connect/plugin.js';\nexport const e = RetriableConnectError;\n",
    allowedIn: 'connect/connectors/planted.ts',
    message: /lib\/ never imports connect\/, streams\/ or a composition root/,
  },
  {
    rule: 'lib/core never imports streams/',
    file: 'lib/core/log/planted.ts',
    planted:
      "import { KafkaStreams } from '../../../streams/runtime/kafka-streams.js';\nexport const k = KafkaStreams;\n",
    allowedIn: 'functions/planted.ts',
    message: /lib\/ never imports connect\/, streams\/ or a composition root/,
  },
  {
    rule: 'lib/ never imports a composition root',
    file: 'lib/planted.ts',
    planted: "import { createSluice } from '../functions/app.js';\nexport const c = createSluice;\n",
    allowedIn: 'local/planted.ts',
    message: /lib\/ never imports connect\/, streams\/ or a composition root/,
  },
  {
    rule: 'the Connect worker never imports lib/core',
    file: 'connect/worker/planted.ts',
    planted:
      "import type { GroupCoordinator } from '../../../lib/core/groups/index.js';\nexport type G = GroupCoordinator;\n",
    allowedIn: 'functions/planted.ts',
    message: /The Connect worker reaches Sluice through the SDK/,
  },
  {
    rule: 'the Connect worker never imports the herder',
    file: 'connect/worker/planted.ts',
    planted: "import { Herder } from '../herder.js';\nexport const h = Herder;\n",
    allowedIn: 'connect/planted.ts',
    message: /The Connect worker reaches Sluice through the SDK/,
  },
  {
    rule: 'functions/ never imports infra/',
    file: 'functions/planted.ts',
    planted: "import { CONTEXT } from '../infra/config.js';\nexport const c = CONTEXT;\n",
    allowedIn: 'infra/planted.ts',
    message: /Runtime code never imports infra\//,
  },
  {
    rule: 'streams/ never imports infra/',
    file: 'streams/lambda/planted.ts',
    planted: "import { CONTEXT } from '../../../infra/config.js';\nexport const c = CONTEXT;\n",
    allowedIn: 'infra/constructs/planted.ts',
    message: /Runtime code never imports infra\//,
  },
  {
    rule: 'lib/core never imports infra/',
    file: 'lib/core/planted.ts',
    planted: "import { CONTEXT } from '../../../infra/config.js';\nexport const c = CONTEXT;\n",
    allowedIn: 'infra/planted.ts',
    message: /Runtime code never imports infra\//,
  },
  {
    rule: 'sdk/ never imports infra/',
    file: 'sdk/planted.ts',
    planted: "import { CONTEXT } from '../infra/config.js';\nexport const c = CONTEXT;\n",
    allowedIn: 'infra/planted.ts',
    message: /Runtime code never imports infra\//,
  },
  {
    rule: 'functions/ imports no AWS SDK (it builds clients through lib/adapters/aws)',
    file: 'functions/planted.ts',
    planted: "import { IAMClient } from '@aws-sdk/client-iam';\nexport const i = IAMClient;\n",
    allowedIn: 'lib/adapters/aws/planted.ts',
    message: /Only lib\/adapters\/aws may import the AWS SDK/,
  },
  {
    rule: 'streams/ imports no AWS SDK',
    file: 'streams/lambda/planted.ts',
    planted: "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';\nexport const d = DynamoDBClient;\n",
    allowedIn: 'lib/adapters/aws/planted.ts',
    message: /Only lib\/adapters\/aws may import the AWS SDK/,
  },
  {
    rule: 'cli/ sends no requests of its own (no Transport)',
    file: 'cli/commands/planted.ts',
    planted: "import { Transport } from '../../../sdk/transport.js';\nexport const t = Transport;\n",
    allowedIn: 'sdk/planted.ts',
    message: /cli\/ sends no requests of its own/,
  },
  {
    rule: 'cli/ sends no requests of its own (no global fetch)',
    file: 'cli/planted.ts',
    planted: "export const get = () => fetch('http://127.0.0.1:8787/v1/health');\n",
    allowedIn: 'sdk/planted.ts',
    message: /cli\/ sends no requests of its own/,
  },
  {
    rule: 'cli/ casts no answer',
    file: 'cli/planted.ts',
    planted: "export const n = JSON.parse('1') as number;\n",
    allowedIn: 'lib/planted.ts',
    message: /Do not use any type assertions/,
  },
];

describe('dependency boundaries (eslint.config.js)', () => {
  it('cli/ may name the SDK transport’s types and use `as const`', async () => {
    const code =
      "import type { FetchLike } from '../sdk/transport.js';\nexport const f: FetchLike | undefined = undefined;\nexport const w = ['a'] as const;\n";
    expect(await problems('cli/planted.ts', code)).toEqual([]);
  }, 60_000);

  for (const b of BOUNDARIES) {
    it(`${b.rule}: a planted violation fails lint, the same line passes in ${b.allowedIn}`, async () => {
      const found = await problems(b.file, b.planted);
      expect(found.filter((m) => b.message.test(m))).toHaveLength(1);
      expect(found[0]).toMatch(
        /^((@typescript-eslint\/)?no-restricted-(imports|globals)|@typescript-eslint\/consistent-type-assertions): /,
      );
      expect((await problems(b.allowedIn, b.planted)).filter((m) => b.message.test(m))).toEqual([]);
    }, 60_000);
  }
});
