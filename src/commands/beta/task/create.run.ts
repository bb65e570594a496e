import { buildBetaTaskBody } from './build-body.js';
import type { Context } from '../../../cli/context.js';
import type { Flags } from '../../../cli/verb.js';
import type { taskCreateFlags } from './create.js';
import { printDryRun } from '../../shared/dry-run.js';
import { checkCreateDownloadTarget, downloadJson, shellWord } from '../../shared/job-output.js';
import { LOCAL_LIMITS, parseLocalJson, readLocalText } from '../../../core/local-file.js';
import { betaQuoteLines } from '../../../contract/beta.js';
import { assertSucceeded, followTask, resumeCommand } from './wait.run.js';
import { downloadTask } from './download.run.js';
import { outputPath } from '../../../core/download.js';
import * as tasks from '../../../client/resources/beta-tasks.js';

async function readBodyFile(path: string, signal: AbortSignal): Promise<Record<string, unknown>> {
  const flag = '--body';
  const text = await readLocalText(path, { flag, field: flag, limit: LOCAL_LIMITS.body, signal });
  return parseLocalJson(text, { flag, path, object: 'the request body' }) as Record<string, unknown>;
}

/** Creates a task (or prints the dry run); with --wait/--download follows it. */
export default async function run(
  ctx: Context,
  opts: Flags<typeof taskCreateFlags>,
  prompt: string | undefined,
): Promise<void> {
  const base = opts.body !== undefined ? await readBodyFile(opts.body, ctx.signal) : {};
  let body = buildBetaTaskBody(
    {
      model: opts.model ?? ctx.defaultModel('beta'),
      prompt,
      firstFrame: opts.firstFrame,
      lastFrame: opts.lastFrame,
      refImages: opts.refImage,
      refVideos: opts.refVideo,
      refAudios: opts.refAudio,
      duration: opts.duration,
      ratio: opts.ratio,
      resolution: opts.resolution,
      generateAudio: opts.generateAudio,
      watermark: opts.watermark,
      returnLastFrame: opts.returnLastFrame,
      priority: opts.priority,
      serviceTier: opts.serviceTier,
      draft: opts.draft,
      executionExpiresAfter: opts.executionExpiresAfter,
      safetyIdentifier: opts.safetyIdentifier,
      callbackUrl: opts.callbackUrl,
    },
    base,
  );
  // Checked once, by the resource's own check, before anything else (a dry run, the connection settings):
  // bad input is exit 2, nothing sent. The client below then skips its check.
  if (ctx.globals.validate) {
    const prepared = await tasks.prepareCreate(body);
    for (const w of prepared.warnings) ctx.out.warn(w);
    body = prepared.body;
  }
  if (opts.dryRun === true) {
    await printDryRun(ctx, {
      path: tasks.BETA_TASKS_PATH,
      body,
      notes: (price) => (price.beta !== undefined ? betaQuoteLines(price.beta) : []),
    });
    return;
  }
  const waitMs = ctx.waitLimitMs();
  // Refuse before creating (and billing) anything.
  if (opts.download !== undefined) await checkCreateDownloadTarget(opts.download, 'gw beta task download');
  const client = await ctx.client({ validate: false });
  const res = await tasks.create(client, body, { signal: ctx.signal });
  const id = res.data.id;
  ctx.recordCreated(client, {
    kind: 'beta-task',
    id,
    model: String(body.model),
    requestId: res.requestId,
  });
  if (opts.wait !== true && opts.download === undefined) {
    await ctx.out.result(res.data, () => ctx.out.line(id));
    return;
  }
  ctx.out.humanLine(id);
  const resume =
    opts.download !== undefined
      ? `${resumeCommand(ctx, id)} && gw beta task download ${id} -o ${shellWord(opts.download)}`
      : undefined;
  const task = await followTask(ctx, client, id, { timeoutMs: waitMs, resume });
  if (task.status !== 'succeeded') ctx.out.jsonOnly({ id, task });
  assertSucceeded(task);
  let download;
  if (opts.download !== undefined) {
    download = (await downloadTask(ctx, client, task, { file: outputPath(opts.download, `${id}.mp4`) }))
      .video;
    ctx.out.note(`saved ${download.path}`);
  }
  ctx.out.jsonOnly({ id, task, ...(download ? { download: downloadJson(download) } : {}) });
}
