// Probe: `gw probe --sim` wall time (the whole process: start-up, in-process sim, every check, exit) against the
// slowest single check of its own --json report. Checks run concurrently, so the ideal is the slowest one.
// A reference row splits the rest: the overhead of each run (its wall minus its own slowest check) next to what
// any Node process pays to start and exit (`node -e 0`), measured interleaved.
import { GW, cleanup, fmt, gwEnv, interleave, run, stats, tempDir } from './lib.mjs';

/** The probe figure, and its overhead against Node's own start-up and exit. */
export async function probe() {
  const dir = tempDir('probe');
  const slowest = [];
  const overheads = [];
  try {
    const [wall, floor] = await interleave(
      [
        async () => {
          const r = await run(process.execPath, [GW, 'probe', '--sim', '--json'], {
            env: gwEnv(dir),
            capture: true,
          });
          if (r.code !== 0) throw new Error(`gw probe --sim exited ${r.code}: ${r.stderr.slice(0, 300)}`);
          const report = JSON.parse(r.stdout);
          const slow = Math.max(...report.checks.map((c) => c.latencyMs ?? 0));
          slowest.push(slow);
          overheads.push(r.ms - slow);
          return r.ms;
        },
        async () => (await run(process.execPath, ['-e', '0'], { env: gwEnv(dir) })).ms,
      ],
      5,
      1,
    );
    const check = stats(slowest.slice(1));
    const overhead = stats(overheads.slice(1));
    const ratio = wall.median / check.median;
    return [
      {
        figure: 'probe: gw probe --sim wall vs its slowest check',
        gw: fmt(wall, 'ms', 0),
        baseline: `slowest check: ${fmt(check, 'ms', 0)}`,
        ratio: `${ratio.toFixed(2)}×`,
        target: '≤ 1.2×',
        ok: ratio <= 1.2,
        raw: { gw: wall, baseline: check, ratio },
      },
      {
        figure: 'probe: overhead (wall − slowest check, per run) vs node -e 0',
        gw: fmt(overhead, 'ms', 0),
        baseline: `node -e 0: ${fmt(floor, 'ms', 0)}`,
        ratio: `${(overhead.median / floor.median).toFixed(2)}×`,
        target: '(reference)',
        ok: true,
        raw: { gw: overhead, baseline: floor, ratio: overhead.median / floor.median },
      },
    ];
  } finally {
    cleanup(dir);
  }
}
