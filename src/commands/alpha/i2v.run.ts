import type { Context } from '../../cli/context.js';
import type { Flags } from '../../cli/verb.js';
import type { i2vFlags } from './i2v.js';
import { type I2vFlags, buildI2vBody, preloadI2vFiles } from './build-body.js';
import { ALPHA_IMAGE2VIDEO_PATH, effectiveModel } from '../../contract/alpha.js';
import { abbreviateBody, alphaWarnings } from './flags.js';
import { printDryRun } from '../shared/dry-run.js';
import * as alpha from '../../client/resources/alpha.js';

/** The flags with `--model` filled from the profile's `defaults.i2v` when it was omitted. */
function withDefaultModel(opts: I2vFlags, model: string | undefined): I2vFlags {
  return opts.model === undefined && model !== undefined ? { ...opts, model } : opts;
}

/** Creates the task (or prints the dry run); prints the task id. */
export default async function run(ctx: Context, opts: Flags<typeof i2vFlags>): Promise<void> {
  const read = await preloadI2vFiles(opts, ctx.signal);
  const body = buildI2vBody(withDefaultModel(opts, ctx.defaultModel('i2v')), {
    validate: ctx.globals.validate,
    read,
  });
  // Checked once, by the resource's own check, before anything else (even before the connection settings):
  // bad input is exit 2, nothing sent. The client below then skips its check.
  if (ctx.globals.validate) alpha.checkImage2Video(body);
  for (const w of alphaWarnings(body)) ctx.out.warn(w);
  const encoding = opts.multipart === true ? 'multipart/form-data' : 'application/json';
  if (opts.dryRun === true) {
    const notes = (): string[] => [`the body would be sent as ${encoding}`];
    await printDryRun(ctx, { path: ALPHA_IMAGE2VIDEO_PATH, body, shown: abbreviateBody(body), notes });
    return;
  }
  const client = await ctx.client({ validate: false });
  const spinner = await ctx.progress.spinner(`creating the image-to-video task (${encoding})`);
  let res: Awaited<ReturnType<typeof alpha.image2video>>;
  try {
    res = await alpha.image2video(client, body, { signal: ctx.signal, multipart: opts.multipart });
  } finally {
    spinner.stop();
  }
  const task = res.data.data;
  const requestId = res.data.request_id ?? res.requestId;
  // The journal first: a script killed right after this line still finds the task in gw history.
  ctx.recordCreated(client, {
    kind: 'alpha',
    id: task.task_id,
    model: effectiveModel(body),
    requestId,
    state: task.task_status,
    extra:
      typeof body.external_task_id === 'string' ? { external_task_id: body.external_task_id } : undefined,
  });
  await ctx.out.result(res.data, () => ctx.out.line(task.task_id));
}
