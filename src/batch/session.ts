/**
 * `gw batch run` and `gw batch retry` from flags to exit code: the input (standard input is kept as
 * `<dir>/input.jsonl` so the batch can be resumed), the state, the first pass, `--dry-run`, the budget checks,
 * the engine, progress on a TTY, and the summary.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { setFlagsFromString } from 'node:v8';
import type { Context } from '../cli/context.js';
import type { Currency } from '../contract/estimate.js';
import { parseBudgets } from '../core/budget.js';
import { ExitCode, GwError, UsageError } from '../core/errors.js';
import { Engine, type RunResult } from './run.js';
import { scan, type Scan } from './scan.js';
import { parseShard } from './shard.js';
import { BatchState, BatchWriter, loadState, readLastRecord, type RunRecordOptions } from './state.js';
import { reconcile } from './reconcile.js';

/** Flags of `gw batch run`. */
export interface RunFlags {
  out: string;
  concurrency?: string | undefined;
  budget?: string[] | undefined;
  allowUnpriced?: boolean | undefined;
  maxAttempts?: string | undefined;
  shard?: string | undefined;
  download?: boolean | undefined;
  timeout?: string | undefined;
  dryRun?: boolean | undefined;
  resendInDoubt?: boolean | undefined;
}

/** Single-quotes a word for a shell when it needs it. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function positiveInt(text: string | undefined, flag: string, dflt: number, max: number): number {
  if (text === undefined) return dflt;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1 || n > max) {
    throw new UsageError(`${flag}: "${text}" must be an integer from 1 to ${max}`, { field: flag.slice(2) });
  }
  return n;
}

function money(totals: Partial<Record<Currency, number>>): string {
  const parts = Object.entries(totals).map(([c, a]) => `${c} ${(a ?? 0).toFixed(2)}`);
  return parts.length > 0 ? parts.join(' + ') : '—';
}

/** The command that resumes a batch: the same input, --out and flags. */
function resumeCommand(input: string, dir: string, f: RunFlags): string {
  const words = ['gw', 'batch', 'run', input, '--out', dir];
  if (f.concurrency !== undefined) words.push('--concurrency', f.concurrency);
  for (const b of f.budget ?? []) words.push('--budget', b);
  if (f.allowUnpriced === true) words.push('--allow-unpriced');
  if (f.maxAttempts !== undefined) words.push('--max-attempts', f.maxAttempts);
  if (f.shard !== undefined) words.push('--shard', f.shard);
  if (f.download === false) words.push('--no-download');
  if (f.timeout !== undefined) words.push('--timeout', f.timeout);
  return words.map(shellQuote).join(' ');
}

function printProblems(ctx: Context, s: Scan): never {
  const n = s.problems.length + s.moreProblems;
  for (const p of s.problems) {
    ctx.out.note(
      `line ${p.lineNo}${p.customId !== undefined ? ` (${p.customId})` : ''}: ${p.field}: ${p.message}`,
    );
  }
  if (s.moreProblems > 0) ctx.out.note(`… and ${s.moreProblems} more`);
  const first = s.problems[0];
  throw new UsageError(
    `${n} line${n === 1 ? '' : 's'} of the batch break${n === 1 ? 's' : ''} a rule; nothing was sent`,
    {
      field: first !== undefined ? `line ${first.lineNo}: ${first.field}` : undefined,
      hint: 'fix the lines above (or pass --no-validate to send them as they are)',
    },
  );
}

async function printDryRun(ctx: Context, s: Scan, state: BatchState | undefined): Promise<void> {
  const groups = [...s.groups.values()].sort((a, b) => (a.url + a.model).localeCompare(b.url + b.model));
  if (ctx.globals.json) {
    ctx.out.json({
      lines: s.lines,
      in_shard: s.inShard,
      groups: groups.map((g) => ({
        url: g.url,
        model: g.model,
        count: g.count,
        pending: g.pending,
        estimated: g.priced,
        unpriced: g.unpriced,
      })),
      estimated_total: s.totals,
      unpriced: s.unpriced,
      already_finished: state !== undefined ? s.inShard - groups.reduce((n, g) => n + g.pending, 0) : 0,
    });
    return;
  }
  await ctx.out.table(
    ['endpoint', 'model', 'lines', 'to send', 'estimated', 'unpriced'],
    groups.map((g) => [g.url, g.model, g.count, g.pending, money(g.priced), g.unpriced]),
  );
  ctx.out.line(`estimated total: ${money(s.totals)} (list prices; nothing was sent)`);
  if (s.unpriced > 0) {
    ctx.out.line(
      `unpriced lines: ${s.unpriced} (billed by tokens, images or a default length the request does not fix)`,
    );
  }
}

/** Follows what a run needs from flags, shared by run and retry. */
export interface SessionInput {
  input: string;
  dir: string;
  flags: RunFlags;
  /** Items to reset before running (retry). */
  reset?: ((state: BatchState) => string[]) | undefined;
}

/** Runs a batch; returns the exit code. */
export async function runSession(ctx: Context, si: SessionInput): Promise<number> {
  // The run's own --timeout (after `run`/`retry`), else the global one written before the command name.
  const f: RunFlags = { ...si.flags, timeout: si.flags.timeout ?? ctx.globals.timeout };
  const dir = resolve(si.dir);
  const concurrency = positiveInt(f.concurrency, '--concurrency', 8, 4096);
  const maxAttempts = positiveInt(f.maxAttempts, '--max-attempts', 8, 1000);
  const budgets = parseBudgets(f.budget ?? []);
  const shard = f.shard !== undefined ? parseShard(f.shard) : undefined;
  const timeoutMs = ctx.waitLimitMs(f.timeout);

  // Standard input cannot be read twice (check, then send) nor again on resume: it is kept in the batch directory.
  let input = si.input;
  if (input === '-') {
    await mkdir(dir, { recursive: true });
    input = join(dir, 'input.jsonl');
    await pipeline(ctx.io.stdin, createWriteStream(input, { mode: 0o600 }));
  } else {
    try {
      const st = await stat(input);
      if (!st.isFile()) throw new Error('not a file');
    } catch {
      throw new UsageError(`input: ${input} is not a readable file`, { field: 'input' });
    }
    input = resolve(input);
  }

  const inputStat = await stat(input);
  const fast = await finishedBefore(dir, input, inputStat, f, si);
  if (fast !== undefined) return fast(ctx);

  const state = await loadState(dir);
  if (state !== undefined && si.reset === undefined) {
    const previous = state.runs.at(-1)?.input;
    if (previous !== undefined && previous !== input) {
      ctx.out.warn(`${dir} holds a batch of ${previous}; items are matched by custom_id`);
    }
  }

  const s = await scan(input, { validate: ctx.globals.validate, shard, state });
  if (s.problems.length > 0) printProblems(ctx, s);
  if (f.dryRun === true) {
    await printDryRun(ctx, s, state);
    return ExitCode.ok;
  }
  if (budgets.size > 0) {
    if (s.unpriced > 0 && f.allowUnpriced !== true) {
      throw new UsageError(
        `--budget: ${s.unpriced} line${s.unpriced === 1 ? ' has' : 's have'} no price fixed in advance, so the budget cannot bound them`,
        { field: 'budget', hint: 'pass --allow-unpriced to run them outside the budget, or see --dry-run' },
      );
    }
    for (const c of s.currencies) {
      if (!budgets.has(c)) {
        throw new UsageError(`--budget: lines are priced in ${c} but no ${c} budget is given`, {
          field: 'budget',
          hint: `add --budget <amount>${c}`,
        });
      }
    }
  }

  // A batch allocates at a steady rate for as long as it runs; left alone, V8 keeps raising its heap limit and
  // the resident size creeps up with the length of the file. A lower growing factor keeps memory flat for the
  // price of more frequent (incremental) collections.
  setFlagsFromString('--heap-growing-percent=20');
  const client = await ctx.client();
  // Every line was checked above; the client of the sync endpoints does not check each body a second time.
  const sendClient = ctx.globals.validate ? await ctx.client({ validate: false }) : client;
  const writer = await BatchWriter.open(dir);
  const st = state ?? new BatchState();
  const resume = resumeCommand(si.input === '-' ? input : si.input, si.dir, { ...f, timeout: f.timeout });
  let result: RunResult;
  let stopProgress = (): void => {};
  try {
    const opts: RunRecordOptions = {
      concurrency,
      budgets: f.budget ?? [],
      allowUnpriced: f.allowUnpriced === true,
      maxAttempts,
      ...(f.shard !== undefined ? { shard: f.shard } : {}),
      download: f.download !== false,
    };
    const runRec = { e: 'run' as const, at: Date.now(), input, argv: resume.split(' '), opts };
    st.apply(runRec);
    await writer.append(runRec);
    await reconcile(dir, st, writer, f.resendInDoubt === true);
    if (si.reset !== undefined) {
      const ids = si.reset(st);
      for (const id of ids) {
        const r = { e: 'reset' as const, id, at: Date.now() };
        st.apply(r);
        await writer.append(r);
      }
    }
    st.keepFinished = false;
    const engine = new Engine(ctx, client, sendClient, st, writer, {
      input,
      dir,
      concurrency,
      budgets,
      maxAttempts,
      shard,
      download: f.download !== false,
      timeoutMs,
      resume,
    });
    stopProgress = await startProgress(ctx, engine);
    result = await engine.run();
    stopProgress();
    const s2 = result.stats;
    await writer.append({
      e: 'end',
      at: Date.now(),
      exit: exitOf(result),
      reason: result.reason,
      input: { path: input, size: inputStat.size, mtimeMs: inputStat.mtimeMs, shard: f.shard },
      totals: { total: s2.total, done: s2.done, failed: s2.failed, doubt: s2.doubt },
    });
  } finally {
    stopProgress();
    await writer.close();
  }
  return report(ctx, result, resume, dir);
}

/**
 * A batch whose last run went through the whole of this same, unchanged input has nothing left to send or
 * follow: the re-run reports it from the log's last record instead of reading everything again.
 */
async function finishedBefore(
  dir: string,
  input: string,
  st: { size: number; mtimeMs: number },
  f: RunFlags,
  si: SessionInput,
): Promise<((ctx: Context) => Promise<number>) | undefined> {
  if (si.reset !== undefined || f.dryRun === true || f.resendInDoubt === true) return undefined;
  const last = await readLastRecord(dir);
  if (
    last?.e !== 'end' ||
    last.reason !== 'complete' ||
    last.input === undefined ||
    last.totals === undefined
  ) {
    return undefined;
  }
  const li = last.input;
  if (li.path !== input || li.size !== st.size || li.mtimeMs !== st.mtimeMs || li.shard !== f.shard)
    return undefined;
  const t = last.totals;
  const stats = {
    total: t.total,
    done: t.done,
    failed: t.failed,
    doubt: t.doubt,
    skipped: t.total,
    sending: 0,
    following: 0,
    notSubmitted: 0,
    started: Date.now(),
    finishedThisRun: 0,
  };
  const resume = resumeCommand(si.input, si.dir, f);
  return (ctx) => report(ctx, { stats, reason: 'complete' }, resume, dir);
}

function exitOf(r: RunResult): number {
  if (r.reason === 'interrupted') return ExitCode.interrupted;
  if (r.reason === 'timeout') return ExitCode.timeout;
  const s = r.stats;
  return s.failed > 0 || s.doubt > 0 || s.notSubmitted > 0 ? ExitCode.failure : ExitCode.ok;
}

async function startProgress(ctx: Context, engine: Engine): Promise<() => void> {
  if (!ctx.progress.enabled) return () => {};
  const spinner = await ctx.progress.spinner('batch starting');
  const started = Date.now();
  const draw = (): void => {
    const s = engine.stats;
    const secs = Math.max(0.001, (Date.now() - started) / 1000);
    const rate = s.finishedThisRun / secs;
    const left = s.total - s.done - s.failed - s.doubt;
    const eta = rate > 0 && left > 0 ? ` · ETA ${Math.ceil(left / rate)}s` : '';
    const spend = [...engine.spent].map(([c, a]) => `${c} ${a.toFixed(2)}`).join(' ');
    const text = `done ${s.done}/${s.total} · running ${s.sending + s.following} · failed ${s.failed} · in doubt ${s.doubt} · ${rate.toFixed(1)}/s${eta}${spend ? ` · ${spend}` : ''}`;
    // One line: a line wider than the terminal would wrap, and each redraw would leave a copy behind.
    const cols = (ctx.io.stderr as { columns?: number }).columns;
    spinner.update(
      cols !== undefined && cols > 10 && text.length > cols - 3 ? `${text.slice(0, cols - 4)}…` : text,
    );
  };
  const t = setInterval(draw, 250);
  t.unref();
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    clearInterval(t);
    spinner.stop();
  };
}

async function report(ctx: Context, r: RunResult, resume: string, dir: string): Promise<number> {
  const s = r.stats;
  const code = exitOf(r);
  if (ctx.globals.json) {
    ctx.out.json({
      dir,
      total: s.total,
      succeeded: s.done,
      failed: s.failed,
      in_doubt: s.doubt,
      not_submitted: s.notSubmitted,
      skipped: s.skipped,
      reason: r.reason,
      exit_code: code,
      resume: code === ExitCode.ok ? null : resume,
    });
  } else {
    await ctx.out.table(
      ['items', 'succeeded', 'failed', 'in doubt', 'not submitted', 'from earlier runs'],
      [[s.total, s.done, s.failed, s.doubt, s.notSubmitted, s.skipped]],
    );
  }
  if (r.budgetNote !== undefined) ctx.out.note(r.budgetNote);
  if (s.doubt > 0) {
    ctx.out.note(
      `${s.doubt} in doubt: their create may have reached the gateway, so they are not resent; check \`gw batch status ${shellQuoteDir(dir)}\`, then \`gw batch retry ${shellQuoteDir(dir)} --in-doubt\` to resend them`,
    );
  }
  if (r.reason === 'interrupted' || r.reason === 'timeout') {
    const why = r.reason === 'interrupted' ? 'interrupted' : 'timed out (--timeout)';
    const e = new GwError(`batch ${why}; created tasks are kept in ${dir}`, {
      code: r.reason === 'interrupted' ? 'interrupted' : 'timeout',
      hint: `resume with: ${resume}`,
    });
    ctx.out.error(e);
  } else if (code !== ExitCode.ok) {
    ctx.out.note(`details: ${join(dir, 'errors.jsonl')}; resume or finish with: ${resume}`);
  }
  return code;
}

function shellQuoteDir(d: string): string {
  return shellQuote(d);
}
