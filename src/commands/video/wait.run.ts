import type { ApiResult, GatewayClient } from '../../client/gateway-client.js';
import { GatewayError } from '../../client/errors.js';
import { type VideoRecord, isVideoFailure } from '../../contract/video.js';
import { formatDuration } from '../../core/duration.js';
import { InterruptedError, TaskNotSucceededError, TimeLimitError, UsageError } from '../../core/errors.js';
import { downloadJson, printWaitOutcome } from '../shared/job-output.js';
import type { Context } from '../../cli/context.js';
import { resumeCommand } from './shared.js';
import { isTimeout, isInterrupted } from '../../core/error-map.js';
import { clockOf } from '../../ui/io.js';
import type { Flags } from '../../cli/verb.js';
import type { waitFlags } from './wait.js';
import { downloadVideo } from './download.run.js';
import { outputPath, checkTarget } from '../../core/download.js';
import * as videos from '../../client/resources/videos.js';

/** Limits of a wait. */
export interface VideoWaitLimits {
  /** Overall limit (exit 4 past it); undefined waits until a terminal state or Ctrl-C. */
  timeoutMs?: number | undefined;
  /** The `--timeout` the user gave, for the message, when `timeoutMs` is what is left of it (several ids). */
  givenMs?: number | undefined;
  /** First poll delay (backoff starts here, capped at 30 s or the interval if larger). */
  intervalMs?: number | undefined;
  /** Sees the terminal answer before a failure is thrown (`--json` prints it either way). */
  onFinal?: ((res: ApiResult<VideoRecord>) => void) | undefined;
  /** The command that resumes the whole job (default: `gw video wait <id>`). */
  resume?: string | undefined;
}

/**
 * Follows a video to a terminal state with a spinner (TTY only), recording each new state in the journal.
 * Returns the successful record; throws TaskNotSucceededError (exit 1) for failed/cancelled, and TimeLimitError (4) or
 * InterruptedError (130) carrying the resume command as their hint.
 */
export async function waitForVideo(
  ctx: Context,
  client: GatewayClient,
  id: string,
  limits: VideoWaitLimits = {},
): Promise<ApiResult<VideoRecord>> {
  const journal = ctx.journal();
  const spinner = await ctx.progress.spinner(`${id} waiting`);
  const started = Date.now();
  let last: string | undefined;
  try {
    const res = await videos.wait(client, id, {
      signal: ctx.signal,
      timeoutMs: limits.timeoutMs,
      initialMs: limits.intervalMs ?? 2000,
      maxMs: Math.max(30_000, limits.intervalMs ?? 0),
      requestTimeoutMs: ctx.settings().timeoutMs,
      onUpdate: (rec, elapsed) => {
        spinner.update(`${id} ${rec.status}`);
        if (rec.status !== last) {
          last = rec.status;
          journal.update('video', id, rec.status);
          ctx.out.verbose(`${id}: ${rec.status} after ${formatDuration(elapsed)}`);
        }
      },
      onTransient: (e, ms) => ctx.out.verbose(`${id}: ${e.message}; polling again in ${formatDuration(ms)}`),
      ...clockOf(ctx.io),
    });
    limits.onFinal?.(res);
    const failure = videos.failureOf(id, res);
    const took = formatDuration(Date.now() - started);
    if (failure) {
      spinner.fail(`${id} ${res.data.status} after ${took}`);
      throw failure;
    }
    spinner.succeed(`${id} ${res.data.status} after ${took}`);
    return res;
  } catch (e) {
    spinner.stop();
    const state = last !== undefined ? `still ${last}` : 'not finished';
    if (isTimeout(e)) {
      const given = limits.givenMs ?? limits.timeoutMs;
      const limit = given !== undefined ? ` (--timeout ${formatDuration(given)})` : '';
      // The poll's limit carries its last failure (a GatewayError) as the cause; a request cut at the limit is that
      // failure itself (its own cause is undici's or the abort's raw error, not worth showing).
      const failed =
        e.cause instanceof GatewayError
          ? e.cause
          : e instanceof GatewayError && e.cause !== undefined
            ? e
            : undefined;
      const why = failed !== undefined ? `; the last poll failed: ${failed.message}` : '';
      throw new TimeLimitError(
        `video ${id} is ${state} after ${formatDuration(Date.now() - started)}${limit}${why}`,
        {
          hint: `resume with: ${limits.resume ?? resumeCommand(id)}`,
          requestId: e.requestId,
        },
      );
    }
    if (isInterrupted(e)) {
      throw new InterruptedError(`interrupted while waiting for video ${id} (${state})`, {
        hint: `resume with: ${limits.resume ?? resumeCommand(id)}`,
      });
    }
    throw e;
  }
}

/**
 * Waits for one video and, with `download`, saves it: the job of `create --wait/--download` and
 * `wait --download`. With --json prints one document {id, video, download?} (also when the video failed, before
 * the error); a timeout or Ctrl-C names the command that resumes the whole job.
 */
export async function waitAndDownloadVideo(
  ctx: Context,
  client: GatewayClient,
  id: string,
  o: {
    timeoutMs: number | undefined;
    intervalMs?: number | undefined;
    download?: string | undefined;
    sha256?: boolean | undefined;
  },
): Promise<void> {
  let final: VideoRecord | undefined;
  await waitForVideo(ctx, client, id, {
    timeoutMs: o.timeoutMs,
    intervalMs: o.intervalMs,
    resume: resumeCommand(id, o.download),
    onFinal: (r) => {
      final = r.data;
      const failed = isVideoFailure(r.data.status);
      if (failed || o.download === undefined) ctx.out.jsonOnly({ id, video: r.data });
    },
  });
  if (o.download === undefined) return;
  const file = outputPath(o.download, `${id}.mp4`);
  const r = await downloadVideo(ctx, client, id, { file, force: false, sha256: o.sha256 });
  await ctx.out.result({ id, video: final, download: downloadJson(r) }, () =>
    ctx.out.note(`saved ${r.path} (${r.bytes} bytes)`),
  );
}

/** Waits for the videos (and with --download saves the one). */
export default async function run(ctx: Context, opts: Flags<typeof waitFlags>, ids: string[]): Promise<void> {
  const timeoutMs = ctx.waitLimitMs(opts.timeout);
  const intervalMs = opts.interval;
  if (opts.download !== undefined && ids.length > 1) {
    throw new UsageError('--download: takes one video id (it names one file)', {
      field: '--download',
    });
  }
  if (opts.download !== undefined) {
    await checkTarget(opts.download, false, { allowDirectory: true });
  }
  const client = await ctx.client();
  const [only] = ids;
  if (opts.download !== undefined && only !== undefined) {
    await waitAndDownloadVideo(ctx, client, only, {
      timeoutMs,
      intervalMs,
      download: opts.download,
      sha256: opts.sha256,
    });
    return;
  }
  const deadline = timeoutMs !== undefined ? Date.now() + timeoutMs : undefined;
  const records: VideoRecord[] = [];
  const failed: Array<{ id: string; state: string; error: unknown }> = [];
  for (const [i, id] of ids.entries()) {
    const rest = ids.slice(i);
    let final: VideoRecord | undefined;
    try {
      const res = await waitForVideo(ctx, client, id, {
        timeoutMs: deadline !== undefined ? Math.max(1, deadline - Date.now()) : undefined,
        givenMs: timeoutMs,
        intervalMs,
        resume: `gw video wait ${rest.join(' ')}`,
        onFinal: (r) => {
          final = r.data;
          records.push(r.data);
        },
      });
      printWaitOutcome(ctx, id, res.data.status);
    } catch (e) {
      // A video that ended failed/cancelled does not stop the others; a timeout or Ctrl-C does (its hint
      // names the ids still open).
      if (final === undefined) throw e;
      failed.push({ id, state: final.status, error: e });
    }
  }
  ctx.out.jsonOnly(ids.length === 1 ? records[0] : { videos: records });
  const [first] = failed;
  if (first === undefined) return;
  if (ids.length === 1) throw first.error;
  throw new TaskNotSucceededError(
    `${failed.length} of ${ids.length} videos did not complete: ${failed.map((f) => `${f.id} ${f.state}`).join(', ')}`,
    {
      state: first.state,
      taskId: first.id,
      code: 'videos_failed',
      hint: `\`gw video get <id>\` shows each error`,
    },
  );
}
