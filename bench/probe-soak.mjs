// Probe soak: `gw probe --every` at a short interval against `gw sim` (its own process), with the metrics file,
// the /metrics server and the history on. gw forces no collection and sets no V8 flag, so V8 first sizes its heap
// for the run rate (at 5 ms, ~190 runs/s, the young generation and the old generation's limit grow for about the
// first 1 000 runs, ~35 MB, then stay). The figure is the growth of gw's resident set over the 1 000 runs after
// that warm-up (runs 1 000 to 2 000): memory must stay flat in the number of runs (target ≤ 5 MB).
//
//   node bench/probe-soak.mjs        (also a section of `npm run bench`: npm run bench -- probe-soak)
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { GW, cleanup, ensureBuilt, gwEnv, startSim, tempDir } from './lib.mjs';

const RUNS = 2000;
const WARM = 1000;

function rssMb(pid) {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function runsOf(file) {
  if (!existsSync(file)) return 0;
  const m = /^gw_probe_runs_total (\d+)/m.exec(readFileSync(file, 'utf8'));
  return m ? Number(m[1]) : 0;
}

/** The soak figure. */
export async function probeSoak() {
  const sim = await startSim({ timings: { streamDelayMs: 0 } }, 'soak-sim');
  const dir = tempDir('soak');
  const file = join(dir, 'gw_probe.prom');
  const child = spawn(
    process.execPath,
    [
      GW,
      'probe',
      '--only',
      'models,chat,chat-stream',
      '--every',
      '5ms',
      '--metrics-file',
      file,
      '--metrics-port',
      '0',
    ],
    {
      env: gwEnv(dir, { GW_BASE_URL: sim.baseUrl, GW_TOKEN: sim.token }),
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let err = '';
  child.stderr.on('data', (c) => (err += c.toString('utf8')));
  const exited = new Promise((r) => child.once('exit', (code) => r(code)));
  try {
    const started = Date.now();
    let baseAt = 0;
    // [run, RSS MB] from the end of the warm-up on.
    const samples = [];
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`gw probe exited ${child.exitCode}: ${err.trim().slice(0, 300)}`);
      if (Date.now() - started > 240_000) throw new Error(`only ${runsOf(file)} runs in 4 minutes`);
      const n = runsOf(file);
      if (n >= WARM) {
        if (samples.length === 0) baseAt = Date.now();
        samples.push([n, rssMb(child.pid)]);
      }
      if (n >= RUNS) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const rate = ((RUNS - WARM) * 1000) / (Date.now() - baseAt);
    child.kill('SIGTERM');
    const code = await exited;
    if (code !== 0) throw new Error(`gw probe --every ended with exit ${code} on SIGTERM`);
    // The resident set saws up and down with the collections: the figure compares the highest point of the
    // second half of the window with that of the first half.
    const mid = (WARM + RUNS) / 2;
    const top = (keep) => Math.max(...samples.filter(([n]) => keep(n)).map(([, rss]) => rss));
    const base = top((n) => n < mid);
    const last = top((n) => n >= mid);
    const growth = last - base;
    const peak = Math.max(base, last);
    return [
      {
        figure: `probe --every: RSS growth over runs ${WARM}–${RUNS} (peak of each half)`,
        gw: `${growth.toFixed(1)} MB (${base.toFixed(1)} → ${last.toFixed(1)} MB)`,
        baseline: `${rate.toFixed(0)} runs/s`,
        ratio: `${growth.toFixed(1)} MB`,
        target: '≤ 5 MB',
        ok: growth <= 5,
        raw: { base, last, peak, growth, rate },
      },
    ];
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await sim.stop();
    cleanup(dir);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  ensureBuilt();
  for (const r of await probeSoak())
    console.log(`${r.figure}: ${r.gw} at ${r.baseline} (target ${r.target})`);
}
