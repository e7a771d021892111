/** `cluster` and `health`: what the deployment is, and whether it answers. */
import type { CommandSpec } from '../command.js';
import { renderFields, renderTable } from '../table.js';

export const cluster: CommandSpec = {
  words: ['cluster'],
  summary: 'Show the cluster id, version and replica stores.',
  args: [],
  options: {},
  async run(ctx) {
    const description = await ctx.api.cluster();
    if (ctx.json) return void (await ctx.print(JSON.stringify(description)));
    const stores = renderTable(
      [
        { header: 'STORE', value: (s) => s.id },
        { header: 'LOCATION', value: (s) => s.location },
      ],
      description.stores,
    );
    await ctx.print(
      `${renderFields([
        ['ClusterId', description.clusterId],
        ['Version', description.version],
        ['URL', ctx.api.url],
      ])}\n\n${stores}`,
    );
  },
};

export const health: CommandSpec = {
  words: ['health'],
  summary: 'Check that the API answers.',
  args: [],
  options: {},
  async run(ctx) {
    const started = ctx.now();
    const answer = await ctx.api.health();
    const ms = Math.round(ctx.now() - started);
    await ctx.print(
      ctx.json
        ? JSON.stringify({ ...answer, url: ctx.api.url, latencyMs: ms })
        : `${answer.status} (${ctx.api.url}, ${ms} ms)`,
    );
  },
};
