import { Command } from 'commander';
import type { Context, Runtime } from '../context.js';
import { checkCreateDownloadTarget } from '../job-output.js';
import { collect, parseSecondsFlag, parseSeedFlag } from './shared.js';
import { waitAndDownloadVideo } from './wait.js';

interface CreateFlags {
  model?: string;
  seconds?: string;
  resolution?: string;
  seed?: string;
  ref?: string[];
  inputImage?: string;
  refVideo?: string[];
  wait: boolean;
  download?: string;
  sha256: boolean;
  dryRun: boolean;
}

/** The §2.3 body from the flags: `--ref` images as `{image_url}` objects (videos as URL strings). */
async function buildBody(
  prompt: string,
  f: CreateFlags & { model: string },
): Promise<Record<string, unknown>> {
  const { isVideoUrl } = await import('../../contract/video.js');
  const body: Record<string, unknown> = { model: f.model, prompt };
  const seconds = parseSecondsFlag(f.seconds);
  if (seconds !== undefined) body.seconds = seconds;
  if (f.resolution !== undefined) body.resolution = f.resolution;
  const seed = parseSeedFlag(f.seed);
  if (seed !== undefined) body.seed = seed;
  const item = (url: string): unknown => (isVideoUrl(url) ? url : { image_url: url });
  const refs = f.ref ?? [];
  if (refs.length === 1) body.input_reference = item(refs[0] as string);
  else if (refs.length > 1) body.input_reference = refs.map(item);
  if (f.inputImage !== undefined) body.input_image = f.inputImage;
  if (f.refVideo !== undefined) body.references = { video: f.refVideo };
  return body;
}

async function dryRun(ctx: Context, body: Record<string, unknown>): Promise<void> {
  // The one estimator gw batch also uses (--dry-run, --budget).
  const { estimateRequest } = await import('../../contract/estimate.js');
  const model = String(body.model);
  const price = estimateRequest('/v1/videos', body).video;
  const notes: string[] = [];
  if (price?.resolutionDefaulted === true) {
    notes.push(
      '1080p is the clip-1.1 default resolution; pass --resolution 720p for the lower price (CNY 0.90/s)',
    );
  }
  if (ctx.globals.json) {
    ctx.out.json({ method: 'POST', path: '/v1/videos', body, list_price: price ?? null, notes });
    return;
  }
  ctx.out.line('POST /v1/videos');
  ctx.out.line(JSON.stringify(body, null, 2));
  if (price === undefined) {
    ctx.out.line(
      `list price: not given by the contract for ${model} (list prices are published for clip-1.1 only)`,
    );
  } else if (price.amount === undefined) {
    ctx.out.line(
      `list price: CNY ${price.perSecond.toFixed(2)}/s at ${price.resolution} (seconds not given: the gateway's default length applies)`,
    );
  } else {
    ctx.out.line(
      `list price: CNY ${price.amount.toFixed(2)} (${price.seconds} s × CNY ${price.perSecond.toFixed(2)}/s at ${price.resolution}, clip-1.1 domestic list price)`,
    );
  }
  for (const n of notes) ctx.out.line(n);
  ctx.out.line('dry run: nothing was sent');
}

/** `gw video create <prompt> -m <model> …`: prints only the video_id (journalled first). */
export function createCommand(rt: Runtime): Command {
  return new Command('create')
    .description(
      'create a video task; prints only its video_id (--dry-run: the body and list price, sends nothing)',
    )
    .argument('<prompt>', 'description of the video')
    .option(
      '-m, --model <model>',
      "video model (clip-1.1-t2v, vid-2.7-i2v, …; default: the profile's defaults.video)",
    )
    .option('--seconds <n>', 'integer seconds, 2 to 15 (clip-1.x: 3 to 15)')
    .option('--resolution <r>', '720p or 1080p (clip-1.1 defaults to 1080p)')
    .option('--seed <n>', 'integer 0 to 2147483647, sent as a JSON number')
    .option(
      '--ref <url>',
      'reference image (https) or video (.mp4/.mov) → input_reference; repeatable',
      collect,
    )
    .option('--input-image <url>', 'first-frame image (https) → input_image (i2v models)')
    .option('--ref-video <url>', 'reference video (.mp4/.mov) → references.video[]; repeatable', collect)
    .option('--wait', 'then wait until it finishes (the id is printed first)', false)
    .option('--download <file>', 'then wait and download it to <file> (implies --wait)')
    .option('--sha256', "with --download: also compute the file's SHA-256", false)
    .option('--dry-run', 'print the body and the list price; send nothing', false)
    .addHelpText(
      'after',
      `
Every rule of the video API is checked before sending (exit 2, nothing sent; --no-validate sends anyway).
The video_id is written to the journal (gw history) before it is printed. --json prints the gateway's answer;
with --wait/--download it prints one document {"id", "video": <final record>, "download": {"path", "bytes",
"resumed", "sha256" (with --sha256)}} instead. Ctrl-C or --timeout print the command that resumes the whole job.

Examples:
  id=$(gw video create "a red fox in snow" -m clip-1.1-t2v --seconds 5 --resolution 720p)
  gw video create "a red fox in snow" -m clip-1.1-t2v --seconds 5 --dry-run
  gw video create "the fox runs" -m clip-1.1-i2v --input-image https://example.com/fox.png --seconds 5
  gw video create "in this style" -m vid-2.7-r2v --ref-video https://example.com/a.mp4 --download styled.mp4`,
    )
    .action(
      rt.action(async (ctx, prompt: string, flags: CreateFlags) => {
        const f = { ...flags, model: ctx.model(flags.model, 'video') };
        const videos = await import('../../client/resources/videos.js');
        const { videoCreateWarnings } = await import('../../contract/video.js');
        const body = await buildBody(prompt, f);
        if (ctx.globals.validate) {
          videos.validateCreate(body);
          // Recommendations (1 to 9 r2v images) warn; they are not rules.
          for (const w of videoCreateWarnings(body as Parameters<typeof videoCreateWarnings>[0]))
            ctx.out.warn(w);
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
          if (ctx.globals.json) ctx.out.json(res.data);
          else ctx.out.line(id);
          return;
        }
        // One command, one JSON document: {id, video, download?} once the job ends. In text mode the id goes to
        // stdout before waiting; with --json it is in the journal, and any error's resume hint carries it.
        if (!ctx.globals.json) ctx.out.line(id);
        await waitAndDownloadVideo(ctx, client, id, {
          timeoutMs: waitTimeoutMs,
          download: f.download,
          sha256: f.sha256,
        });
      }),
    );
}
