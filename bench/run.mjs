// `npm run bench`: every figure of issue 9 as a ratio measured side by side in one run (medians of several
// interleaved runs, min and max shown), with its target. Never a pass/fail timing in the test suite: this
// prints, and exits 0 even when a figure misses (exit 1 only when a measurement could not be made).
//
//   npm run bench                 all figures (about 16 minutes on 2 cores, 2 of them probe-models, 8 replay)
//   npm run bench -- startup      only some sections: startup, download, stream, probe, probe-models, load,
//                                 replay, telemetry, shards
//   npm run bench -- --markdown   also print the table of docs/performance.md
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT, ensureBuilt, hasGnuTime } from './lib.mjs';

const SECTIONS = {
  startup: async () => (await import('./startup.mjs')).startup(),
  download: async () => (await import('./download.mjs')).download(),
  stream: async () => (await import('./stream.mjs')).stream(),
  probe: async () => (await import('./probe.mjs')).probe(),
  batch: async () => (await import('./batch.mjs')).batch(),
  load: async () => (await import('./load.mjs')).load(),
  replay: async () => (await import('./replay.mjs')).replayBench(),
  'probe-models': async () => (await import('./probe-models.mjs')).probeModels(),
  telemetry: async () => (await import('./telemetry.mjs')).telemetry(),
  'probe-soak': async () => (await import('./probe-soak.mjs')).probeSoak(),
  shards: async () => (await import('./shards.mjs')).shards(),
};

const args = process.argv.slice(2);
const markdown = args.includes('--markdown');
const chosen = args.filter((a) => !a.startsWith('--'));
const names = chosen.length > 0 ? chosen : Object.keys(SECTIONS);

ensureBuilt();
const started = performance.now();
const rows = [];
let failed = false;
process.stderr.write(
  `bench: node ${process.version}, ${cpus().length} CPU(s) ${cpus()[0]?.model ?? ''}, peak RSS via ${hasGnuTime ? '/usr/bin/time' : '/proc VmHWM sampling'}\n`,
);
for (const name of names) {
  const section = SECTIONS[name];
  if (section === undefined) {
    process.stderr.write(`bench: unknown section ${name} (${Object.keys(SECTIONS).join(', ')})\n`);
    process.exitCode = 2;
    continue;
  }
  const t = performance.now();
  process.stderr.write(`bench: ${name} …\n`);
  try {
    for (const r of await section()) {
      rows.push(r);
      process.stderr.write(`  ${r.figure}: ${r.ratio} (target ${r.target})\n`);
    }
  } catch (e) {
    failed = true;
    rows.push({
      figure: `${name}: not measured`,
      gw: String(e?.message ?? e).split('\n')[0],
      baseline: '',
      ratio: '',
      target: '',
      ok: false,
    });
  }
  process.stderr.write(`bench: ${name} took ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
}

const header = ['figure', 'gw: median [min–max]', 'baseline: median [min–max]', 'ratio', 'target', ''];
const table = rows.map((r) => [r.figure, r.gw, r.baseline, r.ratio, r.target, r.ok ? 'meets' : 'MISSES']);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((t) => t[i].length)));
const line = (cells) =>
  cells
    .map((c, i) => c.padEnd(widths[i]))
    .join('  ')
    .trimEnd();
console.log(line(header));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const t of table) console.log(line(t));
console.log(`\ntotal ${((performance.now() - started) / 1000).toFixed(1)} s`);

if (markdown) {
  console.log('\n| figure | gw: median [min–max] | baseline: median [min–max] | ratio | target |');
  console.log('|---|---|---|---|---|');
  // A `|` inside a cell (the target "|Δ| ≤ 2 ms") would end the cell: escaped.
  const cell = (s) => String(s).replaceAll('|', '\\|');
  for (const r of rows)
    console.log(
      `| ${cell(r.figure)} | ${cell(r.gw)} | ${cell(r.baseline)} | ${cell(r.ratio)} | ${cell(r.target)}${r.ok ? '' : ' (missed)'} |`,
    );
}

mkdirSync(join(ROOT, 'bench', 'out'), { recursive: true });
writeFileSync(
  join(ROOT, 'bench', 'out', 'latest.json'),
  `${JSON.stringify({ node: process.version, cpus: cpus().length, at: new Date().toISOString(), rows }, null, 2)}\n`,
);
if (failed) process.exitCode = 1;
