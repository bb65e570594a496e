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

/** JUnit XML: one testcase per check, `<failure>` for failures, `<skipped/>` for skips, warnings in `<system-out>`. */
export function toJUnit(r: ProbeReport): string {
  const s = r.summary;
  const counts = `tests="${r.checks.length}" failures="${s.failed}" errors="0" skipped="${s.skipped}" time="${seconds(r.durationMs)}"`;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="gw probe" ${counts}>`,
    `  <testsuite name="gw probe ${attr(r.gateway)}" ${counts} timestamp="${attr(r.startedAt.replace(/\.\d+Z$/, ''))}">`,
    '    <properties>',
    `      <property name="gateway" value="${attr(r.gateway)}"/>`,
    `      <property name="warned" value="${s.warned}"/>`,
    '    </properties>',
  ];
  for (const c of r.checks) {
    const open = `    <testcase classname="gw.probe" name="${attr(c.id)}" time="${seconds(c.latencyMs)}"`;
    // The detail, the error unless the detail says it, the request id, the hint: each once.
    const out = failureParts(c, { requestId: true }).join('\n');
    if (c.status === 'pass') {
      lines.push(`${open}>`, `      <system-out>${esc(out)}</system-out>`, '    </testcase>');
    } else if (c.status === 'skip') {
      lines.push(`${open}>`, `      <skipped message="${attr(c.detail)}"/>`, '    </testcase>');
    } else if (c.status === 'warn') {
      lines.push(`${open}>`, `      <system-out>${esc(`warning: ${out}`)}</system-out>`, '    </testcase>');
    } else {
      const type = c.error?.code ?? 'check_failed';
      lines.push(
        `${open}>`,
        `      <failure message="${attr(c.detail)}" type="${attr(type)}">${esc(out)}</failure>`,
        '    </testcase>',
      );
    }
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
