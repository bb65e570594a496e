/**
 * `gw batch merge <dir>... --out <dir>`: joins the outputs of sharded runs, trusting nothing in them. The
 * directories must be the shards of one run (the same run identity and n: exit 2 otherwise); a shard given by two
 * directories (a scheduler that ran an index twice) is taken once, from the one with more done; a missing shard
 * is named and fails unless allowed (core/shard.ts joinShards). Every line is read through its writer's schema (a
 * torn last line is skipped as a run does, a damaged one is exit 2 naming the file and line); a file a result
 * names is looked for only in that shard's own `files/` (by its name: a shard moved from another machine works,
 * and `/etc/hostname` is no file of a shard) and must have the size its line says. All of that is checked before
 * anything is written. Each custom_id appears once: a success anywhere wins over a failure elsewhere; the first of
 * two successes is kept. The state logs are joined, ended by a merge record, so `gw batch status <out>` covers the
 * whole batch and names the missing shards. Streams line by line (only the custom_ids are held).
 */
import { constants, copyFile, lstat, mkdir, readdir, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { GwError, UsageError } from '../core/errors.js';
import { fsError } from '../core/fs-errors.js';
import { joinShards, parseShard, type ShardPart } from '../core/shard.js';
import { DamagedFileError, readRecords, rewrite } from './lines.js';
import type { BatchSinks } from './options.js';
import { outputLineSchema, type SavedFile } from './output.js';
import { withBatchLock } from './session.js';
import {
  ERRORS_FILE,
  FILES_DIR,
  LOCK_FILE,
  RESULTS_FILE,
  STATE_FILE,
  stateRecordSchema,
  type StateRecord,
} from './state.js';

/** Options of mergeBatches. */
export interface MergeOptions extends Pick<BatchSinks, 'onLockWait'> {
  dirs: readonly string[];
  out: string;
  /** Write into a non-empty `out` (its results, errors and state are replaced). */
  force?: boolean | undefined;
  /** Merge even when shards of the run are missing (the report names them). */
  allowMissing?: boolean | undefined;
  waitLock?: boolean | undefined;
  signal?: AbortSignal | undefined;
}

/** What a merge did (`gw batch merge --json`). */
export interface MergeReport {
  out: string;
  results: number;
  errors: number;
  duplicates: string[];
  /**
   * The run, its shards merged and missing, as k/n (an unsharded run is 1/1), and the directories left out as
   * copies of a shard another directory gave (a scheduler that ran an index twice).
   */
  shards: {
    run: string | null;
    merged: string[];
    missing: string[];
    skipped: Array<{ shard: string; dir: string }>;
  };
}

/** Which part of which run a directory holds: the shards of its runs (a merged directory holds several). */
interface ShardIdentity extends ShardPart {
  dir: string;
}

async function* records(path: string): AsyncGenerator<{ value: StateRecord; text: string }> {
  try {
    await stat(path);
  } catch {
    return;
  }
  yield* readRecords(path, stateRecordSchema, 'a state record');
}

/**
 * A directory's shards and run, from its run records (all of one run, or exit 2), and its score among copies of
 * the same shard (a scheduler that ran an index twice into two directories): the one with more items done, then
 * the one written last, is kept.
 */
async function identityOf(dir: string): Promise<ShardIdentity> {
  let run: string | undefined;
  let n = 0;
  let done = 0;
  let lastAt = 0;
  const ks = new Set<number>();
  for await (const { value: r } of records(join(dir, STATE_FILE))) {
    lastAt = Math.max(lastAt, r.at);
    if (r.e === 'done') done++;
    if (r.e !== 'run') continue;
    if (r.run !== undefined && run !== undefined && r.run !== run) {
      throw new UsageError(`${dir} holds runs of two different inputs: not one run`, { field: 'dirs' });
    }
    run ??= r.run;
    const shard = parseShard(r.opts?.shard ?? r.shard ?? '1/1', `${dir}: its shard`);
    if (n !== 0 && shard.n !== n) {
      throw new UsageError(`${dir} holds runs of shards of ${n} and of ${shard.n}: not one run`, {
        field: 'dirs',
      });
    }
    n = shard.n;
    ks.add(shard.k);
  }
  if (n === 0)
    throw new UsageError(`${dir} holds no run (its ${STATE_FILE} has no run record)`, { field: 'dirs' });
  return { dir, where: dir, run, n, ks: [...ks], score: [done, lastAt] };
}

/** The file a result line names, in its shard's own files/ (by name only), checked to be its size. */
async function shardFile(dir: string, f: SavedFile, where: () => DamagedFileError): Promise<string> {
  const name = basename(f.path.replace(/\\/g, '/'));
  if (name === '' || name === '.' || name === '..') throw where();
  const path = join(dir, FILES_DIR, name);
  try {
    const st = await lstat(path);
    if (st.isFile() && st.size === f.bytes) return path;
  } catch {
    // said below
  }
  throw where();
}

/** The first pass: every line read and every file checked; which custom_id's success is kept where. */
async function check(dirs: string[]): Promise<{ ok: Map<string, string>; duplicates: string[] }> {
  const ok = new Map<string, string>();
  const duplicates: string[] = [];
  for (const d of dirs) {
    const path = join(d, RESULTS_FILE);
    for await (const { lineNo, value } of readIfThere(path)) {
      if (ok.has(value.custom_id)) {
        duplicates.push(value.custom_id);
        continue;
      }
      ok.set(value.custom_id, d);
      for (const f of value.files ?? []) {
        await shardFile(
          d,
          f,
          () =>
            new DamagedFileError(
              path,
              lineNo,
              `names ${f.path} (${f.bytes} bytes), which is not a file of that size in ${join(d, FILES_DIR)}`,
            ),
        );
      }
    }
    for await (const _ of readIfThere(join(d, ERRORS_FILE))) void _;
    for await (const _ of records(join(d, STATE_FILE))) void _;
  }
  return { ok, duplicates };
}

async function* readIfThere(path: string) {
  try {
    await stat(path);
  } catch {
    return;
  }
  yield* readRecords(path, outputLineSchema, 'a batch output line');
}

/**
 * The second pass: results (files copied), errors, joined state logs ended by the merge's own record (what
 * `gw batch status` says was merged and is missing); each file replaced whole.
 */
async function write(
  dirs: string[],
  out: string,
  ok: Map<string, string>,
  merge: StateRecord,
): Promise<[number, number]> {
  await mkdir(join(out, FILES_DIR), { recursive: true });
  let nr = 0;
  await rewrite(join(out, RESULTS_FILE), async (results) => {
    for (const d of dirs) {
      for await (const { value } of readIfThere(join(d, RESULTS_FILE))) {
        if (ok.get(value.custom_id) !== d) continue;
        ok.set(value.custom_id, ''); // written: a second line of the same shard is a duplicate too
        const files: SavedFile[] = [];
        for (const f of value.files ?? []) {
          const name = basename(f.path.replace(/\\/g, '/'));
          await copyFile(join(d, FILES_DIR, name), join(out, FILES_DIR, name), constants.COPYFILE_FICLONE);
          files.push({ path: `${FILES_DIR}/${name}`, bytes: f.bytes });
        }
        await results.write(`${JSON.stringify(value.files !== undefined ? { ...value, files } : value)}\n`);
        nr++;
      }
    }
  });
  const failed = new Set<string>();
  await rewrite(join(out, ERRORS_FILE), async (errors) => {
    for (const d of dirs) {
      for await (const { value, text } of readIfThere(join(d, ERRORS_FILE))) {
        if (ok.has(value.custom_id) || failed.has(value.custom_id)) continue;
        failed.add(value.custom_id);
        await errors.write(`${text}\n`);
      }
    }
  });
  await rewrite(join(out, STATE_FILE), async (state) => {
    for (const d of dirs)
      for await (const { text } of records(join(d, STATE_FILE))) await state.write(`${text}\n`);
    await state.write(`${JSON.stringify(merge)}\n`);
  });
  return [nr, failed.size];
}

async function isEmptyDir(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).every((name) => name === LOCK_FILE);
  } catch {
    return true;
  }
}

/** Holds the locks of every shard while `f` runs (no run writes a shard being merged). */
async function withShardLocks<T>(dirs: string[], o: MergeOptions, f: () => Promise<T>): Promise<T> {
  const [first, ...rest] = dirs;
  if (first === undefined) return f();
  return withBatchLock(first, o, false, () => withShardLocks(rest, o, f));
}

/** Merges batch directories into `out`. */
export async function mergeBatches(o: MergeOptions): Promise<MergeReport> {
  const out = resolve(o.out);
  const dirs = o.dirs.map((d) => resolve(d));
  if (dirs.length === 0) throw new UsageError('dirs: give the batch directories to merge', { field: 'dirs' });
  for (const [i, d] of dirs.entries()) {
    try {
      await stat(join(d, STATE_FILE));
    } catch {
      throw new UsageError(`${o.dirs[i]} is not a batch directory (no ${STATE_FILE})`, { field: 'dirs' });
    }
    if (d === out) throw new UsageError(`--out: must differ from the merged directories`, { field: '--out' });
    if (dirs.indexOf(d) !== i) throw new UsageError(`${o.dirs[i]} is given twice`, { field: 'dirs' });
  }
  return withBatchLock(out, o, true, async () => {
    if (o.force !== true && !(await isEmptyDir(out))) {
      throw new UsageError(`--out: ${o.out} is not empty; a merge writes a new batch directory`, {
        field: '--out',
        hint: 'give a new directory, or pass --force to replace its results, errors and state',
      });
    }
    return withShardLocks(dirs, o, async () => {
      const set = joinShards(await Promise.all(dirs.map(identityOf)), o.allowMissing === true, 'dirs');
      const kept = set.kept.map((p) => p.dir);
      const { ok, duplicates } = await check(kept);
      const shards = {
        run: set.run ?? null,
        merged: set.merged,
        missing: set.missing,
        skipped: set.skipped.map((x) => ({ shard: x.shard, dir: x.where })),
      };
      const { run, n, merged, missing } = set;
      const record: StateRecord = { e: 'merge', at: Date.now(), run, n, merged, missing };
      try {
        const [results, errors] = await write(kept, out, ok, record);
        return { out, results, errors, duplicates, shards };
      } catch (e) {
        throw e instanceof GwError ? e : fsError(e, { path: out, action: 'write the merge into' });
      }
    });
  });
}
