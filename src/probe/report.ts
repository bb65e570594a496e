/**
 * Renderers of a probe report: the table and summary line, JUnit XML for CI, and the live per-check
 * progress lines drawn on a terminal's stderr while the checks run.
 */
import { formatDuration } from '../core/duration.js';
import type { Output } from '../ui/output.js';
import { neutralize } from '../ui/sanitize.js';
import { baselineLine, type BaselineCell } from './baseline.js';
import { moneyText, spendText } from '../contract/prices.js';
import type { CheckRecord, CheckStatus, ProbeReport } from './runner.js';

const WORD: Record<CheckStatus, string> = { pass: 'pass', fail: 'FAIL', warn: 'warn', skip: 'skip' };

/** The summary line: `6 checks: 5 passed, 1 failed, 0 warned, 0 skipped in 1.4s (gateway …)`. */
export function summaryLine(r: ProbeReport): string {
  const s = r.summary;
  const verdict = s.failed > 0 ? 'FAILED' : 'OK';
  return `${verdict}: ${r.checks.length} checks: ${s.passed} passed, ${s.failed} failed, ${s.warned} warned, ${s.skipped} skipped in ${formatDuration(r.durationMs)} (${r.gateway})`;
}

function latencyCell(c: CheckRecord): string {
  if (c.status === 'skip') return '';
  const total = formatDuration(c.latencyMs);
  return c.ttftMs !== undefined ? `${total} (ttft ${formatDuration(c.ttftMs)})` : total;
}

/** A baseline change as the table's column says it (upper case: got worse). */
function changeWord(c: BaselineCell | undefined): string {
  if (c === undefined) return '';
  switch (c.change) {
    case 'new-failure':
      return 'NEW FAILURE';
    case 'slower': {
      const [b, a] = [c.before?.latencyMs, c.after?.latencyMs];
      return b !== undefined && a !== undefined && b > 0
        ? `SLOWER +${Math.round((a / b - 1) * 100)}%`
        : 'SLOWER';
    }
    case 'vanished':
      return 'VANISHED';
    case 'appeared':
      return c.regression ? 'APPEARED, FAILING' : 'appeared';
    case 'known-failure':
      return 'known failure';
    case 'recovered':
      return 'recovered';
  }
}

/**
 * Prints the table (check, result, latency, request id, detail; with a compared baseline also what changed, and
 * a row for each vanished cell), then the summary and the hints of failures: after the table on a terminal, on
 * stderr off one (stdout holds only the table).
 */
export async function printTable(out: Output, r: ProbeReport): Promise<void> {
  const cells = r.baseline?.compared === true ? new Map(r.baseline.cells.map((c) => [c.id, c])) : undefined;
  const rows = r.checks.map((c) => [c.id, WORD[c.status], latencyCell(c), c.requestId ?? '', c.detail]);
  if (cells !== undefined) {
    r.checks.forEach((c, i) => rows[i]?.splice(2, 0, changeWord(cells.get(c.id))));
    for (const v of r.baseline?.cells ?? []) {
      if (v.change === 'vanished') rows.push([v.id, '-', 'VANISHED', '', '', v.detail]);
    }
  }
  const head = ['check', 'result', 'latency', 'request id', 'detail'];
  if (cells !== undefined) head.splice(2, 0, 'vs baseline');
  if (r.spend !== undefined) {
    head.push('spend');
    r.checks.forEach((c, i) => rows[i]?.push(c.spend !== undefined ? moneyText(c.spend) : ''));
    for (const row of rows.slice(r.checks.length)) row.push('');
  }
  await out.table(head, rows, { keep: cells !== undefined ? [0, 3, 4] : [0, 2, 3] });
  out.aside(summaryLine(r));
  if (r.baseline !== undefined) out.aside(baselineLine(r.baseline));
  if (r.spend !== undefined) out.aside(`spend at --prices: ${spendText(r.spend)}`);
  const classes = new Map<string, number>();
  for (const c of r.checks) if (c.class !== undefined) classes.set(c.class, (classes.get(c.class) ?? 0) + 1);
  if (classes.size > 0) {
    out.aside(`by cause: ${[...classes].map(([k, n]) => `${n} ${k}`).join(', ')}`);
  }
  for (const c of r.checks) {
    if (c.status === 'fail' && c.error?.hint !== undefined) out.aside(`hint (${c.id}): ${c.error.hint}`);
  }
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const MARK: Record<CheckStatus, string> = { pass: '✔', fail: '✖', warn: '⚠', skip: '-' };

/**
 * One line per check on a terminal's stderr, redrawn in place while the checks run, erased at the end so
 * only the report remains. Drawn only when progress is enabled (TTY, no --json/--quiet).
 */
export class LiveLines {
  readonly #ids: string[];
  readonly #text = new Map<string, string>();
  readonly #done = new Set<string>();
  #frame = 0;
  #drawn = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly write: (s: string) => void,
    ids: readonly string[],
    /** Terminal width: longer lines are cut so none wraps (a wrapped line would break the redraw). */
    private readonly columns = 100,
  ) {
    this.#ids = [...ids];
    for (const id of ids) this.#text.set(id, 'waiting');
  }

  /** Starts redrawing (every 80 ms). */
  start(): void {
    this.#draw();
    this.#timer = setInterval(() => this.#draw(), 80);
    this.#timer.unref();
  }

  /** Sets a check's text; a final status is drawn at once, other updates with the next frame. */
  set(id: string, text: string, status?: CheckStatus): void {
    // A check's text may quote the gateway; the block's own cursor codes are added when it is drawn.
    text = neutralize(text);
    this.#text.set(id, text);
    if (status !== undefined) {
      this.#done.add(id);
      this.#text.set(id, `${MARK[status]} ${text}`);
      this.#draw();
    }
  }

  /** Prints a line above the live block (e.g. the video's list price) and redraws the block under it. */
  log(text: string): void {
    const up = this.#drawn > 0 ? `\x1b[${this.#drawn}A\x1b[J` : '';
    this.#drawn = 0;
    this.write(`${up}${neutralize(text)}\n`);
    this.#draw();
  }

  /** Stops and erases the lines. */
  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#drawn > 0) this.write(`\x1b[${this.#drawn}A\x1b[J`);
    this.#drawn = 0;
  }

  #draw(): void {
    this.#frame = (this.#frame + 1) % FRAMES.length;
    const width = Math.max(...this.#ids.map((i) => i.length));
    let s = this.#drawn > 0 ? `\x1b[${this.#drawn}A` : '';
    for (const id of this.#ids) {
      const t = this.#text.get(id) ?? '';
      const lead = this.#done.has(id) ? '' : `${FRAMES[this.#frame]} `;
      s += `\r${`${id.padEnd(width)}  ${lead}${t}`.slice(0, Math.max(20, this.columns - 1))}\x1b[K\n`;
    }
    this.#drawn = this.#ids.length;
    this.write(s);
  }
}
