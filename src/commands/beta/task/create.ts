import { Command } from 'commander';
import {
  BETA_RATIOS,
  BETA_RESOLUTIONS,
  buildBetaTaskBody,
  intOrText,
  type BetaQuote,
} from '../../../contract/beta.js';
import { estimateRequest } from '../../../contract/estimate.js';
import { UsageError } from '../../../core/errors.js';
import type { Context, Runtime } from '../../context.js';
import { checkCreateDownloadTarget, downloadJson, shellWord } from '../../job-output.js';

interface CreateOptions {
  model?: string;
  firstFrame?: string;
  lastFrame?: string;
  refImage?: string[];
  refVideo?: string[];
  refAudio?: string[];
  duration?: string;
  ratio?: string;
  resolution?: string;
  generateAudio?: boolean;
  watermark?: boolean;
  returnLastFrame?: boolean;
  priority?: string;
  serviceTier?: string;
  draft?: boolean;
  body?: string;
  executionExpiresAfter?: string;
  safetyIdentifier?: string;
  callbackUrl?: string;
  wait?: boolean;
  download?: string;
  dryRun?: boolean;
}

const collect = (v: string, acc: string[] = []): string[] => [...acc, v];

async function readBodyFile(path: string, signal: AbortSignal): Promise<Record<string, unknown>> {
  const { LOCAL_LIMITS, readLocalFile } = await import('../../../core/local-file.js');
  const text = (
    await readLocalFile(path, { flag: 'body', field: 'body', limit: LOCAL_LIMITS.body, signal })
  ).toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`body: cannot read ${path} as JSON: ${(e as Error).message}`, { field: 'body' });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new UsageError(`body: ${path} must hold a JSON object`, {
      field: 'body',
    });
  }
  return parsed as Record<string, unknown>;
}

/** `--dry-run`: the body, then the SKU of §2.3 and its price (every candidate when the resolution is open). */
function printDryRun(ctx: Context, body: Record<string, unknown>): void {
  // The one estimator gw batch also uses; it quotes every beta task.
  const est = estimateRequest('/beta/api/v3/contents/generations/tasks', body);
  const { lines, ...quote } = est.beta as BetaQuote;
  if (ctx.globals.json) {
    ctx.out.json({ body, ...quote });
    return;
  }
  ctx.out.json(body);
  for (const l of lines) ctx.out.line(l);
}

/** `gw beta task create [prompt]`: prints the task id (journaled first); `--wait` and `--download` chain. */
export default function createCommand(rt: Runtime): Command {
  return new Command('create')
    .description('create a native video task; prints its id')
    .argument('[prompt]', 'the prompt text (a content item of type text)')
    .option(
      '-m, --model <model>',
      'public model name (gamma-video-2-0, -fast, -mini, -filter-off, -fast-filter-off) or a dated name',
    )
    .option(
      '--first-frame <asset>',
      'image asset as the strict first frame (asset://<id>, Asset://<id> or a bare id)',
    )
    .option('--last-frame <asset>', 'image asset as the strict last frame')
    .option('--ref-image <asset>', 'reference image asset (repeatable)', collect)
    .option(
      '--ref-video <asset>',
      'reference video asset (repeatable; 1 to edit/extend, 2-3 to join)',
      collect,
    )
    .option('--ref-audio <asset>', 'reference audio asset (repeatable; not on mini)', collect)
    .option('--duration <n>', 'seconds 4..15, or -1 to let the model choose')
    .option('--ratio <r>', `aspect ratio: ${BETA_RATIOS.join(', ')}`)
    .option(
      '--resolution <r>',
      `${BETA_RESOLUTIONS.join(', ')} (4k only on gamma-video-2-0; fast and mini 480p/720p)`,
    )
    .option('--generate-audio', 'generate audio')
    .option('--no-generate-audio', 'no audio')
    .option('--watermark', 'keep the watermark')
    .option('--no-watermark', 'no watermark')
    .option('--return-last-frame', 'also return content.last_frame_url')
    .option('--priority <n>', 'queue priority 0..9')
    .option('--service-tier <t>', 'service tier (default, flex; flex not on mini)')
    .option('--draft', 'draft mode (not on mini)')
    .option(
      '--body <file.json>',
      'a JSON body to start from; flags override its fields (content flags replace its content)',
    )
    .option('--execution-expires-after <s>', 'execution expiry in seconds (usually 3600..259200)')
    .option('--safety-identifier <id>', 'stable end-user id (a hash is advised)')
    .option(
      '--callback-url <https url>',
      'https URL resolving to a public address; notified on state changes',
    )
    .option('--wait', 'wait until the task ends (limit: --timeout; default none)')
    .option('--download <file>', 'wait, then save the video to <file>')
    .option('--dry-run', 'print the body and the SKU and price it would bill under; send nothing')
    .addHelpText(
      'after',
      `
Prints only the task id (written to the local journal first, see gw history). With --wait/--download the id is
printed before waiting; exit codes then follow gw beta task wait. With --json: the gateway's {id}, or with --wait
one document {id, task, download?: {path, bytes, resumed}}; a timeout or Ctrl-C prints the command that resumes
the whole job (wait, then download). --dry-run needs no token.

Examples:
  gw beta task create "a lighthouse at dusk, slow dolly in" -m gamma-video-2-0 --resolution 1080p --duration 8
  gw beta task create "extend forward, keep the original clip" -m gamma-video-2-0-fast --ref-video "$(echo "$refs" | tail -1)"
  gw beta task create "the cat jumps" -m gamma-video-2-0-mini --first-frame "$(echo "$refs" | head -1)" --dry-run
  id=$(gw beta task create "waves" -m gamma-video-2-0-fast --download waves.mp4)`,
    )
    .action(
      rt.action(async (ctx, prompt: string | undefined, opts: CreateOptions) => {
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
            duration: intOrText(opts.duration),
            ratio: opts.ratio,
            resolution: opts.resolution,
            generateAudio: opts.generateAudio,
            watermark: opts.watermark,
            returnLastFrame: opts.returnLastFrame,
            priority: intOrText(opts.priority),
            serviceTier: opts.serviceTier,
            draft: opts.draft,
            executionExpiresAfter: intOrText(opts.executionExpiresAfter),
            safetyIdentifier: opts.safetyIdentifier,
            callbackUrl: opts.callbackUrl,
          },
          base,
        );
        const tasks = await import('../../../client/resources/beta-tasks.js');
        // Checked once, by the resource's own check, before anything else (a dry run, the connection settings):
        // bad input is exit 2, nothing sent. The client below then skips its check.
        if (ctx.globals.validate) {
          const prepared = await tasks.prepareCreate(body);
          for (const w of prepared.warnings) ctx.out.warn(w);
          body = prepared.body;
        }
        if (opts.dryRun === true) {
          printDryRun(ctx, body);
          return;
        }
        const waitMs = ctx.waitLimitMs();
        // Refuse before creating (and billing) anything.
        if (opts.download !== undefined)
          await checkCreateDownloadTarget(opts.download, 'gw beta task download');
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
          if (ctx.globals.json) ctx.out.json(res.data);
          else ctx.out.line(id);
          return;
        }
        if (!ctx.globals.json) ctx.out.line(id);
        const { assertSucceeded, followTask, resumeCommand } = await import('./wait.js');
        const resume =
          opts.download !== undefined
            ? `${resumeCommand(ctx, id)} && gw beta task download ${id} -o ${shellWord(opts.download)}`
            : undefined;
        const task = await followTask(ctx, client, id, { timeoutMs: waitMs, resume });
        if (task.status !== 'succeeded' && ctx.globals.json) ctx.out.json({ id, task });
        assertSucceeded(task);
        let download;
        if (opts.download !== undefined) {
          const { downloadTask } = await import('./download.js');
          const { outputPath } = await import('../../../core/download.js');
          download = (await downloadTask(ctx, client, task, { file: outputPath(opts.download, `${id}.mp4`) }))
            .video;
          if (!ctx.globals.json) ctx.out.note(`saved ${download.path}`);
        }
        if (ctx.globals.json)
          ctx.out.json({ id, task, ...(download ? { download: downloadJson(download) } : {}) });
      }),
    );
}
