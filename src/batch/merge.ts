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
 * whole batch and names the missing shards. Streams the files (only the custom_ids are held, as 128 bits of their
 * SHA-256 outside the JS heap: ids.ts) a read at a time, not a line at a time: a million lines through three
 * layers of async generators cost a microtask each per line. The second pass copies the lines the first checked
 * without parsing them again.
 */
import { constants, copyFile, lstat, mkdir, readdir, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { GwError, UsageError } from '../core/errors.js';
import { fsError } from '../core/fs-errors.js';
import { joinShards, parseShard, type ShardPart } from '../core/shard.js';
import { IdSet } from './ids.js';
import {
  checkedTextChunks,
  DamagedFileError,
  readRecordChunks,
  rewrite,
  type CheckedRecord,
} from './lines.js';
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
  /** The last line of its state log read as a record (the write pass copies up to it without parsing again). */
  stateLast: number;
}

/** A file's records (none when it is not there), in the groups each read completed. */
async function* chunksIfThere<T>(
  path: string,
  read: (path: string) => AsyncGenerator<Array<CheckedRecord<T>>>,
): AsyncGenerator<Array<CheckedRecord<T>>> {
  try {
    await stat(path);
  } catch {
    return;
  }
  yield* read(path);
}

const stateRecords = (path: string) =>
  chunksIfThere(path, (p) => readRecordChunks(p, stateRecordSchema, 'a state record'));
const outputRecords = (path: string) =>
  chunksIfThere(path, (p) => readRecordChunks(p, outputLineSchema, 'a batch output line'));

/**
 * A directory's shards and run, from its run records (all of one run, or exit 2), and its score among copies of
 * the same shard (a scheduler that ran an index twice into two directories): the one with more items done, then
 * the one written last, is kept.
 */
async function identityOf(dir: string): Promise<ShardIdentity> {
  const seen = {
    run: undefined as string | undefined,
    n: 0,
    done: 0,
    lastAt: 0,
    stateLast: 0,
    ks: new Set<number>(),
  };
  for await (const chunk of stateRecords(join(dir, STATE_FILE)))
    for (const { lineNo, value } of chunk) {
      seen.stateLast = lineNo;
      seen.lastAt = Math.max(seen.lastAt, value.at);
      if (value.e === 'done') seen.done++;
      else if (value.e === 'run') noteRun(dir, value, seen);
    }
  const { run, n, done, lastAt, stateLast, ks } = seen;
  if (n === 0)
    throw new UsageError(`${dir} holds no run (its ${STATE_FILE} has no run record)`, { field: 'dirs' });
  return { dir, where: dir, run, n, ks: [...ks], score: [done, lastAt], stateLast };
}

/** A run record of `dir`: its run and shard count must be those of the others. */
function noteRun(
  dir: string,
  r: Extract<StateRecord, { e: 'run' }>,
  seen: { run: string | undefined; n: number; ks: Set<number> },
): void {
  if (r.run !== undefined && seen.run !== undefined && r.run !== seen.run) {
    throw new UsageError(`${dir} holds runs of two different inputs: not one run`, { field: 'dirs' });
  }
  seen.run ??= r.run;
  const shard = parseShard(r.opts?.shard ?? r.shard ?? '1/1', `${dir}: its shard`);
  if (seen.n !== 0 && shard.n !== seen.n) {
    throw new UsageError(`${dir} holds runs of shards of ${seen.n} and of ${shard.n}: not one run`, {
      field: 'dirs',
    });
  }
  seen.n = shard.n;
  seen.ks.add(shard.k);
}

/** The name of a file a result line names (its path on the machine that ran it is not this one's). */
function fileName(f: SavedFile): string {
  return basename(f.path.replace(/\\/g, '/'));
}

/** The file a result line names, in its shard's own files/ (by name only), checked to be its size. */
async function shardFile(dir: string, f: SavedFile, where: () => DamagedFileError): Promise<string> {
  const name = fileName(f);
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

/** What the first pass found in one directory's results: its last record's line, the lines not to copy. */
interface ResultLines {
  last: number;
  /** Lines whose custom_id an earlier line (of this or another directory) already gave. */
  skip: Set<number>;
}

/** The first pass: every line read and every file checked; which custom_id's success is kept where. */
async function check(
  dirs: string[],
): Promise<{ ok: IdSet; duplicates: string[]; lines: Map<string, ResultLines> }> {
  // The custom_ids of a million lines: kept out of the JS heap (ids.ts).
  const ok = new IdSet();
  const duplicates: string[] = [];
  const lines = new Map<string, ResultLines>();
  for (const d of dirs) {
    const path = join(d, RESULTS_FILE);
    const mine: ResultLines = { last: 0, skip: new Set() };
    lines.set(d, mine);
    for await (const chunk of outputRecords(path))
      for (const { lineNo, value } of chunk) {
        mine.last = lineNo;
        if (!ok.add(value.custom_id)) {
          duplicates.push(value.custom_id);
          mine.skip.add(lineNo);
          continue;
        }
        for (const f of value.files ?? []) {
          const where = `names ${f.path} (${f.bytes} bytes), which is not a file of that size in ${join(d, FILES_DIR)}`;
          await shardFile(d, f, () => new DamagedFileError(path, lineNo, where));
        }
      }
    for await (const _ of outputRecords(join(d, ERRORS_FILE))) void _;
  }
  return { ok, duplicates, lines };
}

/**
 * The second pass: results (files copied), errors, joined state logs ended by the merge's own record (what
 * `gw batch status` says was merged and is missing); each file replaced whole. The results and state lines were
 * checked by the first pass under the shards' locks: they are copied as text, and only a line naming files is
 * parsed again (its paths are rewritten).
 */
async function write(
  dirs: ShardIdentity[],
  out: string,
  check: { ok: IdSet; lines: Map<string, ResultLines> },
  merge: StateRecord,
): Promise<[number, number]> {
  await mkdir(join(out, FILES_DIR), { recursive: true });
  let nr = 0;
  await rewrite(join(out, RESULTS_FILE), async (results) => {
    for (const { dir: d } of dirs) {
      const { last, skip } = check.lines.get(d) ?? { last: 0, skip: new Set<number>() };
      for await (const chunk of checkedTextChunks(join(d, RESULTS_FILE), last)) {
        let text = '';
        for (const l of chunk) {
          if (skip.has(l.lineNo)) continue;
          text += `${l.text.includes('"files"') ? await withFiles(d, out, l.text) : l.text}\n`;
          nr++;
        }
        await results.write(text);
      }
    }
  });
  const failed = new IdSet();
  await rewrite(join(out, ERRORS_FILE), async (errors) => {
    for (const { dir: d } of dirs)
      for await (const chunk of outputRecords(join(d, ERRORS_FILE)))
        for (const { value, text } of chunk) {
          if (check.ok.has(value.custom_id) || !failed.add(value.custom_id)) continue;
          await errors.write(`${text}\n`);
        }
  });
  await rewrite(join(out, STATE_FILE), async (state) => {
    for (const { dir: d, stateLast } of dirs)
      for await (const chunk of checkedTextChunks(join(d, STATE_FILE), stateLast))
        await state.write(`${chunk.map((l) => l.text).join('\n')}\n`);
    await state.write(`${JSON.stringify(merge)}\n`);
  });
  return [nr, failed.size];
}

/** A result line with its files copied from its shard's files/ into the merge's, and its paths made the merge's. */
async function withFiles(dir: string, out: string, text: string): Promise<string> {
  const value = outputLineSchema.parse(JSON.parse(text));
  if (value.files === undefined) return text;
  const files: SavedFile[] = [];
  for (const f of value.files) {
    const name = fileName(f);
    await copyFile(join(dir, FILES_DIR, name), join(out, FILES_DIR, name), constants.COPYFILE_FICLONE);
    files.push({ path: `${FILES_DIR}/${name}`, bytes: f.bytes });
  }
  return JSON.stringify({ ...value, files });
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
      // One directory after another: a read's worth of records each at a time (all at once, 16 shards' pages of
      // records were alive together: 330 MB peak instead of 190 for a million lines).
      const identities: ShardIdentity[] = [];
      for (const d of dirs) identities.push(await identityOf(d));
      const set = joinShards(identities, o.allowMissing === true, 'dirs');
      const checked = await check(set.kept.map((p) => p.dir));
      const shards = {
        run: set.run ?? null,
        merged: set.merged,
        missing: set.missing,
        skipped: set.skipped.map((x) => ({ shard: x.shard, dir: x.where })),
      };
      const { run, n, merged, missing } = set;
      const record: StateRecord = { e: 'merge', at: Date.now(), run, n, merged, missing };
      try {
        const [results, errors] = await write(set.kept, out, checked, record);
        return { out, results, errors, duplicates: checked.duplicates, shards };
      } catch (e) {
        throw e instanceof GwError ? e : fsError(e, { path: out, action: 'write the merge into' });
      }
    });
  });
}
