// Probe: `gw probe --sim` wall time (the whole process: start-up, in-process sim, every check) against the
// slowest single check of its own --json report. Checks run concurrently, so the ideal is the slowest one.
import { GW, cleanup, fmt, gwEnv, interleave, run, stats, tempDir } from './lib.mjs';

/** The probe figure. */
export async function probe() {
  const dir = tempDir('probe');
  const slowest = [];
  try {
    const [wall] = await interleave(
      [
        async () => {
          const r = await run(process.execPath, [GW, 'probe', '--sim', '--json'], {
            env: gwEnv(dir),
            capture: true,
          });
          if (r.code !== 0) throw new Error(`gw probe --sim exited ${r.code}: ${r.stderr.slice(0, 300)}`);
          const report = JSON.parse(r.stdout);
          slowest.push(Math.max(...report.checks.map((c) => c.latencyMs ?? 0)));
          return r.ms;
        },
      ],
      5,
      1,
    );
    const check = stats(slowest.slice(1));
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
    ];
  } finally {
    cleanup(dir);
  }
}
