import type { GwError } from '../core/errors.js';
import type { Redactor } from './redact.js';
import type { Io } from './io.js';

/** How a command prints: chosen once from the global flags. */
export interface OutputOptions {
  json: boolean;
  quiet: boolean;
  color: boolean;
  verbose: boolean;
}

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

  /** Writes raw text to stdout (redacted). */
  write(text: string): void {
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

  /** Prints a value as one JSON line (streams: one object per event). */
  ndjson(value: unknown): void {
    this.line(JSON.stringify(value));
  }

  /** Aligned `key: value` lines for one record; undefined values are skipped. */
  keyValue(rows: ReadonlyArray<readonly [string, Cell]>): void {
    const shown = rows.filter(([, v]) => v !== undefined && v !== null && v !== '');
    const width = Math.max(0, ...shown.map(([k]) => k.length));
    for (const [k, v] of shown) this.line(`${`${k}:`.padEnd(width + 1)} ${String(v)}`);
  }

  /** A cli-table3 table on stdout (loaded only when a table is printed). */
  async table(head: readonly string[], rows: ReadonlyArray<readonly Cell[]>): Promise<void> {
    const { default: Table } = await import('cli-table3');
    const color = this.opts.color && this.io.stdout.isTTY === true;
    const t = new Table({
      head: [...head],
      style: color ? { compact: true } : { head: [], border: [], compact: true },
      wordWrap: false,
    });
    for (const r of rows) t.push(r.map((c) => (c === undefined || c === null ? '' : String(c))));
    this.line(t.toString());
  }

  /** A warning on stderr (unless --quiet). */
  warn(text: string): void {
    if (!this.opts.quiet) this.io.stderr.write(this.redactor.redact(`warning: ${text}\n`));
  }

  /** A note on stderr (unless --quiet or --json): what happened, what to do next. */
  note(text: string): void {
    if (!this.opts.quiet && !this.opts.json) this.io.stderr.write(this.redactor.redact(`${text}\n`));
  }

  /** A tip on stderr, only on a TTY (CLI.md: tips only when stderr is a TTY). */
  tip(text: string): void {
    if (this.decorate) this.io.stderr.write(this.redactor.redact(`${text}\n`));
  }

  /** One `--verbose` line on stderr. */
  verbose(text: string): void {
    if (this.opts.verbose) this.io.stderr.write(this.redactor.redact(`${text}\n`));
  }

  /** Prints an error: `error: <code>: <message>`, `request id:`, `hint:`; or `{"error": …}` with --json. */
  error(e: GwError): void {
    const err = this.io.stderr;
    if (this.opts.json) {
      err.write(this.redactor.redact(`${JSON.stringify(e.toJSON())}\n`));
      return;
    }
    let text = `error: ${e.code}: ${e.message}\n`;
    if (e.requestId !== undefined) text += `request id: ${e.requestId}\n`;
    if (e.hint !== undefined) text += `hint: ${e.hint}\n`;
    err.write(this.redactor.redact(text));
  }
}
