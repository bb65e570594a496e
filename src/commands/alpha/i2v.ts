import { Command } from 'commander';
import type { Runtime } from '../context.js';
import type { I2vFlags } from './build-body.js';

/** The options of `gw alpha i2v`. */
/** The flags with `--model` filled from the profile's `defaults.i2v` when it was omitted. */
function withDefaultModel(opts: I2vOptions, model: string | undefined): I2vOptions {
  return opts.model === undefined && model !== undefined ? { ...opts, model } : opts;
}

interface I2vOptions extends I2vFlags {
  multipart?: boolean;
  dryRun?: boolean;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

const HELP = `
Images: --image, --image-tail and --static-mask take an http(s) URL (sent as it is) or a local PNG or JPEG
file (read and sent as Base64). --dynamic-mask takes a local PNG/JPEG mask file: the document wants masks
as Base64. Trajectory points are integer pixel coordinates with the origin at the BOTTOM-LEFT of the image,
2 to 77 points per mask, at most 6 masks. A mask's resolution must equal the image's: checked before
sending when both are local files, otherwise a warning says the upstream may fail.
Exclusive: --image-tail, the masks (--static-mask/--dynamic-mask) and --camera cannot be combined.
Model rules: --cfg-scale only alpha-v1, alpha-v1-5, alpha-v1-6; --sound and --voice only alpha-v2-6
(--voice needs --sound on, at most 2). Defaults (the gateway's): alpha-v1, std, 16:9, 5 seconds.
--body <file.json> gives a whole or partial request body; flags override its fields.
Output: the task id (also written to the journal first: gw history --kind alpha); --json: the whole answer.

Examples:
  gw alpha i2v --image first.png --prompt "the cat turns its head"
  gw alpha i2v --image https://example.com/a.jpg --camera simple:zoom=5 --duration 10 --mode pro
  gw alpha i2v --image first.png --dynamic-mask "mask.png:120,80;300,90;480,120" --static-mask still.png
  gw alpha i2v --image first.png --model alpha-v2-6 --sound on --voice '{"voice_id":"v1"}'
  gw alpha i2v --body request.json --prompt "override the prompt" --dry-run`;

/** `gw alpha i2v`: create an image-to-video task (alpha-image2video.md). */
export default function i2vCommand(rt: Runtime): Command {
  return new Command('i2v')
    .description('create an image-to-video task (POST /alpha/v1/videos/image2video); prints the task id')
    .option('--image <url|file>', 'first-frame image: URL, or a PNG/JPEG file (required, here or in --body)')
    .option('--image-tail <url|file>', 'last-frame image: URL, or a PNG/JPEG file')
    .option('--prompt <text>', 'text prompt')
    .option('--negative-prompt <text>', 'negative text prompt')
    .option(
      '--model <alpha model>',
      "model_name (default: the profile's defaults.i2v, else alpha-v1; see gw models)",
    )
    .option('--mode <std|pro>', 'generation mode (default std)')
    .option('--duration <5|10>', 'seconds, sent as the string "5" or "10" (default 5)')
    .option('--aspect-ratio <16:9|9:16|1:1>', 'aspect ratio (default 16:9)')
    .option('--cfg-scale <0..1>', 'prompt adherence, 0 to 1 (alpha-v1, alpha-v1-5, alpha-v1-6 only)')
    .option('--static-mask <url|file>', 'static brush area: URL, or a PNG/JPEG file')
    .option(
      '--dynamic-mask <file>:<x,y;x,y;...>',
      'dynamic brush: a PNG/JPEG mask file and its trajectory (integer points, origin bottom-left); repeatable',
      collect,
    )
    .option('--camera <type>[:key=value,...]', 'camera_control, e.g. simple:zoom=5 or down_back')
    .option('--sound <on|off>', 'sound (alpha-v2-6 only)')
    .option('--voice <json>', 'one voice_list entry as JSON, e.g. \'{"voice_id":"v1"}\'; repeatable', collect)
    .option('--watermark-info <json>', 'watermark_info as JSON, e.g. \'{"enabled":true}\'')
    .option('--callback-url <https url>', 'notification address')
    .option('--external-task-id <id>', 'your own task id')
    .option('--body <file.json>', 'a whole or partial request body; flags override its fields')
    .option('--multipart', 'send multipart/form-data instead of JSON')
    .option('--dry-run', 'print the body (Base64 abbreviated) and send nothing')
    .addHelpText('after', HELP)
    .action(
      rt.action(async (ctx, opts: I2vOptions) => {
        const { buildI2vBody, preloadI2vFiles } = await import('./build-body.js');
        const { ALPHA_IMAGE2VIDEO_PATH, effectiveModel } = await import('../../contract/alpha.js');
        const { abbreviateBody, alphaWarnings } = await import('./flags.js');
        const alpha = await import('../../client/resources/alpha.js');
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
          // The one estimator gw batch also uses: no list price is published for alpha tasks.
          const { estimateRequest } = await import('../../contract/estimate.js');
          const est = estimateRequest(ALPHA_IMAGE2VIDEO_PATH, body);
          ctx.out.note(`dry run: POST ${ALPHA_IMAGE2VIDEO_PATH} as ${encoding}; nothing was sent`);
          if (!est.priced) ctx.out.note(est.reason);
          ctx.out.json(abbreviateBody(body));
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
            typeof body.external_task_id === 'string'
              ? { external_task_id: body.external_task_id }
              : undefined,
        });
        if (ctx.globals.json) ctx.out.json(res.data);
        else ctx.out.line(task.task_id);
      }),
    );
}
