/**
 * Following a created task of a batch (a video or a beta task) to its end: polled like `gw video wait`, then its
 * results downloaded like `gw video download` — through core/download.ts with the same sources (the task's
 * identity, If-Range, the part's lock, strict 206 checks), so a `.part` of another task for the same custom_id is
 * never continued. A follow that cannot finish for a passing reason (a cut connection, a full disk, a gateway
 * that keeps failing) leaves the task created: the next run, or `retry`, follows it again and resumes its part,
 * instead of failing a finished, billed task.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { GatewayError } from '../client/errors.js';
import type { GatewayClient } from '../client/gateway-client.js';
import type { PriceTable } from '../contract/prices.js';
import { download } from '../core/download.js';
import { resultUrlSource, videoSource, type DownloadSource } from '../core/download-sources.js';
import { laneHooks, throughLane, type LaneHooks } from './lane.js';
import type { Limits } from './limits.js';
import type { BatchClock, JournaledKind } from './options.js';
import { extensionOf, outputLine, type OutputLine, type SavedFile } from './output.js';
import { impliedBy } from './spend.js';
import { FILES_DIR, type Money, type TaskKind } from './state.js';
import * as videos from '../client/resources/videos.js';
import * as tasks from '../client/resources/beta-tasks.js';

/** A gate whose waiters are served in order of a priority (downloads: soonest `expires_at` first). */
export class PriorityGate {
  #free: number;
  #queue: Array<{ prio: number; go: () => void }> = [];
  constructor(size: number) {
    this.#free = size;
  }
  async acquire(prio: number): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return;
    }
    await new Promise<void>((go) => {
      this.#queue.push({ prio, go });
      this.#queue.sort((a, b) => a.prio - b.prio);
    });
  }
  release(): void {
    const next = this.#queue.shift();
    if (next !== undefined) next.go();
    else this.#free++;
  }
}

/** What following needs from the run. */
export interface FollowContext {
  client: GatewayClient;
  limits: Limits;
  /** The run's stop: Ctrl-C, --timeout, a fatal error. */
  signal: AbortSignal;
  dir: string;
  /** --prices: the spend a finished task's record implies. */
  prices: PriceTable | undefined;
  download: boolean;
  downloads: PriorityGate;
  clock: BatchClock;
  /** A task's new state (journal, state log); never throws. */
  onState: (kind: JournaledKind, state: string) => void;
}

/** The item to follow. */
export interface FollowItem {
  id: string;
  kind: TaskKind;
  task: string;
  url: string;
  model: string;
  body: Record<string, unknown> | undefined;
  /** The create's answer as results.jsonl shows it. */
  response: NonNullable<OutputLine['response']>;
}

/** How a follow ended: the item's line (succeeded or failed), or left created with the reason. */
export type FollowEnd =
  | { ok: true; line: OutputLine; implied: Money | undefined }
  | { ok: false; code: string; line: OutputLine }
  | { unfinished: { code: string; message: string } };

/** One file to save: its name under files/ (without extension), the URL its extension comes from, its source. */
export interface FileToSave {
  name: string;
  url: string;
  source: DownloadSource;
}

/**
 * Is a failure of a follow final? The task is gone or its result can no longer be had (404, 410, an expired
 * result URL): the item fails. Anything else passes (a cut, a timeout, a 5xx, the disk): it stays created.
 */
function isFinal(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  if (code === 'result_url_expired') return true;
  return e instanceof GatewayError && (e.status === 404 || e.status === 410);
}

/** Follows one created task to its end. Throws only when the run stops (the item stays created). */
export async function follow(fc: FollowContext, it: FollowItem): Promise<FollowEnd> {
  const lane = laneHooks(fc.limits, it.model, fc.clock.sleep);
  try {
    return it.kind === 'video' ? await followVideo(fc, it, lane) : await followBeta(fc, it, lane);
  } catch (e) {
    if (fc.signal.aborted) throw e;
    const code = (e as { code?: unknown }).code;
    const err = {
      code: typeof code === 'string' ? code : 'error',
      message: e instanceof Error ? e.message : String(e),
    };
    if (!isFinal(e)) return { unfinished: err };
    return {
      ok: false,
      code: err.code,
      line: outputLine(it.id, it.response, err, { task: { id: it.task } }),
    };
  }
}

/** The options of a task's wait: the run's signal and clock, and the model's lane (its pauses and 429s). */
function waitOptions<U>(fc: FollowContext, lane: LaneHooks, onUpdate: U) {
  return { signal: fc.signal, now: fc.clock.now, onUpdate, sleep: lane.sleep, onTransient: lane.onTransient };
}

/**
 * The files a succeeded task's final record offers: a video's content, or a beta task's video and last frame
 * (named `<custom_id>.last_frame`). The one list a run's follow and `gw batch download` both save.
 */
export function resultFiles(
  client: GatewayClient,
  id: string,
  kind: 'video' | 'beta',
  task: unknown,
): FileToSave[] {
  const t = (task ?? {}) as Record<string, unknown>;
  if (kind === 'video') {
    const videoId = t.id ?? t.video_id;
    if (typeof videoId !== 'string') return [];
    return [
      { name: id, url: typeof t.url === 'string' ? t.url : 'x.mp4', source: videoSource(client, videoId) },
    ];
  }
  const content = (t.content ?? {}) as Record<string, unknown>;
  if (typeof content.video_url !== 'string' || typeof t.id !== 'string') return [];
  const out = [
    { name: id, url: content.video_url, source: resultUrlSource(client, content.video_url, t.id) },
  ];
  if (typeof content.last_frame_url === 'string') {
    const source = resultUrlSource(client, content.last_frame_url, `${t.id}#last_frame`);
    out.push({ name: `${id}.last_frame`, url: content.last_frame_url, source });
  }
  return out;
}

async function followVideo(fc: FollowContext, it: FollowItem, lane: LaneHooks): Promise<FollowEnd> {
  const onUpdate = (r: { status: unknown }): void => fc.onState('video', String(r.status));
  const res = await throughLane(lane, fc.signal, () =>
    videos.wait(fc.client, it.task, waitOptions(fc, lane, onUpdate)),
  );
  const failure = videos.failureOf(it.task, res);
  if (failure !== undefined) {
    const err = { code: failure.code, message: failure.message };
    return { ok: false, code: err.code, line: outputLine(it.id, it.response, err, { task: res.data }) };
  }
  const expires = Number((res.data as { expires_at?: unknown }).expires_at);
  const wanted = resultFiles(fc.client, it.id, 'video', { ...res.data, id: it.task });
  const files = await saveFiles(fc, lane, Number.isFinite(expires) ? expires : Infinity, wanted);
  return {
    ok: true,
    implied: impliedBy(it.url, it.model, it.body, res.data, fc.prices),
    line: outputLine(it.id, it.response, null, { task: res.data, files }),
  };
}

async function followBeta(fc: FollowContext, it: FollowItem, lane: LaneHooks): Promise<FollowEnd> {
  const onUpdate = (t: { status: string }): void => fc.onState('beta-task', t.status);
  const rec = await throughLane(lane, fc.signal, () =>
    tasks.wait(fc.client, it.task, waitOptions(fc, lane, onUpdate)),
  );
  if (rec.status !== 'succeeded') {
    const code = rec.error?.code ?? `task_${rec.status}`;
    const err = { code, message: rec.error?.message ?? `task ${it.task} ended ${rec.status}` };
    return { ok: false, code, line: outputLine(it.id, it.response, err, { task: rec }) };
  }
  const wanted = resultFiles(fc.client, it.id, 'beta', { ...rec, id: it.task });
  // Result URLs live about 24 hours from the task's end.
  const files = await saveFiles(
    fc,
    lane,
    Number(rec.updated_at ?? Infinity) * 1000 + 24 * 3600 * 1000,
    wanted,
  );
  return {
    ok: true,
    implied: impliedBy(it.url, it.model, it.body, rec, fc.prices),
    line: outputLine(it.id, it.response, null, { task: rec, files }),
  };
}

/**
 * Downloads an item's files into `files/` (none with `download: false`), the soonest to expire first. Each
 * opening of a file goes through the model's lane (a 429 pauses the model and opens it again after).
 */
export async function saveFiles(
  fc: Pick<FollowContext, 'signal' | 'dir' | 'download' | 'downloads'>,
  lane: LaneHooks | undefined,
  expires: number,
  wanted: FileToSave[],
): Promise<SavedFile[] | undefined> {
  if (!fc.download) return undefined;
  const files: SavedFile[] = [];
  if (wanted.length === 0) return files;
  await fc.downloads.acquire(expires);
  try {
    await mkdir(join(fc.dir, FILES_DIR), { recursive: true });
    for (const w of wanted) {
      const name = `${w.name}.${extensionOf(w.url)}`;
      const signal = fc.signal;
      const open = w.source.open;
      const r = await download({
        file: join(fc.dir, FILES_DIR, name),
        force: true,
        signal,
        identity: w.source.identity,
        open: (start, sig, headers) =>
          lane !== undefined
            ? throughLane(lane, signal, () => open(start, sig, headers))
            : open(start, sig, headers),
      });
      files.push({ path: `${FILES_DIR}/${name}`, bytes: r.bytes });
    }
  } finally {
    fc.downloads.release();
  }
  return files;
}
