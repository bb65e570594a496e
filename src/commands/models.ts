import { Command } from 'commander';
import type { Runtime } from './context.js';
import { formatLocalTime } from './video/shared.js';

/** `gw models`: list the models visible to the token. */
export default function modelsCommand(rt: Runtime): Command {
  return new Command('models')
    .description('list the models visible to the token (GET /v1/models)')
    .addHelpText('after', "\nExamples:\n  gw models\n  gw models --json | jq -r '.data[].id'")
    .action(
      rt.action(async (ctx) => {
        const models = await import('../client/resources/models.js');
        const client = await ctx.client();
        const res = await models.list(client, { signal: ctx.signal });
        const { saveModelIds } = await import('./model-cache.js');
        saveModelIds(
          ctx.io.env,
          client.baseUrl,
          res.data.data.map((m) => m.id),
        );
        if (ctx.globals.json) {
          ctx.out.json(res.data);
          return;
        }
        await ctx.out.table(
          ['id', 'owned_by', 'created'],
          res.data.data.map((m) => [
            m.id,
            m.owned_by,
            m.created !== undefined ? formatLocalTime(new Date(m.created * 1000)) : '',
          ]),
        );
      }),
    );
}
