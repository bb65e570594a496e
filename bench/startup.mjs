// Start-up: `gw --version` and `gw --help` against bare `node -e 0`; `gw models --json` against a bare Node
// script doing the same fetch, both against a gw sim child. The single executable (dist/exe/gw, Node 24 inside;
// built here when missing or older than dist/) against the npm install, that is bin/gw.js on the Node running the
// bench, for the same three commands.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { GW, ROOT, cleanup, fmt, gwEnv, interleave, run, startSim, tempDir } from './lib.mjs';

const EXE = join(ROOT, 'dist', 'exe', 'gw');

/** Builds dist/exe/gw unless it is newer than the build of dist/ (the first build fetches Node from npm). */
function ensureExe() {
  if (existsSync(EXE) && statSync(EXE).mtimeMs >= statSync(join(ROOT, 'dist', 'cli.js')).mtimeMs) return;
  process.stderr.write('bench: building dist/exe/gw …\n');
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-exe.mjs')], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error('npm run build:exe failed');
}

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
  ensureExe();
  const npm = `npm install (Node ${process.versions.node})`;
  try {
    const [bare, version, help, exeVersion, exeHelp] = await interleave(
      [
        wall(node, ['-e', '0'], { env }),
        wall(node, [GW, '--version'], { env }),
        wall(node, [GW, '--help'], { env }),
        wall(EXE, ['--version'], { env }),
        wall(EXE, ['--help'], { env }),
      ],
      RUNS,
      2,
    );
    rows.push(row('start-up: gw --version', version, 'node -e 0', bare, 1.2));
    rows.push(row('start-up: gw --help', help, 'node -e 0', bare, 1.4));
    rows.push(row('start-up: executable gw --version', exeVersion, npm, version, 1.1));
    rows.push(row('start-up: executable gw --help', exeHelp, npm, help, 1.1));

    const sim = await startSim({}, 'startup');
    try {
      const simEnv = { ...env, GW_BASE_URL: sim.baseUrl, GW_TOKEN: sim.token };
      // The same request gw makes, with Node's built-in fetch, printing the body.
      const script =
        "const r = await fetch(process.env.GW_BASE_URL + '/v1/models', { headers: { authorization: 'Bearer ' + " +
        "process.env.GW_TOKEN, accept: 'application/json' } }); if (!r.ok) process.exit(1); " +
        'process.stdout.write(await r.text());';
      const [fetchScript, models, exeModels] = await interleave(
        [
          wall(node, ['--input-type=module', '-e', script], { env: simEnv, capture: true }),
          wall(node, [GW, 'models', '--json'], { env: simEnv, capture: true }),
          wall(EXE, ['models', '--json'], { env: simEnv, capture: true }),
        ],
        RUNS,
        2,
      );
      rows.push(row('start-up: gw models --json (sim)', models, 'node fetch script', fetchScript, 1.3));
      rows.push(row('start-up: executable gw models --json (sim)', exeModels, npm, models, 1.1));
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
