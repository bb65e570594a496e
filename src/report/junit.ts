/**
 * `gw probe --junit`: the common testsuites/testsuite/testcase shape Jenkins, GitLab and GitHub reporters read,
 * drawn from the probe's JSON document like the HTML report.
 */
import type { ProbeReport } from '../probe/runner.js';
import { failureParts } from './failure.js';
import { writeReportFile } from './output.js';
import { esc } from './svg.js';

/** An attribute value: escaped, with line breaks kept as character references. */
function attr(text: string): string {
  return esc(text).replace(/\r/g, '&#13;').replace(/\n/g, '&#10;').replace(/\t/g, '&#9;');
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

/** One testcase: its name, time, and what it says (a failure, a skip, a note). */
interface Case {
  name: string;
  ms: number;
  verdict: 'pass' | 'fail' | 'skip' | 'warn';
  message: string;
  type?: string;
  out: string;
}

/**
 * The testcases of a report. Compared with a baseline, a regression (a new failure, a cell beyond the latency
 * tolerance, a vanished or failing new model) is a failed case and a known failure that did not get worse is a
 * skipped one; without a baseline, a failed check is a failed case.
 */
function casesOf(r: ProbeReport): Case[] {
  const cells = r.baseline?.compared === true ? new Map(r.baseline.cells.map((c) => [c.id, c])) : undefined;
  const cases = r.checks.map((c): Case => {
    // The detail, the error unless the detail says it, the request id, the hint: each once.
    const out = failureParts(c, { requestId: true }).join('\n');
    const base = { name: c.id, ms: c.latencyMs, out, message: c.detail };
    const cell = cells?.get(c.id);
    if (cell?.regression === true) {
      const type = cell.change === 'slower' ? 'latency_regression' : (c.error?.code ?? cell.change);
      return { ...base, verdict: 'fail', type, message: `${cell.change}: ${cell.detail}; ${c.detail}` };
    }
    if (cell?.change === 'known-failure')
      return {
        ...base,
        verdict: 'skip',
        message: `known failure (failing in the baseline too): ${c.detail}`,
      };
    if (c.status === 'fail') return { ...base, verdict: 'fail', type: c.error?.code ?? 'check_failed' };
    const note = cell !== undefined ? `${cell.change}: ${cell.detail}\n` : '';
    return { ...base, verdict: c.status, out: `${note}${out}` };
  });
  for (const v of r.baseline?.compared === true ? r.baseline.cells : []) {
    if (v.change !== 'vanished') continue;
    const message = `vanished since the baseline: ${v.detail}`;
    cases.push({ name: v.id, ms: 0, verdict: 'fail', type: 'vanished', message, out: message });
  }
  return cases;
}

/** JUnit XML: one testcase per check, `<failure>` for failures, `<skipped/>` for skips, warnings in `<system-out>`. */
export function toJUnit(r: ProbeReport): string {
  const s = r.summary;
  const cases = casesOf(r);
  const n = (v: Case['verdict']): number => cases.filter((c) => c.verdict === v).length;
  const counts = `tests="${cases.length}" failures="${n('fail')}" errors="0" skipped="${n('skip')}" time="${seconds(r.durationMs)}"`;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="gw probe" ${counts}>`,
    `  <testsuite name="gw probe ${attr(r.gateway)}" ${counts} timestamp="${attr(r.startedAt.replace(/\.\d+Z$/, ''))}">`,
    '    <properties>',
    `      <property name="gateway" value="${attr(r.gateway)}"/>`,
    `      <property name="warned" value="${s.warned}"/>`,
    ...(r.baseline !== undefined
      ? [`      <property name="baseline" value="${attr(r.baseline.source)}"/>`]
      : []),
    '    </properties>',
  ];
  for (const c of cases) {
    lines.push(`    <testcase classname="gw.probe" name="${attr(c.name)}" time="${seconds(c.ms)}">`);
    if (c.verdict === 'pass') lines.push(`      <system-out>${esc(c.out)}</system-out>`);
    else if (c.verdict === 'skip') lines.push(`      <skipped message="${attr(c.message)}"/>`);
    else if (c.verdict === 'warn') lines.push(`      <system-out>${esc(`warning: ${c.out}`)}</system-out>`);
    else {
      const type = attr(c.type ?? 'check_failed');
      lines.push(`      <failure message="${attr(c.message)}" type="${type}">${esc(c.out)}</failure>`);
    }
    lines.push('    </testcase>');
  }
  lines.push('  </testsuite>', '</testsuites>', '');
  return lines.join('\n');
}

/**
 * Writes the JUnit report to `file` atomically (a reader, e.g. a CI step, never sees half of it). Its directory
 * was created and its path checked before the probe sent anything (`prepareReportPath`).
 */
export async function writeJUnit(file: string, r: ProbeReport): Promise<void> {
  await writeReportFile(file, toJUnit(r), 'the JUnit report');
}
