// Start-up: `gw --version` and `gw --help` against bare `node -e 0`; `gw models --json` against a bare Node
// script doing the same fetch, both against a gw sim child.
import { GW, cleanup, fmt, gwEnv, interleave, run, startSim, tempDir } from './lib.mjs';

const RUNS = 21;

function wall(cmd, args, opts) {
  return async () => {
    const r = await run(cmd, args, opts);
    if (r.code !== 0) throw new Error(`${args.join(' ')} exited ${r.code}: ${r.stderr.slice(0, 300)}`);
    return r.ms;
  };
}

/** The start-up figures. */
export async function startup() {
  const node = process.execPath;
  const dir = tempDir('startup');
  const env = gwEnv(dir);
  const rows = [];
  try {
    const [bare, version, help] = await interleave(
      [
        wall(node, ['-e', '0'], { env }),
        wall(node, [GW, '--version'], { env }),
        wall(node, [GW, '--help'], { env }),
      ],
      RUNS,
      2,
    );
    rows.push(row('start-up: gw --version', version, 'node -e 0', bare, 1.2));
    rows.push(row('start-up: gw --help', help, 'node -e 0', bare, 1.4));

    const sim = await startSim({}, 'startup');
    try {
      const simEnv = { ...env, GW_BASE_URL: sim.baseUrl, GW_TOKEN: sim.token };
      // The same request gw makes, with Node's built-in fetch, printing the body.
      const script =
        "const r = await fetch(process.env.GW_BASE_URL + '/v1/models', { headers: { authorization: 'Bearer ' + " +
        "process.env.GW_TOKEN, accept: 'application/json' } }); if (!r.ok) process.exit(1); " +
        'process.stdout.write(await r.text());';
      const [fetchScript, models] = await interleave(
        [
          wall(node, ['--input-type=module', '-e', script], { env: simEnv, capture: true }),
          wall(node, [GW, 'models', '--json'], { env: simEnv, capture: true }),
        ],
        RUNS,
        2,
      );
      rows.push(row('start-up: gw models --json (sim)', models, 'node fetch script', fetchScript, 1.3));
    } finally {
      await sim.stop();
    }
  } finally {
    cleanup(dir);
  }
  return rows;
}

function row(figure, gwStats, baselineName, baseStats, target) {
  const ratio = gwStats.median / baseStats.median;
  return {
    figure,
    gw: fmt(gwStats, 'ms'),
    baseline: `${baselineName}: ${fmt(baseStats, 'ms')}`,
    ratio: `${ratio.toFixed(2)}×`,
    target: `≤ ${target}×`,
    ok: ratio <= target,
    raw: { gw: gwStats, baseline: baseStats, ratio },
  };
}
