import type { Context } from '../../cli/context.js';
import type { Flags } from '../../cli/verb.js';
import type { createFlags } from './create.js';
import { printDryRun } from '../shared/dry-run.js';
import { checkCreateDownloadTarget } from '../shared/job-output.js';
import { waitAndDownloadVideo } from './wait.run.js';
import { isVideoUrl, videoCreateWarnings } from '../../contract/video.js';
import * as videos from '../../client/resources/videos.js';

type CreateFlags = Flags<typeof createFlags>;

/** The §2.3 body from the flags: `--ref` images as `{image_url}` objects (videos as URL strings). */
function buildBody(prompt: string, f: CreateFlags & { model: string }): Record<string, unknown> {
  const body: Record<string, unknown> = { model: f.model, prompt };
  const seconds = f.seconds;
  if (seconds !== undefined) body.seconds = seconds;
  if (f.resolution !== undefined) body.resolution = f.resolution;
  const seed = f.seed;
  if (seed !== undefined) body.seed = seed;
  const item = (url: string): unknown => (isVideoUrl(url) ? url : { image_url: url });
  const refs = f.ref ?? [];
  if (refs.length === 1) body.input_reference = item(refs[0] as string);
  else if (refs.length > 1) body.input_reference = refs.map(item);
  if (f.inputImage !== undefined) body.input_image = f.inputImage;
  if (f.refVideo !== undefined) body.references = { video: f.refVideo };
  return body;
}

/** `--dry-run`: the shared shape, with a note when clip-1.1's default resolution set the price. */
async function dryRun(ctx: Context, body: Record<string, unknown>): Promise<void> {
  await printDryRun(ctx, {
    path: '/v1/videos',
    body,
    notes: (price) =>
      price.video?.resolutionDefaulted === true
        ? [
            '1080p is the clip-1.1 default resolution; pass --resolution 720p for the lower price (CNY 0.90/s)',
          ]
        : [],
  });
}

/** Creates the video (or prints the dry run); with --wait/--download follows it. */
export default async function run(ctx: Context, flags: CreateFlags, prompt: string): Promise<void> {
  const f = { ...flags, model: ctx.model(flags.model, 'video') };
  const body = buildBody(prompt, f);
  if (ctx.globals.validate) {
    videos.validateCreate(body);
    // Recommendations (1 to 9 r2v images) warn; they are not rules.
    for (const w of videoCreateWarnings(body as Parameters<typeof videoCreateWarnings>[0])) ctx.out.warn(w);
  }
  if (f.dryRun) return dryRun(ctx, body);

  const wantsWait = f.wait || f.download !== undefined;
  const waitTimeoutMs = ctx.waitLimitMs();
  if (f.download !== undefined) await checkCreateDownloadTarget(f.download, 'gw video download');
  // The body was checked above (before --dry-run and any local check): once is enough.
  const client = await ctx.client({ validate: false });
  const res = await videos.create(client, body as Parameters<typeof videos.create>[1], {
    signal: ctx.signal,
  });
  const id = res.data.video_id;
  // Journal first: a crash between here and the print must not lose a billed task.
  ctx.recordCreated(client, {
    kind: 'video',
    id,
    model: f.model,
    requestId: res.requestId,
    state: res.data.status,
  });
  if (!wantsWait) {
    await ctx.out.result(res.data, () => ctx.out.line(id));
    return;
  }
  // One command, one JSON document: {id, video, download?} once the job ends. In text mode the id goes to
  // stdout before waiting; with --json it is in the journal, and any error's resume hint carries it.
  ctx.out.humanLine(id);
  await waitAndDownloadVideo(ctx, client, id, {
    timeoutMs: waitTimeoutMs,
    download: f.download,
    sha256: f.sha256,
  });
}
