/**
 * `gw batch merge <dir>... --out <dir>`: joins the outputs of sharded runs, trusting nothing in them. The
 * directories must be the shards of one run (the same n, each k once; a missing shard is named and fails unless
 * allowed); every line is read through its writer's schema (a torn last line is skipped as a run does, a damaged
 * one is exit 2 naming the file and line); a file a result names is looked for only in that shard's own `files/`
 * (by its name: a shard moved from another machine works, and `/etc/hostname` is no file of a shard) and must have
 * the size its line says. All of that is checked before anything is written. Each custom_id appears once: a
 * success anywhere wins over a failure elsewhere; the first of two successes is kept. The state logs are joined
 * so `gw batch status <out>` covers the whole batch. Streams line by line (only the custom_ids are held).
 */
import { constants, copyFile, lstat, mkdir, readdir, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { GwError, UsageError } from '../core/errors.js';
import { fsError } from '../core/fs-errors.js';
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
  /** The shards merged and missing, as k/n (an unsharded run is 1/1). */
  shards: { merged: string[]; missing: string[] };
}

/**
 * Which part of which run a directory holds: the shards of its runs (a merged directory holds several). `run` is
 * the run's identity when its runs record one (two directories of different runs are never merged).
 */
interface ShardIdentity {
  dir: string;
  run: string | undefined;
  n: number;
  ks: Set<number>;
}

async function* records(path: string): AsyncGenerator<{ value: StateRecord; text: string }> {
  try {
    await stat(path);
  } catch {
    return;
  }
  yield* readRecords(path, stateRecordSchema, 'a state record');
}

async function identityOf(dir: string): Promise<ShardIdentity> {
  const id: ShardIdentity = { dir, run: undefined, n: 0, ks: new Set() };
  for await (const { value: r } of records(join(dir, STATE_FILE))) {
    if (r.e !== 'run') continue;
    if (id.n !== 0 && r.run !== id.run) {
      throw new UsageError(`${dir} holds runs of two different inputs: not one run`, { field: 'dirs' });
    }
    id.run = r.run;
    const text = r.opts?.shard ?? r.shard ?? '1/1';
    const m = /^(\d+)\/(\d+)$/.exec(text);
    const [k, n] = [Number(m?.[1]), Number(m?.[2])];
    if (id.n !== 0 && n !== id.n) {
      throw new UsageError(`${dir} holds runs of shards of ${id.n} and of ${n}: not one run`, {
        field: 'dirs',
      });
    }
    id.n = n;
    id.ks.add(k);
  }
  if (id.n === 0)
    throw new UsageError(`${dir} holds no run (its ${STATE_FILE} has no run record)`, { field: 'dirs' });
  return id;
}

/** Checks the shards are parts of one run, each once; returns the merged and missing shards. */
function checkShards(ids: ShardIdentity[], allowMissing: boolean): MergeReport['shards'] {
  const first = ids[0] as ShardIdentity;
  const owner = new Map<number, string>();
  for (const id of ids) {
    if (id.n !== first.n || id.run !== first.run) {
      throw new UsageError(
        `${id.dir} is a shard of ${id.n} and ${first.dir} of ${first.n}: the directories are not parts of one run`,
        { field: 'dirs' },
      );
    }
    for (const k of id.ks) {
      const other = owner.get(k);
      if (other !== undefined) {
        throw new UsageError(`shard ${k}/${id.n} is in both ${other} and ${id.dir}: give each shard once`, {
          field: 'dirs',
        });
      }
      owner.set(k, id.dir);
    }
  }
  const all = Array.from({ length: first.n }, (_, i) => i + 1);
  const merged = all.filter((k) => owner.has(k)).map((k) => `${k}/${first.n}`);
  const missing = all.filter((k) => !owner.has(k)).map((k) => `${k}/${first.n}`);
  if (missing.length > 0 && !allowMissing) {
    throw new GwError(
      `shard${missing.length === 1 ? '' : 's'} ${missing.join(', ')} of the run missing: nothing merged`,
      {
        code: 'shards_missing',
        hint: 'give every shard directory, or pass --allow-missing to merge the ones there are',
      },
    );
  }
  return { merged, missing };
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

/** The second pass: results (files copied), errors, joined state logs; each file replaced whole. */
async function write(dirs: string[], out: string, ok: Map<string, string>): Promise<[number, number]> {
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
      const shards = checkShards(await Promise.all(dirs.map(identityOf)), o.allowMissing === true);
      const { ok, duplicates } = await check(dirs);
      try {
        const [results, errors] = await write(dirs, out, ok);
        return { out, results, errors, duplicates, shards };
      } catch (e) {
        throw e instanceof GwError ? e : fsError(e, { path: out, action: 'write the merge into' });
      }
    });
  });
}
