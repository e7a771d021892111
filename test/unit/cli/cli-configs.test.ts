/**
 * `sluice configs` sets and shows client quotas with kafka-configs.sh's flags, against the real routes
 * in this process; bad flags are usage errors (exit 2) and send nothing.
 */
import { describe, expect, it } from 'vitest';
import { cli } from '../../support/cli-fake.js';
import { routerFetch } from '../../support/router-fetch.js';
import { memorySluice } from '../../support/log-support.js';

const setup = () => {
  const { sluice } = memorySluice({ clientQuotas: {} });
  let requests = 0;
  const fetch = routerFetch(sluice.router(), () => void requests++);
  return { fetch, sluice, sent: () => requests };
};

describe('sluice configs', () => {
  it('alters and describes users, clients, defaults and both', async () => {
    const { fetch, sluice } = setup();
    const alter = async (...args: string[]) => (await cli(['configs', '--alter', ...args], fetch)).code;
    expect(
      await alter(
        '--add-config',
        'producer_byte_rate=1024,consumer_byte_rate=2048',
        '--entity-type',
        'clients',
        '--entity-name',
        'billing',
      ),
    ).toBe(0);
    expect(
      await alter('--add-config', 'request_percentage=50', '--entity-type', 'users', '--entity-default'),
    ).toBe(0);
    expect(
      await alter(
        '--add-config',
        'controller_mutation_rate=2',
        '--user',
        'arn:aws:iam::1:user/a',
        '--client-defaults',
      ),
    ).toBe(0);
    expect(await sluice.quotas.configs.describe({})).toEqual(
      expect.arrayContaining([
        {
          entity: { 'client-id': 'billing' },
          values: { producer_byte_rate: 1024, consumer_byte_rate: 2048 },
        },
        { entity: { user: null }, values: { request_percentage: 50 } },
        {
          entity: { user: 'arn:aws:iam::1:user/a', 'client-id': null },
          values: { controller_mutation_rate: 2 },
        },
      ]),
    );
    const shown = await cli(
      ['configs', '--describe', '--entity-type', 'clients', '--entity-name', 'billing'],
      fetch,
    );
    expect(shown.code).toBe(0);
    expect(shown.stdout).toBe(
      "Quota configs for client-id 'billing' are consumer_byte_rate=2048, producer_byte_rate=1024\n",
    );
    const all = await cli(['configs', '--describe', '--json'], fetch);
    expect(JSON.parse(all.stdout).entries).toHaveLength(3);
    expect(
      await alter(
        '--delete-config',
        'producer_byte_rate',
        '--entity-type',
        'clients',
        '--entity-name',
        'billing',
      ),
    ).toBe(0);
    const after = await cli(
      ['configs', '--describe', '--entity-type', 'clients', '--entity-name', 'billing'],
      fetch,
    );
    expect(after.stdout).toBe("Quota configs for client-id 'billing' are consumer_byte_rate=2048\n");
  });

  it.each([
    [['configs', '--add-config', 'producer_byte_rate=1', '--entity-type', 'users', '--entity-default']],
    [['configs', '--alter', '--describe', '--entity-type', 'users', '--entity-default']],
    [
      [
        'configs',
        '--alter',
        '--add-config',
        'producer_byte_rate=1',
        '--entity-type',
        'topics',
        '--entity-name',
        't',
      ],
    ],
    [
      [
        'configs',
        '--alter',
        '--add-config',
        'producer_byte_rate=0',
        '--entity-type',
        'users',
        '--entity-default',
      ],
    ],
    [['configs', '--alter', '--add-config', 'fetch_rate=1', '--entity-type', 'users', '--entity-default']],
    [['configs', '--alter', '--add-config', 'producer_byte_rate=1', '--entity-type', 'users']],
    [['configs', '--alter', '--entity-type', 'users', '--entity-default']],
    [['configs', '--alter', '--add-config', 'producer_byte_rate=1', '--user', 'u', '--user-defaults']],
  ])('refuses %j as a usage error and sends nothing', async (argv) => {
    const { fetch, sent } = setup();
    const result = await cli(argv, fetch);
    expect(result.code).toBe(2);
    expect(sent()).toBe(0);
  });
});
