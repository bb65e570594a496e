import { StringDecoder } from 'node:string_decoder';
import { detailText, type GwError } from '../core/errors.js';
import type { Redactor } from './redact.js';
import type { Io } from './io.js';
import { jsonSafe, neutralize } from './sanitize.js';

/** How a command prints: chosen once from the global flags. */
export interface OutputOptions {
  json: boolean;
  quiet: boolean;
  color: boolean;
  verbose: boolean;
}

/** Past this many rows a terminal table is drawn as padded columns instead of with cli-table3. */
export const TABLE_DRAW_MAX = 5000;

/** A table cell. */
export type Cell = string | number | boolean | null | undefined;

/**
 * Every byte gw prints goes through here: results on stdout, warnings/hints/progress on stderr, all redacted, and
 * none with a raw control character (sanitize.ts): human text shows them as `\xNN`, JSON documents as `\u00NN`
 * (the same JSON value). The one exception is the gateway's own payload streamed to a file or pipe (stream()).
 * Rules of CLI.md "Output rules": stdout carries only results; tips only on a TTY without --json/--quiet.
 */
export class Output {
  constructor(
    readonly io: Io,
    readonly opts: OutputOptions,
    readonly redactor: Redactor,
  ) {}

  /** True when stderr is a terminal and progress/tips may be drawn there. */
  get decorate(): boolean {
    return this.io.stderr.isTTY === true && !this.opts.json && !this.opts.quiet;
  }

  #pending = '';
  #flushAt: ReturnType<typeof setImmediate> | undefined;

  /** Text without raw control characters: JSON-escaped with --json on stdout, else shown as `\xNN`. */
  #safe(text: string, json: boolean): string {
    return json ? jsonSafe(text) : neutralize(text);
  }

  /** The one writer of stdout (after any streamed text still pending). */
  #out(text: string): void {
    this.flush();
    this.io.stdout.write(this.redactor.redact(this.#safe(text, this.opts.json)));
  }

  /** The one writer of stderr (human text, or an error's JSON document with `json`). */
  #err(text: string, json = false): void {
    this.flush();
    this.io.stderr.write(this.redactor.redact(this.#safe(text, json)));
  }

  /** Writes to stdout a drawing gw made from text already made safe (its own colour codes kept). */
  #drawn(text: string): void {
    this.flush();
    this.io.stdout.write(this.redactor.redact(text));
  }

  /** Writes text to stdout (redacted, control characters made visible), after any streamed text still pending. */
  write(text: string): void {
    this.#out(text);
  }

  /**
   * Streamed text (deltas as they arrive). Pieces written in the same turn of the event loop (every event of one
   * network read) go out as one write at the end of that turn: one write per delta costs a system call each, and a
   * 50 000-chunk stream spent more time writing than parsing. The delay is the rest of the turn, well under 1 ms.
   * Redacting the joined text also masks a secret split across deltas.
   *
   * This is the gateway's payload (generated text, or with --json the data of each event): to a file or a pipe it
   * goes exactly as sent; to a terminal its control characters are made visible like every other line.
   */
  stream(text: string): void {
    if (text.length === 0) return;
    if (this.#bytes) this.flush();
    this.#bytes = false;
    this.#pending += text;
    this.#flushAt ??= setImmediate(() => this.#drain(false));
  }

  /** True while #pending holds bytes read as latin1 (streamBytes to a file or pipe), not text. */
  #bytes = false;
  #decoder: StringDecoder | undefined;

  /**
   * The gateway's payload as bytes (`gw api`): to a file or a pipe byte for byte, binary or not (secrets masked,
   * across chunks too); to a terminal as UTF-8 text shown as stream() shows it, a byte that is not UTF-8 as
   * U+FFFD. endBytes() after the last chunk.
   */
  streamBytes(chunk: Buffer): void {
    if (this.io.stdout.isTTY === true) {
      this.#decoder ??= new StringDecoder('utf8');
      this.stream(this.#decoder.write(chunk));
      return;
    }
    if (chunk.length === 0) return;
    if (!this.#bytes) this.flush();
    this.#bytes = true;
    this.#pending += chunk.toString('latin1');
    this.#flushAt ??= setImmediate(() => this.#drain(false));
  }

  /** Ends streamBytes(): a UTF-8 sequence cut off at the end shows as U+FFFD; writes all that is held. */
  endBytes(): void {
    if (this.#decoder !== undefined) this.stream(this.#decoder.end());
    this.#decoder = undefined;
    this.flush();
  }

  /** Writes all that stream() holds (every other output calls it first, so order is kept; so does the end). */
  flush(): void {
    this.#drain(true);
  }

  /**
   * Writes what stream() holds, except (unless `all`) an end that could begin a secret: the next delta decides,
   * so a token split across two deltas is masked whole (Redactor#heldBack).
   */
  #drain(all: boolean): void {
    if (this.#flushAt !== undefined) {
      clearImmediate(this.#flushAt);
      this.#flushAt = undefined;
    }
    const redactor = this.#bytes ? this.redactor.latin1() : this.redactor;
    const keep = all ? 0 : redactor.heldBack(this.#pending);
    const text = this.#pending.slice(0, this.#pending.length - keep);
    this.#pending = this.#pending.slice(text.length);
    if (text.length === 0) return;
    if (this.#bytes) {
      this.io.stdout.write(Buffer.from(redactor.redact(text), 'latin1'));
      return;
    }
    const shown = this.io.stdout.isTTY === true ? this.#safe(text, this.opts.json) : text;
    this.io.stdout.write(this.redactor.redact(shown));
  }

  /** Writes one result line to stdout. */
  line(text = ''): void {
    this.write(`${text}\n`);
  }

  /** Prints a value as one JSON document. */
  json(value: unknown): void {
    this.line(JSON.stringify(value, null, 2));
  }

  /**
   * Prints a command's result: with `--json` the value as one JSON document (one line with `ndjson`), else what
   * `human` renders. The one place that chooses between the two, so handlers never test `--json` themselves.
   */
  async result<T>(
    value: T,
    human: (value: T) => void | Promise<void>,
    o: { ndjson?: boolean } = {},
  ): Promise<void> {
    if (!this.opts.json) await human(value);
    else if (o.ndjson === true) this.ndjson(value);
    else this.json(value);
  }

  /**
   * With `--json` only: prints the value as one JSON document (a step whose human form is printed elsewhere or
   * not at all, e.g. the final record of a wait that a spinner already reported).
   */
  jsonOnly(value: unknown): void {
    if (this.opts.json) this.json(value);
  }

  /** Without `--json` only: one result line (an id printed before a wait whose JSON document comes at the end). */
  humanLine(text: string): void {
    if (!this.opts.json) this.line(text);
  }

  /** Prints a value as one JSON line (streams: one object per event). */
  ndjson(value: unknown): void {
    this.line(JSON.stringify(value));
  }

  /** Aligned `key: value` lines for one record; undefined values are skipped. `aside`: written as aside() does. */
  keyValue(rows: ReadonlyArray<readonly [string, Cell]>, o: { aside?: boolean } = {}): void {
    const shown = rows.filter(([, v]) => v !== undefined && v !== null && v !== '');
    const width = Math.max(0, ...shown.map(([k]) => k.length));
    for (const [k, v] of shown) {
      const text = `${`${k}:`.padEnd(width + 1)} ${String(v)}`;
      if (o.aside === true) this.aside(text);
      else this.line(text);
    }
  }

  /**
   * A line that goes with a result but is not its table (a summary, a verdict): on stdout on a terminal, where a
   * person reads both; off a terminal on stderr, so stdout holds only the table (TSV) for `cut`, `sort`, `awk`.
   */
  aside(text: string): void {
    if (this.io.stdout.isTTY === true) this.line(text);
    else this.#err(`${text}\n`);
  }

  /**
   * A table on stdout. On a terminal it fits the width: boxed by cli-table3 (header coloured when colour is on),
   * the widest columns cut with `…` as gh does (never those in `keep`: ids a user copies); when even that is too
   * wide, or past TABLE_DRAW_MAX rows (cli-table3 spreads rows into function arguments and fails past ~100k), as
   * padded columns without borders, cut the same way. Off a terminal (a pipe, a file): a header line and
   * tab-separated columns with whole values, as gh prints them, so `cut` and `awk -F'\t'` split them; tabs and
   * newlines inside cells become spaces. Large lists are written in chunks.
   */
  async table(
    head: readonly string[],
    rows: ReadonlyArray<readonly Cell[]>,
    o: { keep?: readonly number[]; once?: readonly number[] } = {},
  ): Promise<void> {
    const text = (c: Cell): string => (c === undefined || c === null ? '' : neutralize(String(c)));
    if (this.io.stdout.isTTY !== true) {
      const clean = (c: Cell): string => text(c).replace(/[\t\r\n]+/g, ' ');
      this.#lines([head.join('\t'), ...rows.map((r) => r.map(clean).join('\t'))]);
      return;
    }
    // On a terminal a column in `once` that holds one value on every row is said once under the table: its
    // width goes to the columns that differ (a pipe keeps every column, so scripts see one shape).
    const drop = new Set(
      (o.once ?? []).filter((i) => rows.length > 0 && rows.every((r) => text(r[i]) === text(rows[0]?.[i]))),
    );
    const kept = head.map((_, i) => i).filter((i) => !drop.has(i));
    const cells = rows.map((r) => kept.map((i) => text(r[i])));
    const keep = o.keep?.filter((i) => !drop.has(i)).map((i) => kept.indexOf(i));
    const heads = kept.map((i) => head[i] ?? '');
    const boxed = rows.length > TABLE_DRAW_MAX ? undefined : await this.#boxed(heads, cells, keep);
    // Boxed from cells made safe above; its colour codes are cli-table3's, so the drawing is written as it is.
    if (boxed !== undefined) this.#drawn(`${boxed}\n`);
    else this.#lines(padded(heads, cells, this.width, keep));
    for (const i of drop) this.aside(`${head[i] ?? ''}: ${text(rows[0]?.[i])}`);
  }

  /** The table boxed by cli-table3 within the width, or undefined when it would have to be cut too narrow. */
  async #boxed(
    head: readonly string[],
    cells: readonly string[][],
    keep: readonly number[] | undefined,
  ): Promise<string | undefined> {
    const { default: Table } = await import('cli-table3');
    const color = this.opts.color;
    const draw = (colWidths?: number[]): string => {
      const t = new Table({
        head: [...head],
        style: color ? { compact: true } : { head: [], border: [], compact: true },
        wordWrap: false,
        ...(colWidths !== undefined ? { colWidths } : {}),
      });
      for (const r of cells) t.push(r);
      return t.toString();
    };
    const drawn = draw();
    // The top border (┌───┬──┐) spells each column's drawn width, padding included, in display columns.
    // eslint-disable-next-line no-control-regex
    const top = (drawn.split('\n')[0] ?? '').replace(/\x1b\[[0-9;]*m/g, '');
    if (top.length <= this.width) return drawn;
    const natural = top
      .slice(1, -1)
      .split('┬')
      .map((seg) => seg.length);
    // Boxed only while a cut column keeps 8 characters (its padding aside); narrower reads better without borders.
    const room = this.width - natural.length - 1;
    const fitted = fitWidths(natural, room, keep, 10);
    return fitted.reduce((a, b) => a + b, 0) <= room ? draw(fitted) : undefined;
  }

  /** The terminal's width for stdout (80 when it reports none, as under `script`). */
  get width(): number {
    const c = this.io.stdout.columns;
    return c !== undefined && c >= 20 ? c : 80;
  }

  /**
   * A point in time as gw prints it. Off a terminal always the local time (`2026-11-22 14:03:05 +01:00`). On a
   * terminal the local time with how long ago or ahead (`(in 23 h)`), or, `brief` (a table's cell, as gh prints
   * them), only how long ago or ahead.
   */
  time(at: Date | string | number, o: { brief?: boolean; now?: number } = {}): string {
    const d = at instanceof Date ? at : new Date(at);
    if (this.io.stdout.isTTY !== true) return formatLocalTime(d);
    const relative = formatRelative(d.getTime() - (o.now ?? Date.now()));
    return o.brief === true ? relative : `${formatLocalTime(d)} (${relative})`;
  }

  /** Writes lines to stdout in chunks (never one string of every line of a huge list). */
  #lines(lines: readonly string[]): void {
    for (let i = 0; i < lines.length; i += 4096) this.write(`${lines.slice(i, i + 4096).join('\n')}\n`);
  }

  /**
   * Redraws a live block on stderr (a terminal): moves the cursor up over the `drawn` lines written last, then
   * writes each line over the old one, made safe like every other line (the cursor codes are gw's own). Returns
   * how many lines are drawn now.
   */
  redraw(lines: readonly string[], drawn: number): number {
    this.flush();
    const up = drawn > 0 ? `\x1b[${drawn}A` : '';
    const body = lines.map((l) => `\r\x1b[K${this.redactor.redact(neutralize(l))}`).join('\n');
    this.io.stderr.write(`${up}${body}\n`);
    return lines.length;
  }

  /** A warning on stderr (unless --quiet). */
  warn(text: string): void {
    if (!this.opts.quiet) this.#err(`warning: ${text}\n`);
    else this.flush();
  }

  /** A note on stderr (unless --quiet or --json): what happened, what to do next. */
  note(text: string): void {
    if (!this.opts.quiet && !this.opts.json) this.#err(`${text}\n`);
    else this.flush();
  }

  /** A tip on stderr, only on a TTY (CLI.md: tips only when stderr is a TTY). */
  tip(text: string): void {
    if (this.decorate) this.#err(`${text}\n`);
    else this.flush();
  }

  /** One `--verbose` line on stderr. */
  verbose(text: string): void {
    if (this.opts.verbose) this.#err(`${text}\n`);
    else this.flush();
  }

  /** Prints an error: `error: <code>: <message>`, `request id:`, `hint:`; or `{"error": …}` with --json. */
  error(e: GwError): void {
    if (this.opts.json) {
      this.#err(`${JSON.stringify(e.toJSON())}\n`, true);
      return;
    }
    // Codes, messages and request ids may come from the gateway: #err makes their control characters visible.
    let text = `error: ${e.code}: ${e.message}\n`;
    for (const d of e.details ?? []) text += `  ${detailText(d)}\n`;
    if (e.detailsOmitted > 0) text += `  … and ${e.detailsOmitted} more\n`;
    if (e.requestId !== undefined) text += `request id: ${e.requestId}\n`;
    if (e.hint !== undefined) text += `hint: ${e.hint}\n`;
    this.#err(text);
  }
}

/**
 * Column widths that fit `avail` display columns: the widest columns are cut to one level (the widest level at
 * which everything fits), never below `min` nor those in `keep`; widths that fit are returned as they are.
 */
export function fitWidths(
  widths: readonly number[],
  avail: number,
  keep: readonly number[] = [],
  min = 6,
): number[] {
  const total = widths.reduce((a, b) => a + b, 0);
  if (total <= avail) return [...widths];
  const cuttable = widths.map((w, i) => [w, i] as const).filter(([, i]) => !keep.includes(i));
  let room = avail - widths.reduce((a, w, i) => a + (keep.includes(i) ? w : 0), 0);
  let level = Infinity;
  const sorted = [...cuttable].sort((a, b) => a[0] - b[0]);
  for (let k = 0; k < sorted.length; k++) {
    const share = Math.floor(room / (sorted.length - k));
    const w = (sorted[k] as readonly [number, number])[0];
    if (w <= share) room -= w;
    else {
      level = share;
      break;
    }
  }
  return widths.map((w, i) => (keep.includes(i) ? w : Math.min(w, Math.max(level, min))));
}

/** `text` cut to `width` characters, its end replaced by `…` when cut. */
function cut(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

/** A table as padded columns two spaces apart (as gh draws them), fitted to `columns` like a boxed one. */
function padded(
  head: readonly string[],
  cells: readonly string[][],
  columns: number,
  keep: readonly number[] | undefined,
): string[] {
  // Widths count two columns of gap each (the last one's is not drawn): the same budget as a boxed cell's padding.
  const natural = head.map((h) => h.length + 2);
  for (const r of cells) r.forEach((c, i) => (natural[i] = Math.max(natural[i] ?? 0, c.length + 2)));
  const widths = fitWidths(natural, columns + 2, keep).map((w) => w - 2);
  const fmt = (row: readonly string[]): string =>
    row
      .map((c, i) => cut(c, widths[i] ?? 0).padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [fmt(head), ...cells.map(fmt)];
}

/** `2026-11-22 14:03:05 +01:00` in the machine's time zone: the one format of every date gw prints. */
export function formatLocalTime(d: Date): string {
  const p = (n: number): string => String(Math.abs(n)).padStart(2, '0');
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  return (
    `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ` +
    `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())} ${sign}${p(Math.trunc(off / 60))}:${p(off % 60)}`
  );
}

/** `in 23 h`, `in 5 min`, `in 40 s`, `in 3 d`, or `2 h ago` for the past. */
export function formatRelative(deltaMs: number): string {
  const abs = Math.abs(deltaMs);
  if (abs < 1000) return 'just now';
  let text: string;
  if (abs < 60_000) text = `${Math.round(abs / 1000)} s`;
  else if (abs < 3_600_000) text = `${Math.round(abs / 60_000)} min`;
  else if (abs < 48 * 3_600_000) text = `${Math.round(abs / 3_600_000)} h`;
  else text = `${Math.round(abs / 86_400_000)} d`;
  return deltaMs >= 0 ? `in ${text}` : `${text} ago`;
}
