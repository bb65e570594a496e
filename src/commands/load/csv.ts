/**
 * `gw load --csv <file>`: one row per finished request, written as the run goes. Cells are quoted per RFC 4180;
 * a text cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'` (OWASP's rule
 * against CSV injection), so a spreadsheet never runs a gateway's error code or request id as a formula.
 */
import { createWriteStream, openSync, type WriteStream } from 'node:fs';
import { UsageError } from '../../core/errors.js';
import type { Outcome } from '../../load/exchange.js';

/** Columns of `--csv`: one row per request. */
export const CSV_HEAD = [
  'step',
  'start_ms',
  'api',
  'stream',
  'ok',
  'status',
  'error_code',
  'request_id',
  'ttft_ms',
  'e2e_ms',
  'tpot_ms',
  'output_tokens',
  'lag_ms',
  'model',
  'session',
];

/**
 * Columns `--prices` adds after those (a run without it writes the columns above only): the input tokens of the
 * answer's usage (cached ones included), the cached ones, and what the answer cost with its currency (empty when
 * it has no price).
 */
export const CSV_PRICE_HEAD = ['input_tokens', 'cached_tokens', 'spend', 'currency'];

const FORMULA = /^[=+\-@\t\r]/;

/** One CSV line: numbers to three decimals, text neutralised against formulas and quoted when it must be. */
export function csvLine(cells: ReadonlyArray<string | number | undefined>): string {
  return `${cells
    .map((c) => {
      if (c === undefined) return '';
      if (typeof c === 'number') return String(Math.round(c * 1000) / 1000);
      const s = FORMULA.test(c) ? `'${c}` : c;
      return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
    })
    .join(',')}\n`;
}

/** The row of one request (`session`: a replayed conversation's; `priced`: the run has --prices). */
export function csvRow(step: string, o: Outcome & { session?: string | undefined }, priced = false): string {
  const tpot =
    o.ok && o.ttftMs !== undefined && o.outputTokens !== undefined && o.outputTokens > 1
      ? (o.e2eMs - o.ttftMs) / (o.outputTokens - 1)
      : undefined;
  return csvLine([
    step,
    o.startMs,
    o.api,
    String(o.stream),
    String(o.ok),
    o.status,
    o.code,
    o.requestId,
    o.ttftMs,
    o.e2eMs,
    tpot,
    o.outputTokens,
    o.lagMs,
    o.model,
    o.session,
    // The amount as text: numbers are cut to three decimals, a token's spend needs its millionths.
    ...(priced ? [o.inputTokens, o.cachedTokens, o.spend && String(o.spend.amount), o.spend?.currency] : []),
  ]);
}

/** A --csv file, opened (and its header written) before anything is sent: an unwritable path is exit 2. */
export class CsvFile {
  readonly #stream: WriteStream;

  /** `priced`: the run has --prices (CSV_PRICE_HEAD's columns are added). */
  constructor(
    path: string,
    onError: (e: Error) => void,
    readonly priced = false,
  ) {
    let fd: number;
    try {
      fd = openSync(path, 'w');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? String(e);
      throw new UsageError(`--csv: cannot write ${path} (${code})`, { field: '--csv' });
    }
    this.#stream = createWriteStream('', { fd });
    this.#stream.on('error', onError);
    this.#stream.write(csvLine(priced ? [...CSV_HEAD, ...CSV_PRICE_HEAD] : CSV_HEAD));
  }

  write(step: string, o: Outcome & { session?: string | undefined }): void {
    this.#stream.write(csvRow(step, o, this.priced));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#stream.end(resolve));
  }
}
