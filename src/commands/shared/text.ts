/**
 * What gw chat, responses, messages and embed share: the prompt (arguments or standard input), the stream-or-not
 * default, printing text as it arrives, numeric flags, and `--usage` on stderr with common.md §2.1's caution.
 */
import { fstatSync } from 'node:fs';
import { UsageError } from '../../core/errors.js';
import { readAll } from '../../ui/io.js';
import type { Context } from '../../cli/context.js';
import { LOCAL_LIMITS, readLocalText } from '../../core/local-file.js';

/**
 * True when standard input is a pipe or a file given to gw (`echo text | gw chat …`, `gw chat … < f`). Arguments
 * plus stdin are joined only then: a parent process that merely leaves stdin open (a socket, a terminal, a job
 * runner) must not make `gw chat "hi"` wait for input that never comes.
 */
function stdinIsPiped(ctx: Context): boolean {
  if (ctx.io.stdin.isTTY === true) return false;
  if (ctx.io.stdin !== process.stdin) return true; // in-process callers pass their own stream
  try {
    const st = fstatSync(0);
    return st.isFIFO() || st.isFile();
  } catch {
    return false;
  }
}

/**
 * The prompt, as `llm` builds it: `-` alone reads standard input; arguments are joined by spaces, and when
 * standard input is piped too (`echo text | gw chat "summarise:"`) its text follows them on a new line; with no
 * arguments it is all of standard input. One trailing newline is removed, so `echo hi | gw chat` sends "hi".
 */
export async function readPrompt(ctx: Context, args: readonly string[]): Promise<string> {
  const words = args.length === 1 && args[0] === '-' ? [] : args;
  const explicitStdin = words.length !== args.length;
  let prompt = words.join(' ');
  if (explicitStdin || (words.length === 0 ? ctx.io.stdin.isTTY !== true : stdinIsPiped(ctx))) {
    const piped = (await readAll(ctx.io.stdin, ctx.signal)).replace(/\r?\n$/, '');
    prompt = prompt.length > 0 && piped.length > 0 ? `${prompt}\n${piped}` : prompt || piped;
  }
  if (prompt.trim().length === 0) {
    throw new UsageError('prompt: give the prompt as arguments or on standard input', { field: 'prompt' });
  }
  return prompt;
}

/** Input lines for embed: arguments (one input each), else the lines of `--file` or standard input (blank lines skipped). */
export async function readLines(
  ctx: Context,
  args: readonly string[],
  file: string | undefined,
): Promise<string[]> {
  if (args.length > 0 && file !== undefined) {
    throw new UsageError('input: give texts as arguments or --file, not both', { field: 'input' });
  }
  if (args.length > 0) return [...args];
  let text = '';
  if (file !== undefined) {
    text = await readLocalText(file, {
      flag: '--file',
      field: 'file',
      limit: LOCAL_LIMITS.text,
      signal: ctx.signal,
    });
  } else if (ctx.io.stdin.isTTY !== true) text = await readAll(ctx.io.stdin, ctx.signal);
  const lines = text.split(/\r?\n/).filter((l) => l.trim().length > 0);
  if (lines.length === 0) {
    throw new UsageError(
      'input: give texts as arguments, --file <path> (one per line) or on standard input',
      {
        field: 'input',
      },
    );
  }
  return lines;
}

/** Streams when stdout is a terminal, unless `--stream` / `--no-stream` says otherwise (CLI.md). */
export function wantStream(ctx: Context, flag: boolean | undefined): boolean {
  return flag ?? ctx.io.stdout.isTTY === true;
}

/** Prints generated text as it arrives and ends the line once. Silent with `--json`. */
export class TextPrinter {
  #printed = false;
  #last = '';
  constructor(private readonly ctx: Context) {}

  /** Writes a delta to stdout as it arrives (deltas of one network read share one write). */
  write(text: string): void {
    if (text.length === 0 || this.ctx.globals.json) return;
    this.ctx.out.stream(text);
    this.#printed = true;
    this.#last = text;
  }

  /** Ends the output with a newline: always after a complete answer, only to close a partial line after an error. */
  end(complete: boolean): void {
    if (this.ctx.globals.json) return;
    if (this.#printed ? !this.#last.endsWith('\n') : complete) this.ctx.out.write('\n');
  }
}

/**
 * Runs a stream loop with a printer, closing the line even when the stream fails or is interrupted. The events of
 * one network read are handled in one synchronous pass (no promise per event).
 */
export async function printStream<T>(
  ctx: Context,
  source: { batches: AsyncIterable<T[]>; onSent?: ((data: string) => void) | undefined },
  onEvent: (ev: T, printer: TextPrinter) => void,
): Promise<void> {
  const printer = new TextPrinter(ctx);
  // --json: the data of every event the gateway sent, in order, one per line (pings and unknown names too).
  if (ctx.globals.json) source.onSent = (data) => ctx.out.stream(`${data}\n`);
  let complete = false;
  try {
    for await (const batch of source.batches) {
      for (const ev of batch) onEvent(ev, printer);
    }
    complete = true;
  } finally {
    printer.end(complete);
  }
}

/** Prints a complete (non-streamed) answer: the body with `--json`, else the text. */
export async function printAnswer(ctx: Context, body: unknown, text: string): Promise<void> {
  await ctx.out.result(body, () => {
    const p = new TextPrinter(ctx);
    p.write(text);
    p.end(true);
  });
}

function lookup(obj: unknown, path: string): unknown {
  let v: unknown = obj;
  for (const k of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

/** The cache fields of common.md §2.1 (and the responses equivalents), per protocol. */
export const CACHE_FIELDS = {
  chat: ['prompt_tokens_details.cached_tokens', 'prompt_tokens_details.cache_creation_input_tokens'],
  responses: ['input_tokens_details.cached_tokens', 'input_tokens_details.cache_write_tokens'],
  messages: ['cache_read_input_tokens', 'cache_creation_input_tokens'],
} as const;

/**
 * `--usage`: token counts on stderr after the text (printed whatever --quiet says: the user asked for them),
 * the cache fields, and the document's caution that they explain cost but the gateway's bill is the charge.
 */
export function printUsage(ctx: Context, usage: unknown, cacheFields: readonly string[]): void {
  const lines: string[] = [];
  if (usage === null || typeof usage !== 'object') lines.push('usage: not reported by the gateway');
  else {
    const counts = Object.entries(usage as Record<string, unknown>)
      .filter(([k, v]) => typeof v === 'number' && !cacheFields.includes(k))
      .map(([k, v]) => `${k}=${String(v)}`);
    lines.push(`usage: ${counts.length > 0 ? counts.join(' ') : 'no token counts'}`);
    const cache = cacheFields
      .map((f) => [f, lookup(usage, f)] as const)
      .filter(([, v]) => typeof v === 'number')
      .map(([f, v]) => `${f}=${String(v)}`);
    lines.push(`cache: ${cache.length > 0 ? cache.join(' ') : 'not reported'}`);
  }
  lines.push(
    "note: cache fields are upstream signals that explain cost only; the charge is the gateway's log and bill",
  );
  ctx.out.io.stderr.write(ctx.redactor.redact(`${lines.join('\n')}\n`));
}
