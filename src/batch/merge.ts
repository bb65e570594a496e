/**
 * `gw batch merge <dir>... --out <dir>`: joins the outputs of sharded runs. Each custom_id appears once: a
 * success anywhere wins over a failure elsewhere; the first of two successes is kept (a warning names it).
 * Downloaded files are copied under `<out>/files/` and their paths rewritten; the state logs are concatenated so
 * `gw batch status <out>` covers the whole batch. Streams line by line (only the custom_ids are held).
 */
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { constants, copyFile, mkdir, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { UsageError } from '../core/errors.js';
import { ERRORS_FILE, FILES_DIR, RESULTS_FILE, STATE_FILE } from './state.js';
import type { OutputLine } from './output.js';

async function* lines(path: string): AsyncGenerator<string> {
  try {
    await stat(path);
  } catch {
    return;
  }
  const rl = createInterface({
    input: createReadStream(path, { highWaterMark: 256 * 1024 }),
    crlfDelay: Infinity,
  });
  for await (const l of rl) if (l.trim().length > 0) yield l;
}

async function write(ws: WriteStream, text: string): Promise<void> {
  if (!ws.write(text)) await once(ws, 'drain');
}

async function close(ws: WriteStream): Promise<void> {
  await new Promise<void>((res, rej) => ws.end((e?: Error | null) => (e ? rej(e) : res())));
}

/** What a merge did. */
export interface MergeReport {
  out: string;
  results: number;
  errors: number;
  duplicates: string[];
}

/** Merges batch directories into `out`. */
export async function mergeBatches(dirs: readonly string[], outDir: string): Promise<MergeReport> {
  const out = resolve(outDir);
  for (const d of dirs) {
    try {
      await stat(join(d, STATE_FILE));
    } catch {
      throw new UsageError(`${d} is not a batch directory (no ${STATE_FILE})`, { field: 'dir' });
    }
    if (resolve(d) === out)
      throw new UsageError(`--out: must differ from the merged directories`, { field: '--out' });
  }
  await mkdir(join(out, FILES_DIR), { recursive: true });
  const ok = new Set<string>();
  const report: MergeReport = { out, results: 0, errors: 0, duplicates: [] };
  const results = createWriteStream(join(out, RESULTS_FILE), { mode: 0o600 });
  for (const d of dirs) {
    for await (const l of lines(join(d, RESULTS_FILE))) {
      const rec = JSON.parse(l) as OutputLine;
      if (ok.has(rec.custom_id)) {
        report.duplicates.push(rec.custom_id);
        continue;
      }
      ok.add(rec.custom_id);
      if (rec.files !== undefined) {
        for (const f of rec.files) {
          const target = join(out, FILES_DIR, basename(f.path));
          await copyFile(f.path, target, constants.COPYFILE_FICLONE);
          f.path = target;
        }
      }
      await write(results, `${JSON.stringify(rec)}\n`);
      report.results++;
    }
  }
  await close(results);
  const errors = createWriteStream(join(out, ERRORS_FILE), { mode: 0o600 });
  const failed = new Set<string>();
  for (const d of dirs) {
    for await (const l of lines(join(d, ERRORS_FILE))) {
      const rec = JSON.parse(l) as OutputLine;
      if (ok.has(rec.custom_id) || failed.has(rec.custom_id)) continue;
      failed.add(rec.custom_id);
      await write(errors, `${l}\n`);
      report.errors++;
    }
  }
  await close(errors);
  const state = createWriteStream(join(out, STATE_FILE), { mode: 0o600 });
  for (const d of dirs) for await (const l of lines(join(d, STATE_FILE))) await write(state, `${l}\n`);
  await close(state);
  return report;
}
