/**
 * `gw batch download <dir>`: the files of a batch's succeeded video and beta tasks that it does not have — a run
 * with `--no-download`, or files removed since — fetched through the same download path as a run (follow.ts:
 * identity, If-Range, the part's lock, strict 206), and results.jsonl rewritten whole with their `files`. The
 * directory's lock is held. Items still running are the run's to finish (`gw batch run`/`retry` resumes them).
 */
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { GatewayClient } from '../client/gateway-client.js';
import { isVideoSuccess } from '../contract/video.js';
import { UsageError } from '../core/errors.js';
import { PriorityGate, resultFiles, saveFiles, type FileToSave } from './follow.js';
import { readRecords, rewrite } from './lines.js';
import type { BatchSinks } from './options.js';
import { outputLineSchema, type OutputLine, type SavedFile } from './output.js';
import { withBatchLock } from './session.js';
import { RESULTS_FILE, STATE_FILE } from './state.js';

/** Options of downloadBatch. */
export interface DownloadBatchOptions extends Pick<BatchSinks, 'onLockWait' | 'onWarning'> {
  out: string;
  client: GatewayClient | (() => Promise<GatewayClient>);
  waitLock?: boolean | undefined;
  signal?: AbortSignal | undefined;
}

/** What a batch download did (`gw batch download --json`). */
export interface DownloadBatchDoc {
  dir: string;
  /** Items whose files were fetched now. */
  downloaded: number;
  bytes: number;
  /** Items that already had their files. */
  present: number;
  failed: Array<{ custom_id: string; code: string; message: string }>;
}

/** The files a line's final task record offers: a succeeded beta task's or video's (none for other items). */
function wanted(client: GatewayClient, id: string, task: unknown): FileToSave[] {
  const t = (task ?? {}) as Record<string, unknown>;
  if (t.status === 'succeeded' && typeof t.content === 'object') return resultFiles(client, id, 'beta', t);
  return isVideoSuccess(t.status) ? resultFiles(client, id, 'video', t) : [];
}

/** True when every file a line lists is in the directory with its size. */
async function present(dir: string, files: readonly SavedFile[] | undefined): Promise<boolean> {
  if (files === undefined || files.length === 0) return false;
  for (const f of files) {
    try {
      if ((await stat(resolve(dir, f.path))).size !== f.bytes) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** Downloads the missing files of a batch's succeeded tasks. */
export async function downloadBatch(o: DownloadBatchOptions): Promise<DownloadBatchDoc> {
  const dir = resolve(o.out);
  try {
    await stat(join(dir, STATE_FILE));
  } catch {
    throw new UsageError(`${o.out} is not a batch directory (no ${STATE_FILE})`, { field: 'dir' });
  }
  return withBatchLock(dir, o, false, async () => {
    const doc: DownloadBatchDoc = { dir, downloaded: 0, bytes: 0, present: 0, failed: [] };
    const path = join(dir, RESULTS_FILE);
    let client: GatewayClient | undefined;
    const fc = {
      signal: o.signal ?? new AbortController().signal,
      dir,
      download: true,
      downloads: new PriorityGate(1),
    };
    await rewrite(path, async (out) => {
      for await (const { value, text } of readRecords(path, outputLineSchema, 'a batch output line')) {
        let line = text;
        if (!(await present(dir, value.files))) {
          client ??= typeof o.client === 'function' ? await o.client() : o.client;
          const files = await fetchFiles(fc, doc, value, wanted(client, value.custom_id, value.task), o);
          if (files !== undefined) line = JSON.stringify({ ...value, files });
        } else doc.present++;
        await out.write(`${line}\n`);
      }
    });
    return doc;
  });
}

async function fetchFiles(
  fc: Parameters<typeof saveFiles>[0],
  doc: DownloadBatchDoc,
  line: Pick<OutputLine, 'custom_id'>,
  files: ReturnType<typeof wanted>,
  o: DownloadBatchOptions,
): Promise<SavedFile[] | undefined> {
  if (files.length === 0) return undefined;
  try {
    const saved = (await saveFiles(fc, undefined, 0, files)) ?? [];
    doc.downloaded++;
    for (const f of saved) doc.bytes += f.bytes;
    return saved;
  } catch (e) {
    if (fc.signal.aborted) throw e;
    const code = (e as { code?: unknown }).code;
    const failure = {
      custom_id: line.custom_id,
      code: typeof code === 'string' ? code : 'error',
      message: e instanceof Error ? e.message : String(e),
    };
    doc.failed.push(failure);
    o.onWarning?.(`${failure.custom_id}: ${failure.code}: ${failure.message}`);
    return undefined;
  }
}
