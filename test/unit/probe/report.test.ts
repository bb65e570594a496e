import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LiveLines, printTable, summaryLine } from '../../../src/probe/report.js';
import { toJUnit } from '../../../src/report/junit.js';
import { esc } from '../../../src/report/svg.js';
import type { CheckRecord, ProbeReport } from '../../../src/probe/runner.js';
import { summarize } from '../../../src/probe/runner.js';
import { Output } from '../../../src/ui/output.js';
import { Redactor } from '../../../src/ui/redact.js';

/** A parsed XML element. */
interface XNode {
  name: string;
  attrs: Record<string, string>;
  children: XNode[];
  text: string;
}

const NAME = /^[A-Za-z_][\w.-]*/;

function decode(raw: string, where: string): string {
  if (/[<]/.test(raw)) throw new Error(`raw < in ${where}`);
  return raw.replace(/&([^;]*);?/g, (all, ent: string) => {
    if (!all.endsWith(';')) throw new Error(`bare & in ${where}`);
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
    if (ent in named) return named[ent] as string;
    if (/^#\d+$/.test(ent)) return String.fromCodePoint(Number(ent.slice(1)));
    if (/^#x[0-9a-fA-F]+$/.test(ent)) return String.fromCodePoint(parseInt(ent.slice(2), 16));
    throw new Error(`unknown entity &${ent}; in ${where}`);
  });
}

/**
 * A tiny strict XML 1.0 parser for what a JUnit report uses: declaration, elements, attributes, text.
 * Throws on anything not well-formed (mismatched or unclosed tags, unquoted or duplicate attributes,
 * bare `&` or `<`, characters XML forbids, content outside the root).
 */
function parseXml(src: string): XNode {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/.test(src)) throw new Error('forbidden control character');
  const decl = /^<\?xml version="1\.0" encoding="UTF-8"\?>\s*/.exec(src);
  if (!decl) throw new Error('missing XML declaration');
  let i = decl[0].length;
  const stack: XNode[] = [];
  let root: XNode | undefined;
  while (i < src.length) {
    const rest = src.slice(i);
    if (rest.startsWith('</')) {
      const m = /^<\/([A-Za-z_][\w.-]*)\s*>/.exec(rest);
      if (!m) throw new Error(`bad end tag at ${i}`);
      const top = stack.pop();
      if (!top || top.name !== m[1]) throw new Error(`mismatched </${m[1]}> at ${i}`);
      i += m[0].length;
      if (stack.length === 0) root = top;
    } else if (rest.startsWith('<')) {
      if (root !== undefined) throw new Error('content after the root element');
      const name = NAME.exec(rest.slice(1))?.[0];
      if (name === undefined) throw new Error(`bad start tag at ${i}`);
      let j = 1 + name.length;
      const node: XNode = { name, attrs: {}, children: [], text: '' };
      for (;;) {
        const a = /^\s+([A-Za-z_:][\w.:-]*)="([^"]*)"/.exec(rest.slice(j));
        if (!a) break;
        const key = a[1] as string;
        if (key in node.attrs) throw new Error(`duplicate attribute ${key} on <${name}>`);
        node.attrs[key] = decode(a[2] as string, `${name}@${key}`);
        j += a[0].length;
      }
      const close = /^\s*(\/?)>/.exec(rest.slice(j));
      if (!close) throw new Error(`malformed tag <${name}> at ${i}`);
      j += close[0].length;
      if (stack.length > 0) (stack[stack.length - 1] as XNode).children.push(node);
      else if (root !== undefined) throw new Error('two root elements');
      if (close[1] === '/') {
        if (stack.length === 0) root = node;
      } else stack.push(node);
      i += j;
    } else {
      const end = src.indexOf('<', i);
      const raw = src.slice(i, end === -1 ? undefined : end);
      if (stack.length === 0) {
        if (raw.trim() !== '') throw new Error('text outside the root element');
      } else (stack[stack.length - 1] as XNode).text += decode(raw, 'text');
      i += raw.length;
    }
  }
  if (stack.length > 0) throw new Error(`unclosed <${stack[stack.length - 1]?.name}>`);
  if (!root) throw new Error('no root element');
  return root;
}

const INT = /^\d+$/;
const DECIMAL = /^\d+(\.\d+)?$/;

/** Structural check against the common JUnit schema shape (the Jenkins/Ant junit-10 XSD). */
function assertJUnitShape(root: XNode): void {
  expect(root.name).toBe('testsuites');
  expect(root.children.length).toBeGreaterThan(0);
  for (const suite of root.children) {
    expect(suite.name).toBe('testsuite');
    expect(suite.attrs.name).toBeTruthy();
    for (const k of ['tests', 'failures', 'errors', 'skipped']) expect(suite.attrs[k]).toMatch(INT);
    expect(suite.attrs.time).toMatch(DECIMAL);
    expect(suite.attrs.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    const order = suite.children.map((c) => c.name);
    // properties?, testcase*, system-out?, system-err?
    expect(order.join(' ')).toMatch(/^(properties )?(testcase ?)*(system-out ?)?(system-err)?$/);
    for (const p of suite.children.filter((c) => c.name === 'properties')) {
      for (const prop of p.children) {
        expect(prop.name).toBe('property');
        expect(Object.keys(prop.attrs).sort()).toEqual(['name', 'value']);
      }
    }
    const cases = suite.children.filter((c) => c.name === 'testcase');
    for (const tc of cases) {
      expect(tc.attrs.name).toBeTruthy();
      expect(tc.attrs.classname).toBeTruthy();
      expect(tc.attrs.time).toMatch(DECIMAL);
      for (const child of tc.children) {
        expect(['skipped', 'error', 'failure', 'system-out', 'system-err']).toContain(child.name);
      }
      for (const f of tc.children.filter((c) => c.name === 'failure')) expect(f.attrs.message).toBeDefined();
    }
    const has = (n: string): number => cases.filter((c) => c.children.some((x) => x.name === n)).length;
    expect(Number(suite.attrs.tests)).toBe(cases.length);
    expect(Number(suite.attrs.failures)).toBe(has('failure'));
    expect(Number(suite.attrs.errors)).toBe(has('error'));
    expect(Number(suite.attrs.skipped)).toBe(has('skipped'));
  }
  expect(Number(root.attrs.tests)).toBe(root.children.reduce((n, s) => n + Number(s.attrs.tests), 0));
}

function report(checks: CheckRecord[]): ProbeReport {
  return {
    gateway: 'https://gw.example.com',
    startedAt: '2026-03-01T10:00:00.123Z',
    finishedAt: '2026-03-01T10:00:01.523Z',
    durationMs: 1400,
    checks,
    summary: summarize(checks),
  };
}

const NASTY = 'bad <tag> & "quotes" \'apos\'\nsecond line\u0001 end';

const SAMPLE = report([
  {
    id: 'models',
    title: 'models',
    status: 'pass',
    latencyMs: 12.5,
    requestId: 'req-1',
    detail: '40 visible',
  },
  {
    id: 'chat',
    title: 'chat',
    status: 'fail',
    latencyMs: 20,
    requestId: 'req-2',
    detail: `service_error: ${NASTY}`,
    error: { code: 'service_error', message: NASTY, status: 500, hint: 'retry <later>' },
  },
  {
    id: 'chat-stream',
    title: 'stream',
    status: 'warn',
    latencyMs: 300,
    ttftMs: 299,
    requestId: 'req-3',
    detail: 'all 12 chunks arrived in one burst (first at 299ms, last at 300ms)',
  },
  { id: 'video', title: 'video', status: 'skip', latencyMs: 0, detail: 'skipped (--skip)' },
]);

describe('JUnit report', () => {
  it('is well-formed XML with the testsuites/testsuite/testcase shape and consistent counts', () => {
    const root = parseXml(toJUnit(SAMPLE));
    assertJUnitShape(root);
    expect(root.attrs).toMatchObject({ tests: '4', failures: '1', skipped: '1', errors: '0', time: '1.400' });
    const cases = root.children[0]?.children.filter((c) => c.name === 'testcase') ?? [];
    expect(cases.map((c) => c.attrs.name)).toEqual(['models', 'chat', 'chat-stream', 'video']);
    expect(cases[0]?.attrs.time).toBe('0.013');
  });

  it('puts failures in <failure message=…> with the gateway code, escaped, and skips in <skipped/>', () => {
    const root = parseXml(toJUnit(SAMPLE));
    const cases = root.children[0]?.children.filter((c) => c.name === 'testcase') ?? [];
    const failure = cases[1]?.children.find((c) => c.name === 'failure');
    // Round trip: what a CI reader decodes is the text we had, minus the character XML cannot carry.
    expect(failure?.attrs.message).toBe(`service_error: ${NASTY.replace('\u0001', '')}`);
    expect(failure?.attrs.type).toBe('service_error');
    expect(failure?.text).toContain('request id: req-2');
    expect(failure?.text).toContain('hint: retry <later>');
    expect(cases[3]?.children.map((c) => c.name)).toEqual(['skipped']);
    expect(cases[3]?.children[0]?.attrs.message).toBe('skipped (--skip)');
    expect(cases[2]?.children[0]?.text).toMatch(/^warning: all 12 chunks/);
  });

  it('rejects what is not well-formed (the checker itself is strict)', () => {
    const bad = [
      '<?xml version="1.0" encoding="UTF-8"?>\n<a><b></a></b>',
      '<?xml version="1.0" encoding="UTF-8"?>\n<a x="1 & 2"/>',
      '<?xml version="1.0" encoding="UTF-8"?>\n<a x=1/>',
      '<?xml version="1.0" encoding="UTF-8"?>\n<a>1 < 2</a>',
      '<?xml version="1.0" encoding="UTF-8"?>\n<a x="1" x="2"/>',
      '<?xml version="1.0" encoding="UTF-8"?>\n<a/><b/>',
      '<a/>',
    ];
    for (const x of bad) expect(() => parseXml(x), x).toThrow();
  });

  it('escapes the five XML characters and drops forbidden control characters', () => {
    expect(esc(`<a href="x">&'</a>\u0000\u001f`)).toBe('&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;');
  });
});

function capture(opts: { json?: boolean; tty?: boolean } = {}): {
  out: Output;
  text: () => string;
  err: () => string;
} {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let text = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (text += c.toString('utf8')));
  stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const io = { stdout, stderr, stdin: new PassThrough(), env: {} };
  const out = new Output(
    io,
    { json: opts.json ?? false, quiet: false, verbose: false, color: false },
    new Redactor(),
  );
  return { out, text: () => text, err: () => err };
}

describe('table report', () => {
  it('shows check, result, latency (with ttft), request id and detail; the summary and hints on stderr off a terminal', async () => {
    const { out, text, err } = capture();
    await printTable(out, SAMPLE);
    const t = text();
    // Off a terminal the table is tab-separated (gh-style), so cut/awk can split it.
    expect(t).toMatch(/^check\tresult\tlatency\trequest id\tdetail$/m);
    expect(t).toMatch(/^chat-stream\twarn\t300ms \(ttft 299ms\)\treq-3/m);
    expect(t).toMatch(/^chat\tFAIL\t20ms\treq-2\tservice_error: bad <tag>/m);
    // stdout holds only the table (`gw probe | sort` sorts rows); what sums it up is on stderr.
    expect(t.trimEnd().split('\n')).toHaveLength(SAMPLE.checks.length + 1);
    expect(err()).toContain(
      'FAILED: 4 checks: 1 passed, 1 failed, 1 warned, 1 skipped in 1.4s (https://gw.example.com)',
    );
    expect(err()).toContain('hint (chat): retry <later>');
  });

  it('says OK when nothing failed', () => {
    const ok = report([{ id: 'models', title: 'm', status: 'pass', latencyMs: 1, detail: 'x' }]);
    expect(summaryLine(ok)).toMatch(/^OK: 1 checks: 1 passed, 0 failed/);
  });
});

describe('live lines', () => {
  it('draws one line per check, updates in place, and erases itself at the end', () => {
    let written = '';
    const live = new LiveLines((s) => (written += s), ['models', 'chat']);
    live.start();
    live.set('models', 'running');
    live.set('models', '40 visible', 'pass');
    live.log('probe: creating a 3s 720p video');
    live.stop();
    expect(written).toContain('models  ✔ 40 visible');
    expect(written).toContain('probe: creating a 3s 720p video\n');
    expect(written.endsWith('\u001b[2A\u001b[J')).toBe(true);
  });
});
