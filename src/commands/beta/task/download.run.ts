import type { GatewayClient } from '../../../client/gateway-client.js';
import type { BetaTask } from '../../../contract/beta.js';
import { type DownloadResult, download, checkTarget, outputPath } from '../../../core/download.js';
import { GwError, UsageError } from '../../../core/errors.js';
import type { Context } from '../../../cli/context.js';
import type { Flags } from '../../../cli/verb.js';
import type { taskDownloadFlags } from './download.js';
import { downloadJson } from '../../shared/job-output.js';
import { resultUrlSource } from '../../../core/download-sources.js';
import * as tasks from '../../../client/resources/beta-tasks.js';

const TTL_NOTE = 'the result URL stays valid about 24 hours: keep your own copy';

/** Downloads one result URL (atomic .part + rename, Range resume, progress on stderr). */
async function fetchTo(
  ctx: Context,
  client: GatewayClient,
  url: string,
  file: string,
  o: { force?: boolean | undefined; sha256?: boolean | undefined; id?: string | undefined },
): Promise<DownloadResult> {
  const bar = ctx.progress.bar(file === '-' ? 'download' : file, undefined);
  try {
    return await download({
      file,
      force: o.force,
      sha256: o.sha256,
      signal: ctx.signal,
      stdout: ctx.io.stdout,
      onProgress: (n) => bar.tick(n),
      ...resultUrlSource(client, url, o.id),
    });
  } finally {
    bar.done();
  }
}

/** What `task download` wrote. */
export interface TaskDownload {
  id: string;
  video: DownloadResult;
  last_frame?: DownloadResult;
}

/** Writes a succeeded task's `content.video_url` (and `last_frame_url` when asked) to files. */
export async function downloadTask(
  ctx: Context,
  client: GatewayClient,
  task: BetaTask,
  o: {
    file: string;
    lastFrame?: string | undefined;
    force?: boolean | undefined;
    sha256?: boolean | undefined;
  },
): Promise<TaskDownload> {
  const video = task.content?.video_url;
  if (task.status !== 'succeeded' || video === undefined) {
    throw new GwError(`task ${task.id} is ${task.status}: only a succeeded task has a video to download`, {
      code: 'task_not_ready',
      hint: `wait for it first: gw beta task wait ${task.id}`,
    });
  }
  const frame = task.content?.last_frame_url;
  if (o.lastFrame !== undefined && frame === undefined) {
    throw new GwError(`task ${task.id} has no content.last_frame_url`, {
      code: 'no_last_frame',
      hint: 'create the task with --return-last-frame to get its last frame',
    });
  }
  await checkTarget(o.file, o.force); // refuse before any byte moves
  if (o.lastFrame !== undefined) await checkTarget(o.lastFrame, o.force);
  const out: TaskDownload = {
    id: task.id,
    video: await fetchTo(ctx, client, video, o.file, { ...o, id: task.id }),
  };
  if (o.lastFrame !== undefined && frame !== undefined) {
    out.last_frame = await fetchTo(ctx, client, frame, o.lastFrame, { ...o, id: `${task.id}#last_frame` });
  }
  ctx.journal().update('beta-task', task.id, task.status, { file: out.video.path });
  ctx.out.tip(TTL_NOTE); // decorative: only on a terminal
  return out;
}

/** Downloads a succeeded task's video (and last frame). */
export default async function run(
  ctx: Context,
  opts: Flags<typeof taskDownloadFlags>,
  id: string,
): Promise<void> {
  if (opts.output === '-' && ctx.out.opts.json) {
    throw new UsageError(
      'output: -o - writes the video to standard output, which --json needs for its document',
      { field: 'output' },
    );
  }
  const file = outputPath(opts.output ?? `${id}.mp4`, `${id}.mp4`);
  await checkTarget(file, opts.force); // refuse before anything is sent
  if (opts.lastFrame !== undefined) await checkTarget(opts.lastFrame, opts.force);
  const client = await ctx.client();
  const task = (await tasks.retrieve(client, id, { signal: ctx.signal })).data;
  const r = await downloadTask(ctx, client, task, {
    file,
    lastFrame: opts.lastFrame,
    force: opts.force,
    sha256: opts.sha256,
  });
  await ctx.out.result(
    {
      id: r.id,
      video: downloadJson(r.video),
      ...(r.last_frame !== undefined ? { last_frame: downloadJson(r.last_frame) } : {}),
    },
    () => {
      if (r.video.path !== '-') ctx.out.line(r.video.path);
      if (r.last_frame !== undefined) ctx.out.line(r.last_frame.path);
    },
  );
}
