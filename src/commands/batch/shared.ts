/**
 * What the batch verbs share: the engine's sinks bound to the CLI (clients from the settings, the journal of
 * `gw history`, warnings, the live line on a terminal), the command that resumes a batch, and the rendering of a
 * run's document with its exit code.
 */
import type { BatchJournal, BatchRunDoc, BatchSinks, ClientSource, RunStats } from '../../batch/options.js';
import { amountText } from '../../contract/money.js';
import { Journal } from '../../core/journal.js';
import { stateDir } from '../../core/paths.js';
import { ExitCode, GwError } from '../../core/errors.js';
import type { Context } from '../../cli/context.js';

/** Single-quotes a word for a shell when it needs it. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The flags a resume command repeats (as given, or as the last run recorded them). */
export interface ResumeFlags {
  concurrency?: number | undefined;
  budget?: readonly string[] | undefined;
  allowUnpriced?: boolean | undefined;
  prices?: string | undefined;
  maxAttempts?: number | undefined;
  shard?: string | undefined;
  download?: boolean | undefined;
  timeout?: string | undefined;
}

/** The command that resumes a batch: the same input, --out and flags. */
export function resumeCommand(input: string, dir: string, f: ResumeFlags): string {
  const words = ['gw', 'batch', 'run', input, '--out', dir];
  if (f.concurrency !== undefined) words.push('--concurrency', String(f.concurrency));
  for (const b of f.budget ?? []) words.push('--budget', b);
  if (f.allowUnpriced === true) words.push('--allow-unpriced');
  if (f.prices !== undefined) words.push('--prices', f.prices);
  if (f.maxAttempts !== undefined) words.push('--max-attempts', String(f.maxAttempts));
  if (f.shard !== undefined) words.push('--shard', f.shard);
  if (f.download === false) words.push('--no-download');
  if (f.timeout !== undefined) words.push('--timeout', f.timeout);
  return words.map(shellQuote).join(' ');
}

/** The clients of a run, from the settings, made once the run is certain to start (a missing token: exit 3). */
export function clientsOf(ctx: Context): { source: ClientSource; baseUrl: () => string | undefined } {
  let baseUrl: string | undefined;
  return {
    source: async ({ validate }) => {
      const c = await ctx.client({ validate });
      baseUrl = c.baseUrl;
      return c;
    },
    baseUrl: () => baseUrl,
  };
}

/** gw's journal as the engine's: created tasks are in `gw history`, and a killed run finds its creates there. */
export function journalOf(ctx: Context, baseUrl: () => string | undefined): BatchJournal {
  return {
    created: (c) => {
      ctx.recordCreated(
        { baseUrl: baseUrl() ?? '' },
        {
          kind: c.kind,
          id: c.id,
          model: c.model,
          requestId: c.requestId,
          state: c.state,
          extra: { batch: c.batch, custom_id: c.customId, send_at: c.sendAt },
        },
      );
    },
    update: (kind, id, state) => ctx.journal().update(kind, id, state),
    find: (batch, sends) => new Journal(stateDir(ctx.io.env)).findBatchCreates(batch, sends),
  };
}

/** What a verb says when another gw holds a batch directory and --wait-lock was given. */
export function lockWaitNote(ctx: Context): (holder: string) => void {
  return (holder) =>
    ctx.out.note(`${holder} is working on a batch directory of this command; waiting for it (--wait-lock)`);
}

/** The sinks every batch verb gives the engine, and the end of its live line. */
export async function sinksOf(ctx: Context): Promise<{ sinks: BatchSinks; stop: () => void }> {
  let stats: Readonly<RunStats> | undefined;
  let spent: ReadonlyMap<string, number> = new Map();
  const sinks: BatchSinks = {
    onProgress: (s, m) => {
      stats = s;
      spent = m;
    },
    onWarning: (text) => ctx.out.warn(text),
    onLockWait: lockWaitNote(ctx),
  };
  if (!ctx.progress.enabled) return { sinks, stop: () => undefined };
  const spinner = await ctx.progress.spinner('batch starting');
  const started = Date.now();
  const draw = (): void => {
    if (stats === undefined) return;
    const s = stats;
    const secs = Math.max(0.001, (Date.now() - started) / 1000);
    const rate = s.finishedThisRun / secs;
    const left = s.total - s.done - s.failed - s.doubt;
    const eta = rate > 0 && left > 0 ? ` · ETA ${Math.ceil(left / rate)}s` : '';
    const money = [...spent].map(([c, a]) => `${c} ${amountText(a)}`).join(' ');
    const text = `done ${s.done}/${s.total} · running ${s.sending + s.following} · failed ${s.failed} · in doubt ${s.doubt} · ${rate.toFixed(1)}/s${eta}${money ? ` · ${money}` : ''}`;
    // One line: a line wider than the terminal would wrap, and each redraw would leave a copy behind.
    const cols = (ctx.io.stderr as { columns?: number }).columns;
    spinner.update(
      cols !== undefined && cols > 10 && text.length > cols - 3 ? `${text.slice(0, cols - 4)}…` : text,
    );
  };
  const t = setInterval(draw, 250);
  t.unref();
  let stopped = false;
  return {
    sinks,
    stop: () => {
      if (stopped) return;
      stopped = true;
      clearInterval(t);
      spinner.stop();
    },
  };
}

/** Prints a run's document (`--json`: as is; else the summary table and notes); returns its exit code. */
export async function reportRun(ctx: Context, doc: BatchRunDoc): Promise<number> {
  const dir = shellQuote(doc.dir);
  if (ctx.globals.json) ctx.out.json(doc);
  else {
    await ctx.out.table(
      ['items', 'succeeded', 'failed', 'in doubt', 'not submitted', 'from earlier runs', 'unfinished'],
      [[doc.total, doc.succeeded, doc.failed, doc.in_doubt, doc.not_submitted, doc.skipped, doc.unfinished]],
    );
  }
  if (doc.budget_note !== undefined) ctx.out.note(doc.budget_note);
  if (doc.in_doubt > 0) {
    ctx.out.note(
      `${doc.in_doubt} in doubt: their create may have reached the gateway, so they are not resent; check \`gw batch status ${dir}\`, then \`gw batch retry ${dir} --in-doubt\` to resend them`,
    );
  }
  if (doc.unfinished > 0) {
    ctx.out.note(
      `${doc.unfinished} created task${doc.unfinished === 1 ? '' : 's'} could not be followed to the end (a download cut, the gateway failing): kept as created; the same command, or gw batch retry ${dir}, finishes ${doc.unfinished === 1 ? 'it' : 'them'} without creating anything again`,
    );
  }
  const resume = doc.resume ?? '';
  if (doc.reason === 'interrupted' || doc.reason === 'timeout') {
    const why = doc.reason === 'interrupted' ? 'interrupted' : 'timed out (--timeout)';
    ctx.out.error(
      new GwError(`batch ${why}; created tasks are kept in ${doc.dir}`, {
        code: doc.reason === 'interrupted' ? 'interrupted' : 'timeout',
        hint: `resume with: ${resume}`,
      }),
    );
  } else if (doc.exit_code !== ExitCode.ok) {
    ctx.out.note(`details: ${doc.dir}/errors.jsonl; resume or finish with: ${resume}`);
  }
  return doc.exit_code;
}
