import { Command } from 'commander';
import type { ApiResult, GatewayClient } from '../../client/gateway-client.js';
import type { VideoRecord } from '../../contract/video.js';
import { formatDuration, parsePositiveDuration } from '../../core/duration.js';
import { InterruptedError, TimeoutError } from '../../core/errors.js';
import type { Context, Runtime } from '../context.js';
import { resumeCommand } from './shared.js';
import { isTimeout, isInterrupted } from '../../core/error-map.js';

/** Limits of a wait. */
export interface VideoWaitLimits {
  /** Overall limit (exit 4 past it); undefined waits until a terminal state or Ctrl-C. */
  timeoutMs?: number | undefined;
  /** First poll delay (backoff starts here, capped at 30 s or the interval if larger). */
  intervalMs?: number | undefined;
  /** Sees the terminal answer before a failure is thrown (`--json` prints it either way). */
  onFinal?: ((res: ApiResult<VideoRecord>) => void) | undefined;
}

/**
 * Follows a video to a terminal state with a spinner (TTY only), recording each new state in the journal.
 * Returns the successful record; throws TaskFailedError (exit 1) for failed/cancelled, and TimeoutError (4) or
 * InterruptedError (130) carrying the resume command as their hint.
 */
export async function waitForVideo(
  ctx: Context,
  client: GatewayClient,
  id: string,
  limits: VideoWaitLimits = {},
): Promise<ApiResult<VideoRecord>> {
  const videos = await import('../../client/resources/videos.js');
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
      const limit = limits.timeoutMs !== undefined ? ` (--timeout ${formatDuration(limits.timeoutMs)})` : '';
      const why = e.cause instanceof Error ? `; the last poll failed: ${e.cause.message}` : '';
      throw new TimeoutError(
        `video ${id} is ${state} after ${formatDuration(Date.now() - started)}${limit}${why}`,
        {
          hint: `resume with: ${resumeCommand(id)}`,
          requestId: e.requestId,
        },
      );
    }
    if (isInterrupted(e)) {
      throw new InterruptedError(`interrupted while waiting for video ${id} (${state})`, {
        hint: `resume with: ${resumeCommand(id)}`,
      });
    }
    throw e;
  }
}

/** `gw video wait <video_id>`: poll until completed/success (0), failed/cancelled (1), timeout (4). */
export function waitCommand(rt: Runtime): Command {
  return new Command('wait')
    .description(
      'wait until a video reaches a terminal state (exit 0 completed/success, 1 failed/cancelled, 4 timeout)',
    )
    .argument('<video_id>', 'the video_id printed by gw video create')
    .option(
      '--timeout <dur>',
      'give up after this long (exit 4, the resume command on stderr); default: no limit',
    )
    .option(
      '--interval <dur>',
      'first polling delay, more than 0 (default 2s; backoff with jitter, capped at 30s)',
    )
    .addHelpText(
      'after',
      `
Polls GET /v1/videos/{id} with exponential backoff and jitter, honouring Retry-After. queued, in_progress and
processing keep it waiting; Ctrl-C exits 130 and prints the command that resumes the wait.

--json prints the final record exactly as the gateway sent it (also when it ended failed/cancelled), e.g.
  {"video_id": "video_…", "status": "completed", "url": "https://…", "expires_at": 1767312000, …}

Examples:
  gw video wait video_123 --timeout 15m
  id=$(gw video create "a red fox in snow" -m clip-1.1-t2v --seconds 5 --resolution 720p)
  gw video wait "$id" --timeout 15m && gw video download "$id" -o fox.mp4`,
    )
    .action(
      rt.action(async (ctx, id: string, opts: { timeout?: string; interval?: string }) => {
        const timeoutMs = ctx.waitLimitMs(opts.timeout);
        const intervalMs =
          opts.interval !== undefined ? parsePositiveDuration(opts.interval, 'interval') : undefined;
        const client = await ctx.client();
        const res = await waitForVideo(ctx, client, id, {
          timeoutMs,
          intervalMs,
          onFinal: (r) => {
            if (ctx.globals.json) ctx.out.json(r.data);
          },
        });
        if (!ctx.progress.enabled) ctx.out.note(`${id} ${res.data.status}`);
      }),
    );
}
