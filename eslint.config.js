import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Every folder of code that runs (everything but infra/, test/ and the benchmarks). */
const RUNTIME = [
  'lib/**/*.ts',
  'sdk/**/*.ts',
  'cli/**/*.ts',
  'connect/**/*.ts',
  'streams/**/*.ts',
  'functions/**/*.ts',
  'gateway/**/*.ts',
  'protocol/**/*.ts',
  'local/**/*.ts',
];
// A file's no-restricted-imports is the last matching block's, so each block lists every pattern
// that applies to its folder; these are the ones several folders share.
const AWS_SDK = {
  group: ['@aws-sdk/*', 'aws-lambda'],
  message: 'Only lib/adapters/aws may import the AWS SDK.',
};
const NO_INFRA = {
  group: ['**/infra/**'],
  message: 'Runtime code never imports infra/: the names both share are in lib/config/environment.ts.',
};
const LIB_INWARD = {
  group: ['**/connect/**', '**/streams/**', '**/functions/**', '**/local/**'],
  message:
    'lib/ never imports connect/, streams/ or a composition root (functions/, local/): they import lib/.',
};

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'cdk.out/',
      '.sluice/',
      'coverage/',
      'bench/results/',
      'dist/',
      'reports/',
      'lib/http/validators/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    // Runtime code never imports the CDK app: the names both share are in lib/config/environment.ts.
    files: RUNTIME,
    rules: { 'no-restricted-imports': ['error', { patterns: [NO_INFRA] }] },
  },
  {
    // lib/ is imported by connect/, streams/ and the composition roots, never the other way round.
    files: ['lib/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [NO_INFRA, LIB_INWARD] }] },
  },
  {
    // The core must not know AWS or where it runs.
    files: ['lib/**/*.ts'],
    ignores: ['lib/adapters/aws/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [AWS_SDK, NO_INFRA, LIB_INWARD] }] },
  },
  {
    files: ['lib/core/**/*.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'lib/core reads no process state; pass configuration in.' },
      ],
      // The core knows nothing of HTTP, AWS or where it runs.
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            AWS_SDK,
            { group: ['**/http/**', '**/adapters/**'], message: 'lib/core imports no HTTP edge or adapter.' },
            NO_INFRA,
            LIB_INWARD,
          ],
        },
      ],
    },
  },
  {
    // One client: the SDK speaks to Sluice over the wire types and the shared codec, never the core.
    files: ['sdk/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/lib/core/**'], message: 'sdk/ imports protocol/ and lib/wire, never lib/core.' },
            NO_INFRA,
          ],
        },
      ],
    },
  },
  {
    // The composition roots and the other clients reach AWS through lib/adapters/aws only.
    files: ['functions/**/*.ts', 'connect/**/*.ts', 'streams/**/*.ts', 'cli/**/*.ts', 'gateway/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [AWS_SDK, NO_INFRA] }] },
  },
  {
    // The Kafka gateway is an edge process in front of Sluice's HTTP API: it translates Kafka's
    // protocol into HTTP calls and shares only the codecs and limits of protocol/, never the core.
    files: ['gateway/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            AWS_SDK,
            NO_INFRA,
            {
              group: ['**/lib/core/**'],
              message: 'gateway/ imports protocol/, lib/wire and lib/http, never lib/core.',
            },
          ],
        },
      ],
    },
  },
  {
    // The Connect worker is a client of the SDK: it knows neither the core nor Connect's server part.
    files: ['connect/worker/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '**/lib/core/**',
                '**/lib/services.js',
                '**/lib/http/**',
                '**/functions/**',
                '**/connect/herder.js',
                '**/connect/rest.js',
                '**/connect/access.js',
                '../herder.js',
                '../rest.js',
                '../access.js',
              ],
              message:
                'The Connect worker reaches Sluice through the SDK (SluiceClient) only, and not the herder.',
            },
            AWS_SDK,
            NO_INFRA,
          ],
        },
      ],
    },
  },
  {
    // The command line is a client of the SDK: every request goes through the SDK client (cli/api.ts),
    // whose calls answer the wire types, so it neither sends requests of its own nor casts answers.
    files: ['cli/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/sdk/transport.js'],
              allowTypeImports: true,
              message: 'cli/ sends no requests of its own: it calls the SDK client (cli/api.ts).',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        {
          name: 'fetch',
          message: 'cli/ sends no requests of its own: it calls the SDK client (cli/api.ts).',
        },
      ],
      '@typescript-eslint/consistent-type-assertions': ['error', { assertionStyle: 'never' }],
    },
  },
  {
    // protocol/ is the leaf both the server and the client import: it imports nothing of theirs.
    files: ['protocol/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/lib/**', '**/sdk/**', '**/cli/**', '@aws-sdk/*'], message: 'protocol/ is a leaf.' },
            NO_INFRA,
          ],
        },
      ],
    },
  },
);
