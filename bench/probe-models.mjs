// Probe at scale: `gw probe --all-models --kind chat,responses,messages --both-stream-modes` against `gw sim` (its own process)
// listing 200 generated chat models: each model x text API (chat, responses, messages) x stream mode is one
// cell and one request, at the probe's default concurrency. Targets: the run ends in <= 60 s, and its peak
// resident set at 200 models stays within 1.5x of the same run at 20 (memory flat in the number of cells).
//
//   node bench/probe-models.mjs     (also a section of `npm run bench`: npm run bench -- probe-models)
import { pathToFileURL } from 'node:url';
import { GW, cleanup, ensureBuilt, fmt, gwEnv, run, startSim, stats, tempDir } from './lib.mjs';

const ARGS = [
  'probe',
  '--all-models',
  '--kind',
  'chat,responses,messages',
  '--both-stream-modes',
  '--json',
  '--no-history',
];

/** One run against a simulator listing `count` generated models: wall ms, peak RSS MB, cells. */
async function runOnce(count) {
  const sim = await startSim({ generatedModels: { count } }, `probe-${count}`);
  const dir = tempDir(`probe-models-${count}`);
  try {
    const r = await run(process.execPath, [GW, ...ARGS], {
      env: gwEnv(dir, { GW_BASE_URL: sim.baseUrl, GW_TOKEN: sim.token }),
      capture: true,
      rss: true,
    });
    if (r.code !== 0) throw new Error(`gw probe --all-models exited ${r.code}: ${r.stderr.slice(0, 300)}`);
    const report = JSON.parse(r.stdout);
    const cells = report.checks.filter((c) => c.model?.startsWith('sim-chat-') && c.status !== 'skip');
    return { ms: r.ms, rssMb: r.rssMb, cells: cells.length };
  } finally {
    cleanup(dir);
    await sim.stop();
  }
}

/** The scale figures: wall time at 200 models, and peak RSS at 200 against 20. */
export async function probeModels() {
  const small = [];
  const large = [];
  let cells = 0;
  // Two runs at 200 (about a minute each against the simulator's default stream pacing), one at 20.
  small.push(await runOnce(20));
  for (let i = 0; i < 2; i++) {
    const r = await runOnce(200);
    cells = r.cells;
    large.push(r);
  }
  const wall = stats(large.map((r) => r.ms));
  const rss200 = stats(large.map((r) => r.rssMb));
  const rss20 = stats(small.map((r) => r.rssMb));
  const ratio = rss200.median / rss20.median;
  return [
    {
      figure: `probe: --all-models, 200 models x 3 text APIs x 2 modes (${cells} cells), wall`,
      gw: fmt(wall, 'ms', 0),
      baseline: '60 s',
      ratio: `${(wall.median / 60_000).toFixed(2)}×`,
      target: '≤ 1×',
      ok: wall.max <= 60_000,
      raw: { gw: wall, ratio: wall.median / 60_000 },
    },
    {
      figure: 'probe: --all-models peak RSS, 200 models vs 20',
      gw: fmt(rss200, 'MB', 1),
      baseline: `20 models: ${fmt(rss20, 'MB', 1)}`,
      ratio: `${ratio.toFixed(2)}×`,
      target: '≤ 1.5×',
      ok: ratio <= 1.5,
      raw: { gw: rss200, baseline: rss20, ratio },
    },
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  ensureBuilt();
  for (const r of await probeModels())
    console.log(`${r.figure}: ${r.gw} (${r.baseline}) ${r.ratio}, target ${r.target}`);
}
