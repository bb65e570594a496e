import { GatewayError } from '../../client/errors.js';
import type { GatewayClient } from '../../client/gateway-client.js';
import { type DownloadResult, download, checkTarget, outputPath } from '../../core/download.js';
import { downloadJson } from '../shared/job-output.js';
import { GwError } from '../../core/errors.js';
import type { Context } from '../../cli/context.js';
import type { Flags } from '../../cli/verb.js';
import type { downloadFlags } from './download.js';
import { formatLocalTime, formatRelative, resumeCommand } from './shared.js';
import { videoSource } from '../../core/download-sources.js';
import { isVideoSuccess, videoExpiresAt } from '../../contract/video.js';
import * as videos from '../../client/resources/videos.js';

const RENEWAL = 'renewal of expired result URLs is outside the contract';

function expiredError(id: string, detail: string): GwError {
  return new GwError(`the result URL of video ${id} has expired ${detail}; ${RENEWAL}`, {
    code: 'result_expired',
    hint: `create the video again (gw video create …); \`gw video get ${id}\` shows expires_at`,
  });
}

/**
 * Downloads a finished video atomically (see core/download.ts): checks the record first (not ready → exit 1 with
 * the hint to wait; failed/cancelled → TaskFailedError; expires_at in the past → a clear expiry error), then
 * streams `GET /v1/videos/{id}/content` through the redirect with a progress bar on a TTY.
 */
export async function downloadVideo(
  ctx: Context,
  client: GatewayClient,
  id: string,
  o: { file: string; force: boolean; sha256?: boolean | undefined },
): Promise<DownloadResult> {
  await checkTarget(o.file, o.force);
  const rec = await videos.retrieve(client, id, { signal: ctx.signal });
  const state = rec.data.status;
  ctx.journal().update('video', id, state);
  const failure = videos.failureOf(id, rec);
  if (failure) throw failure;
  if (!isVideoSuccess(state)) {
    throw new GwError(`video ${id} is not ready yet (state ${state})`, {
      code: 'video_not_ready',
      requestId: rec.requestId,
      hint: `wait for it first: ${resumeCommand(id)} && gw video download ${id}`,
    });
  }
  const expires = videoExpiresAt(rec.data);
  if (expires !== undefined && expires.getTime() <= Date.now()) {
    throw expiredError(
      id,
      `(expires_at ${formatLocalTime(expires)}, ${formatRelative(expires.getTime() - Date.now())})`,
    );
  }

  let bar: { tick(n: number): void; done(): void } | undefined;
  try {
    const result = await download({
      file: o.file,
      force: o.force,
      sha256: o.sha256,
      signal: ctx.signal,
      stdout: ctx.io.stdout,
      ...videoSource(client, id),
      onProgress: (n, total) => {
        bar ??= ctx.progress.bar(`${id}`, total);
        bar.tick(n);
      },
    });
    ctx.journal().update('video', id, state, {
      file: result.path,
      ...(result.sha256 !== undefined ? { sha256: result.sha256 } : {}),
    });
    return result;
  } catch (e) {
    if (e instanceof GatewayError && e.code === 'video_not_ready') {
      throw new GwError(e.message, {
        code: e.code,
        requestId: e.requestId,
        hint: `wait for it first: ${resumeCommand(id)}`,
      });
    }
    // A 403 without a gateway request id comes from the result URL's origin (the CDN), not the gateway.
    if (e instanceof GatewayError && e.status === 403 && e.requestId === undefined) {
      throw expiredError(id, '(its origin answered 403)');
    }
    throw e;
  } finally {
    bar?.done();
  }
}

/** Downloads one finished video; prints the path written (or with --json the download object). */
export default async function run(
  ctx: Context,
  opts: Flags<typeof downloadFlags>,
  id: string,
): Promise<void> {
  const file = outputPath(opts.output ?? `${id}.mp4`, `${id}.mp4`);
  const client = await ctx.client();
  const r = await downloadVideo(ctx, client, id, { file, force: opts.force, sha256: opts.sha256 });
  if (file === '-') return;
  await ctx.out.result(downloadJson(r), () => ctx.out.line(r.path));
}
