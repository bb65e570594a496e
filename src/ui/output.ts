import { detailText, type GwError } from '../core/errors.js';
import type { Redactor } from './redact.js';
import type { Io } from './io.js';
import { neutralize } from './sanitize.js';

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
 * Every byte gw prints goes through here: results on stdout, warnings/hints/progress on stderr, all redacted.
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

  /** Writes raw text to stdout (redacted), after any streamed text still pending. */
  write(text: string): void {
    this.flush();
    this.io.stdout.write(this.redactor.redact(text));
  }

  /**
   * Streamed text (deltas as they arrive). Pieces written in the same turn of the event loop (every event of one
   * network read) go out as one write at the end of that turn: one write per delta costs a system call each, and a
   * 50 000-chunk stream spent more time writing than parsing. The delay is the rest of the turn, well under 1 ms.
   * Redacting the joined text also masks a secret split across deltas.
   */
  stream(text: string): void {
    if (text.length === 0) return;
    this.#pending += text;
    this.#flushAt ??= setImmediate(() => this.flush());
  }

  /** Writes what stream() holds now (every other output calls it first, so order is kept). */
  flush(): void {
    if (this.#flushAt !== undefined) {
      clearImmediate(this.#flushAt);
      this.#flushAt = undefined;
    }
    if (this.#pending.length === 0) return;
    const text = this.#pending;
    this.#pending = '';
    this.io.stdout.write(this.redactor.redact(text));
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
      const text = `${`${k}:`.padEnd(width + 1)} ${neutralize(String(v))}`;
      if (o.aside === true) this.aside(text);
      else this.line(text);
    }
  }

  /**
   * A line that goes with a result but is not its table (a summary, a verdict): on stdout on a terminal, where a
   * person reads both; off a terminal on stderr, so stdout holds only the table (TSV) for `cut`, `sort`, `awk`.
   */
  aside(text: string): void {
    if (this.io.stdout.isTTY === true) {
      this.line(text);
      return;
    }
    this.flush();
    this.io.stderr.write(this.redactor.redact(`${text}\n`));
  }

  /**
   * A table on stdout. On a terminal: aligned columns drawn by cli-table3 (header coloured when colour is on), or,
   * past TABLE_DRAW_MAX rows, plain padded columns (cli-table3 spreads rows into function arguments and fails past
   * ~100k). Off a terminal (a pipe, a file): a header line and tab-separated columns, as gh prints them, so `cut`
   * and `awk -F'\t'` split them; tabs and newlines inside cells become spaces. Large lists are written in chunks.
   */
  async table(head: readonly string[], rows: ReadonlyArray<readonly Cell[]>): Promise<void> {
    const text = (c: Cell): string => (c === undefined || c === null ? '' : neutralize(String(c)));
    if (this.io.stdout.isTTY !== true) {
      const clean = (c: Cell): string => text(c).replace(/[\t\r\n]+/g, ' ');
      this.#lines([head.join('\t'), ...rows.map((r) => r.map(clean).join('\t'))]);
      return;
    }
    if (rows.length > TABLE_DRAW_MAX) {
      const widths = head.map((h) => h.length);
      for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, text(c).length)));
      const fmt = (cells: readonly string[]): string =>
        cells
          .map((c, i) => c.padEnd(widths[i] ?? 0))
          .join('  ')
          .trimEnd();
      this.#lines([fmt(head), ...rows.map((r) => fmt(r.map(text)))]);
      return;
    }
    const { default: Table } = await import('cli-table3');
    const color = this.opts.color;
    const t = new Table({
      head: [...head],
      style: color ? { compact: true } : { head: [], border: [], compact: true },
      wordWrap: false,
    });
    for (const r of rows) t.push(r.map(text));
    this.line(t.toString());
  }

  /** Writes lines to stdout in chunks (never one string of every line of a huge list). */
  #lines(lines: readonly string[]): void {
    for (let i = 0; i < lines.length; i += 4096) this.write(`${lines.slice(i, i + 4096).join('\n')}\n`);
  }

  /** A warning on stderr (unless --quiet). */
  warn(text: string): void {
    this.flush();
    if (!this.opts.quiet) this.io.stderr.write(this.redactor.redact(`warning: ${neutralize(text)}\n`));
  }

  /** A note on stderr (unless --quiet or --json): what happened, what to do next. */
  note(text: string): void {
    this.flush();
    if (!this.opts.quiet && !this.opts.json)
      this.io.stderr.write(this.redactor.redact(`${neutralize(text)}\n`));
  }

  /** A tip on stderr, only on a TTY (CLI.md: tips only when stderr is a TTY). */
  tip(text: string): void {
    this.flush();
    if (this.decorate) this.io.stderr.write(this.redactor.redact(`${text}\n`));
  }

  /** One `--verbose` line on stderr. */
  verbose(text: string): void {
    this.flush();
    if (this.opts.verbose) this.io.stderr.write(this.redactor.redact(`${text}\n`));
  }

  /** Prints an error: `error: <code>: <message>`, `request id:`, `hint:`; or `{"error": …}` with --json. */
  error(e: GwError): void {
    this.flush();
    const err = this.io.stderr;
    if (this.opts.json) {
      err.write(this.redactor.redact(`${JSON.stringify(e.toJSON())}\n`));
      return;
    }
    // Codes, messages and request ids may come from the gateway: their control characters are made visible.
    let text = `error: ${neutralize(e.code)}: ${neutralize(e.message)}\n`;
    for (const d of e.details ?? []) text += `  ${neutralize(detailText(d))}\n`;
    if (e.detailsOmitted > 0) text += `  … and ${e.detailsOmitted} more\n`;
    if (e.requestId !== undefined) text += `request id: ${neutralize(e.requestId)}\n`;
    if (e.hint !== undefined) text += `hint: ${neutralize(e.hint)}\n`;
    err.write(this.redactor.redact(text));
  }
}
