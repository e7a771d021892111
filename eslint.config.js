import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
    // The core must not know AWS or where it runs.
    files: ['lib/**/*.ts'],
    ignores: ['lib/adapters/aws/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@aws-sdk/*', 'aws-lambda'], message: 'Only lib/adapters/aws may import the AWS SDK.' },
          ],
        },
      ],
    },
  },
  {
    files: ['lib/core/**/*.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'lib/core reads no process state; pass configuration in.' },
      ],
      // The core knows nothing of HTTP, AWS or where it runs (this repeats lib/'s AWS patterns, as a
      // file's no-restricted-imports is the last block's that matches it).
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@aws-sdk/*', 'aws-lambda'], message: 'Only lib/adapters/aws may import the AWS SDK.' },
            { group: ['**/http/**', '**/adapters/**'], message: 'lib/core imports no HTTP edge or adapter.' },
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
          ],
        },
      ],
    },
  },
);
