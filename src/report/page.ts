/**
 * The HTML page around the charts: one self-contained document (inline CSS, inline SVG, no script, no font or
 * image fetched) with its own Content-Security-Policy, light and dark palettes, and a print layout.
 */
import { esc } from './svg.js';

/** The policy every report declares (and is tested under): nothing may load, inline styles only. */
export const REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/** Who made the report, about what, when. */
export interface ReportMeta {
  /** e.g. `gw probe`. */
  command: string;
  /** gw's version. */
  version: string;
  /** The gateway's base URL (userinfo, query and fragment are removed before it is shown). */
  gateway: string;
  /** When the report was made. */
  madeAt: Date;
}

/**
 * A URL safe to show: no user name or password, no query or fragment (where tokens travel). Text that is not a
 * URL is cut at the first `?` or `#` and loses anything before an `@`.
 */
export function safeUrl(text: string): string {
  let u: URL | undefined;
  try {
    u = new URL(text);
  } catch {
    u = undefined;
  }
  if (u !== undefined && u.host !== '') {
    u.username = '';
    u.password = '';
    u.search = '';
    u.hash = '';
    return u.toString().replace(/\/$/, '');
  }
  return text.replace(/[?#].*$/s, '').replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/@]*@/i, '$1');
}

/** A table: header cells and rows of cells; numeric columns are right-aligned. */
export interface Table {
  caption?: string;
  head: readonly string[];
  rows: readonly (readonly (string | number)[])[];
  /** Indexes of numeric columns (right-aligned, never wrapped). */
  numeric?: readonly number[];
  /** Indexes of columns never wrapped (ids). */
  nowrap?: readonly number[];
  /** Per-row class (e.g. `fail`), for a mark at the row's start. */
  rowClass?: readonly (string | undefined)[];
}

/** A `<table>` (all text escaped). */
export function table(t: Table): string {
  const num = new Set(t.numeric ?? []);
  const nw = new Set(t.nowrap ?? []);
  const cls = (i: number): string => (num.has(i) ? ' class="num"' : nw.has(i) ? ' class="nw"' : '');
  return (
    '<div class="table"><table>' +
    (t.caption ? `<caption>${esc(t.caption)}</caption>` : '') +
    `<thead><tr>${t.head.map((h, i) => `<th scope="col"${cls(i)}>${esc(h)}</th>`).join('')}</tr></thead><tbody>` +
    t.rows
      .map((r, k) => {
        const rc = t.rowClass?.[k];
        return `<tr${rc ? ` class="${esc(rc)}"` : ''}>${r.map((c, i) => `<td${cls(i)}>${esc(c)}</td>`).join('')}</tr>`;
      })
      .join('') +
    '</tbody></table></div>'
  );
}

/** A section of the report: a heading, optional lead text, and its content (charts, tables). */
export function section(title: string, content: string, lead?: string): string {
  return `<section><h2>${esc(title)}</h2>${lead ? `<p class="lead">${esc(lead)}</p>` : ''}${content}</section>`;
}

/** Key figures shown large at the top (each with its label). */
export function figures(
  items: readonly { label: string; value: string; tone?: 'ok' | 'bad' | 'warn' }[],
): string {
  return `<dl class="figures">${items
    .map(
      (f) =>
        `<div${f.tone ? ` class="${f.tone}"` : ''}><dt>${esc(f.label)}</dt><dd>${esc(f.value)}</dd></div>`,
    )
    .join('')}</dl>`;
}

const CSS = `
:root{color-scheme:light dark;--bg:#fff;--fg:#1b1f24;--muted:#5b636e;--grid:#e3e6ea;--axis:#8a929c;--panel:#f6f7f9;
--c0:#0b6bb5;--c1:#c2410c;--c2:#1a7f4b;--c3:#b7791f;--c4:#8e44ad;--c5:#2b8cbe;--c6:#6b7280;--c7:#9aa3ad;
--ok:#1a7f4b;--bad:#b42318;--warn:#9a6700}
@media (prefers-color-scheme:dark){:root{--bg:#111418;--fg:#e6e8eb;--muted:#a2aab4;--grid:#2a3038;--axis:#6c7580;
--panel:#181c21;--c0:#5aa9e6;--c1:#f08a4b;--c2:#4cc38a;--c3:#e3b341;--c4:#c58af0;--c5:#7cc4e8;--c6:#9aa3ad;--c7:#5c6670;
--ok:#4cc38a;--bad:#ff7b72;--warn:#e3b341}}
*{box-sizing:border-box}
html{background:var(--bg);color:var(--fg)}
body{margin:0 auto;max-width:980px;padding:24px 20px 48px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:32px 0 8px;border-bottom:1px solid var(--grid);padding-bottom:4px}
.lead,figcaption span,.meta,footer{color:var(--muted)}
.meta{display:flex;flex-wrap:wrap;gap:4px 20px;margin:6px 0 0;padding:0;font-size:13px}.meta div{display:flex;gap:6px}
.meta dt{font-weight:600}.meta dd{margin:0;overflow-wrap:anywhere}
.verdict{display:inline-block;font-weight:700;padding:2px 10px;border:2px solid currentColor;border-radius:4px;margin:8px 0 0}
.verdict.ok{color:var(--ok)}.verdict.bad{color:var(--bad)}.verdict.warn{color:var(--warn)}
.figures{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0 0;padding:0}
.figures div{background:var(--panel);border:1px solid var(--grid);border-radius:6px;padding:8px 14px;min-width:120px}
.figures dt{font-size:12px;color:var(--muted)}.figures dd{margin:0;font-size:20px;font-weight:650;font-variant-numeric:tabular-nums}
.figures .bad dd{color:var(--bad)}.figures .ok dd{color:var(--ok)}.figures .warn dd{color:var(--warn)}
.table{overflow-x:auto}table{border-collapse:collapse;width:100%;font-size:13px;font-variant-numeric:tabular-nums}
caption{text-align:left;color:var(--muted);padding:4px 0}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--grid);vertical-align:top;overflow-wrap:break-word}
th{font-weight:600;border-bottom:2px solid var(--axis);white-space:nowrap}td.num,th.num{text-align:right;white-space:nowrap}td.nw{white-space:nowrap}
tr.fail td:first-child{box-shadow:inset 4px 0 var(--bad)}tr.warn td:first-child{box-shadow:inset 4px 0 var(--warn)}
tr.fail td:first-child::before{content:"✖ "}tr.warn td:first-child::before{content:"⚠ "}
figure.chart{margin:16px 0 8px;break-inside:avoid}figcaption{margin:0 0 4px}
svg.plot{display:block;width:100%;height:auto;max-width:980px;font-size:11px;fill:var(--fg);overflow:visible}
svg.plot text{fill:var(--fg)}svg.plot .axis text{fill:var(--muted)}svg.plot .axis .label{fill:var(--fg);font-weight:600}
.domain,.tick{stroke:var(--axis);fill:none}.grid{stroke:var(--grid);fill:none}
.line{fill:none;stroke-width:2;stroke-linejoin:round;stroke-linecap:round}
.s0{stroke:var(--c0);fill:var(--c0)}.s1{stroke:var(--c1);fill:var(--c1)}.s2{stroke:var(--c2);fill:var(--c2)}
.s3{stroke:var(--c3);fill:var(--c3)}.s4{stroke:var(--c4);fill:var(--c4)}.s5{stroke:var(--c5);fill:var(--c5)}
.s6{stroke:var(--c6);fill:var(--c6)}.s7{stroke:var(--c7);fill:var(--c7)}
.line.s0,.line.s1,.line.s2,.line.s3,.line.s4,.line.s5,.line.s6,.line.s7{fill:none}
.mk{stroke:var(--bg);stroke-width:1}.mk.open{fill:none;stroke-width:2}
.mk.open.s0{stroke:var(--c0)}.mk.open.s1{stroke:var(--c1)}.mk.open.s2{stroke:var(--c2)}.mk.open.s3{stroke:var(--c3)}
.mk.open.s4{stroke:var(--c4)}.mk.open.s5{stroke:var(--c5)}.mk.open.s6{stroke:var(--c6)}.mk.open.s7{stroke:var(--c7)}
text.end{stroke:none;font-weight:600}
.t0{fill:var(--c0)}.t1{fill:var(--c1)}.t2{fill:var(--c2)}.t3{fill:var(--c3)}.t4{fill:var(--c4)}.t5{fill:var(--c5)}
.t6{fill:var(--c6)}.t7{fill:var(--c7)}.hollow{fill:none;stroke:var(--axis);stroke-dasharray:3 2}
.pat{stroke:var(--bg);stroke-width:1.6;opacity:.85}.pat-dot{fill:var(--bg);opacity:.9}
.area{stroke:var(--bg);stroke-width:.5}
.bar{fill:var(--c0)}.inner{fill:var(--fg)}
.rule path{stroke:var(--fg);stroke-width:1.5;stroke-dasharray:5 3;fill:none}.rule text{font-weight:600}
.mark circle{fill:none;stroke:var(--fg);stroke-width:2}.mark path{stroke:var(--fg);stroke-width:1.2;fill:none}
.mark path.flag{fill:var(--fg)}.mark text{font-weight:700}
.rowlabel{font-weight:600}.ptlabel{font-size:10px;fill:var(--muted)}svg.plot text.ptlabel{fill:var(--muted)}.note{fill:var(--muted)}
svg.plot .ptlabel,svg.plot .mark text,svg.plot .rule text,svg.plot text.end{paint-order:stroke;stroke:var(--bg);stroke-width:3px;stroke-linejoin:round}
footer{margin-top:40px;border-top:1px solid var(--grid);padding-top:8px;font-size:12px}
code{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}pre{overflow-x:auto;margin:8px 0}
@media print{:root{--bg:#fff;--fg:#000;--muted:#333;--grid:#ccc;--axis:#555;--panel:#fff;
--c0:#0b6bb5;--c1:#c2410c;--c2:#1a7f4b;--c3:#b7791f;--c4:#8e44ad;--c5:#2b8cbe;--c6:#6b7280;--c7:#9aa3ad;
--ok:#1a7f4b;--bad:#b42318;--warn:#9a6700}
body{max-width:none;padding:0;font-size:11pt}h2{break-after:avoid}section{break-inside:auto}
figure.chart,table,.figures{break-inside:avoid}a{color:inherit;text-decoration:none}}
@page{margin:14mm}
`;

/** An ISO instant as `2026-11-23 13:07:02 UTC`. */
export function utc(iso: string): string {
  return iso.replace('T', ' ').replace(/(\.\d+)?Z$/, ' UTC');
}

/** The whole document. `body` is trusted markup built by this module (every value in it escaped). */
export function page(o: {
  title: string;
  meta: ReportMeta;
  verdict?: { text: string; tone: 'ok' | 'bad' | 'warn' };
  extraMeta?: readonly { label: string; value: string }[];
  body: string;
}): string {
  const gateway = safeUrl(o.meta.gateway);
  const made = o.meta.madeAt.toISOString();
  const metaItems = [
    { label: 'Gateway', value: gateway },
    { label: 'Made', value: utc(made) },
    ...(o.extraMeta ?? []),
    { label: 'By', value: `gw ${o.meta.version}` },
  ];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP}">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="generator" content="gw ${esc(o.meta.version)}">
<title>${esc(o.title)} · ${esc(gateway)}</title>
<style>${CSS}</style></head>
<body><header><h1>${esc(o.title)}</h1>
<dl class="meta">${metaItems
    .map((m) =>
      m.label === 'Made'
        ? `<div><dt>${esc(m.label)}</dt><dd><time datetime="${esc(made)}">${esc(m.value)}</time></dd></div>`
        : `<div><dt>${esc(m.label)}</dt><dd>${esc(m.value)}</dd></div>`,
    )
    .join('')}</dl>
${o.verdict ? `<p class="verdict ${o.verdict.tone}">${esc(o.verdict.text)}</p>` : ''}</header>
<main>${o.body}</main>
<footer>Made by gw ${esc(o.meta.version)} (<code>${esc(o.meta.command)} --html</code>) at ${esc(made)}. Every figure here is also in <code>${esc(o.meta.command)} --json</code>.</footer>
</body></html>
`;
}
