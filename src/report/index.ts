/**
 * The HTML reports of gw (`--html <file>` on probe, probe history, load and batch status). Commands load this
 * module only when `--html` is given. See README.md in this folder for the design.
 */
import type { ReportMeta } from './page.js';
import { checkReportPath } from './output.js';
import { writeReportFile } from './output.js';

export { checkReportPath } from './output.js';
export { probeHtml, type ProbeDoc } from './probe.js';
export { loadHtml } from './load.js';
export { historyHtml } from './history.js';
export { batchHtml } from './batch.js';
export { REPORT_CSP, safeUrl, type ReportMeta } from './page.js';

/** The part of a commander Command this module reads (its name and its ancestors, the root's version). */
export interface CommandLike {
  name(): string;
  parent: CommandLike | null;
  version(): string | undefined;
}

/** The report's header facts for a command: `gw <sub> …`, gw's version (from the root program), now. */
export function reportMeta(cmd: CommandLike, gateway: string, madeAt = new Date()): ReportMeta {
  const names: string[] = [];
  let root = cmd;
  for (let c: CommandLike | null = cmd; c !== null; c = c.parent) {
    names.unshift(c.name());
    root = c;
  }
  return { command: names.join(' '), version: root.version() ?? 'unknown', gateway, madeAt };
}

/** Writes a report atomically, with every known secret masked (a token must never reach a file). */
export async function writeHtml(
  file: string,
  html: string,
  redactor?: { redact(text: string): string },
): Promise<void> {
  await writeReportFile(file, redactor ? redactor.redact(html) : html);
}

/**
 * What a command's `--html <file>` needs in one call: the path is checked now (exit 2 before anything is sent),
 * and the returned function renders a document with `render` and writes it (atomically, secrets masked).
 */
export function htmlReport<T>(
  file: string,
  cmd: CommandLike,
  render: (doc: T, meta: ReportMeta) => string,
  redactor?: { redact(text: string): string },
): (doc: T, gateway: string) => Promise<void> {
  checkReportPath(file);
  return (doc, gateway) => writeHtml(file, render(doc, reportMeta(cmd, gateway)), redactor);
}
