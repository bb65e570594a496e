// Shards: the fan-in of runs split over many machines, and how together shards start under a real scheduler.
//  - `gw batch merge` of 16 shard directories holding 1 000 000 result lines: peak RSS and wall time. The 16
//    shards are real runs (`gw batch run --shard k/16` of one small file against a `gw sim` child), then each is
//    grown to its share of the million with copies of its own result line and `done` record under new
//    custom_ids (sending a million requests would take the bench an hour; the merge reads, checks and writes
//    every line the same way whatever sent it).
//  - `gw load merge` of 64 shard reports: wall time, and exactness: the merged percentiles equal those of one
//    histogram of every request of every shard (their --csv rows), as the load engine's own histogram builds it.
//  - Start skew under Slurm: rounds of 3 `gw load --shard auto --start-at` array tasks on a one-node cluster
//    (the test's helper and the job script of docs/distributed.md), each shard's first request against the
//    instant by the simulator's arrival stamps; p99 over every shard of every round.
// GW_BENCH_SHARDS_LINES (default 1000000) and GW_BENCH_SKEW_ROUNDS (default 5) shrink it on a slow machine.
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import {
  cleanup,
  fmt,
  getJson,
  quantile,
  GW,
  gwEnv,
  ROOT,
  runOk,
  SIM_TOKEN,
  startSim,
  stats,
  tempDir,
} from './lib.mjs';

const LINES = Number(process.env.GW_BENCH_SHARDS_LINES ?? 1_000_000);
const SKEW_ROUNDS = Number(process.env.GW_BENCH_SKEW_ROUNDS ?? 5);
const BATCH_SHARDS = 16;
const LOAD_SHARDS = 64;
/** Runs of each timed merge (median, min, max). */
const RUNS = 3;

/**
 * The test helpers the figures share with the tests (the Slurm cluster, the docs' job scripts, the lateness of a
 * first request, the load engine's histogram), bundled from TypeScript by esbuild into the bench's directory.
 */
async function testHelpers() {
  // Written to bench/out/ (two levels below the root, as test/helpers/ is): the helpers find docs/ and bin/ from
  // their own location.
  const out = join(ROOT, 'bench', 'out');
  mkdirSync(out, { recursive: true });
  const entry = join(out, `shards-helpers-${process.pid}.ts`);
  const outfile = join(out, `shards-helpers-${process.pid}.mjs`);
  const t = (p) => JSON.stringify(join(ROOT, p));
  writeFileSync(
    entry,
    `export { startSlurm } from ${t('test/helpers/slurm.ts')};
export { csvRows, docFile, firstRequestLateness, SBATCH } from ${t('test/helpers/distributed.ts')};
export { gwBinDir, isolatedDirs } from ${t('test/helpers/gw.ts')};
export { removeTempDirs } from ${t('test/helpers/tmp.ts')};
export { LatencyHistogram } from ${t('src/load/histogram.ts')};
`,
  );
  try {
    await build({
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile,
      logLevel: 'error',
      packages: 'external',
    });
    return await import(pathToFileURL(outfile).href);
  } finally {
    cleanup(entry);
    cleanup(outfile);
  }
}

/** Runs `jobs` (functions returning promises) `width` at a time. */
async function inParallel(jobs, width) {
  const queue = [...jobs];
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let job = queue.shift(); job !== undefined; job = queue.shift()) await job();
    }),
  );
}

function chatLines(n) {
  return Array.from(
    { length: n },
    (_, i) =>
      `${JSON.stringify({
        custom_id: `c-${i}`,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'chat-3.7-plus', messages: [{ role: 'user', content: `hello number ${i}` }] },
      })}\n`,
  ).join('');
}

/** Grows a shard directory to `total` result lines: copies of its first result and done record, new ids. */
function grow(dir, k, total) {
  const results = readFileSync(join(dir, 'results.jsonl'), 'utf8').trim().split('\n');
  const state = readFileSync(join(dir, 'state.jsonl'), 'utf8').trim().split('\n').map(JSON.parse);
  const line = JSON.parse(results[0]);
  const done = state.find((r) => r.e === 'done' && r.id === line.custom_id);
  const CHUNK = 10_000;
  for (let i = results.length; i < total; i += CHUNK) {
    let r = '';
    let s = '';
    for (let j = i; j < Math.min(total, i + CHUNK); j++) {
      const id = `pad-${k}-${j}`;
      r += `${JSON.stringify({ ...line, custom_id: id })}\n`;
      s += `${JSON.stringify({ ...done, id })}\n`;
    }
    appendFileSync(join(dir, 'results.jsonl'), r);
    appendFileSync(join(dir, 'state.jsonl'), s);
  }
}

async function batchMerge(dir) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'jobs.jsonl'), chatLines(256));
  const sim = await startSim({ timings: { streamDelayMs: 0 } }, 'shards-batch-sim');
  const env = gwEnv(dir, { GW_BASE_URL: sim.baseUrl, GW_TOKEN: sim.token });
  const shards = Array.from({ length: BATCH_SHARDS }, (_, i) => join(dir, `shard-${i}`));
  try {
    await inParallel(
      shards.map(
        (out, i) => () =>
          runOk(
            process.execPath,
            [
              GW,
              'batch',
              'run',
              join(dir, 'jobs.jsonl'),
              '--out',
              out,
              '--shard',
              `${i + 1}/${BATCH_SHARDS}`,
            ],
            { env },
          ),
      ),
      4,
    );
  } finally {
    await sim.stop();
  }
  shards.forEach((d, i) => grow(d, i, Math.ceil(LINES / BATCH_SHARDS)));
  const rss = [];
  const wall = [];
  let results = 0;
  for (let i = 0; i < RUNS; i++) {
    const out = join(dir, `merged-${i}`);
    const r = await runOk(process.execPath, [GW, '--json', 'batch', 'merge', ...shards, '--out', out], {
      env: gwEnv(dir),
      rss: true,
      capture: true,
    });
    results = JSON.parse(r.stdout).results;
    rss.push(r.rssMb);
    wall.push(r.ms / 1000);
    cleanup(out);
  }
  const m = stats(rss);
  const w = stats(wall);
  const total = Math.ceil(LINES / BATCH_SHARDS) * BATCH_SHARDS;
  if (results !== total) throw new Error(`gw batch merge wrote ${results} results of ${total}`);
  const k = `${Math.round(total / 1000)}k`;
  return {
    figure: `shards: gw batch merge, ${BATCH_SHARDS} shards, ${k} result lines`,
    gw: `peak RSS ${fmt(m, 'MB', 0)}`,
    baseline: `wall ${fmt(w, 's', 1)}`,
    ratio: `${Math.round(m.median)} MB, ${w.median.toFixed(1)} s`,
    target: '≤ 200 MB, ≤ 30 s',
    ok: m.max <= 200 && w.max <= 30,
    raw: { rss: m, wall: w },
  };
}

async function loadMerge(dir, h) {
  mkdirSync(dir, { recursive: true });
  const sim = await startSim({ timings: { streamDelayMs: 0 } }, 'shards-load-sim');
  const env = gwEnv(dir, { GW_BASE_URL: sim.baseUrl, GW_TOKEN: SIM_TOKEN });
  // 20 requests per shard from one seeded schedule of 1280 at 2000/s: each shard runs for about 0.6 s.
  const shard = (k) => () =>
    runOk(
      process.execPath,
      [
        GW,
        'load',
        '-m',
        'chat-3.7-plus',
        '--rate',
        '2000',
        '--requests',
        String(20 * LOAD_SHARDS),
        '--seed',
        '7',
        '--shard',
        `${k}/${LOAD_SHARDS}`,
        '--out',
        join(dir, `run-${k}.json`),
        '--csv',
        join(dir, `run-${k}.csv`),
        '--quiet',
      ],
      { env },
    );
  try {
    await inParallel(
      Array.from({ length: LOAD_SHARDS }, (_, i) => shard(i + 1)),
      4,
    );
  } finally {
    await sim.stop();
  }
  const reports = Array.from({ length: LOAD_SHARDS }, (_, i) => join(dir, `run-${i + 1}.json`));
  const wall = [];
  let merged;
  for (let i = 0; i < RUNS; i++) {
    const out = join(dir, 'all.json');
    const r = await runOk(process.execPath, [GW, 'load', 'merge', ...reports, '--out', out, '--quiet'], {
      env: gwEnv(dir),
    });
    wall.push(r.ms);
    merged = JSON.parse(readFileSync(out, 'utf8'));
  }
  const all = new h.LatencyHistogram();
  for (let k = 1; k <= LOAD_SHARDS; k++)
    for (const row of h.csvRows(join(dir, `run-${k}.csv`)))
      if (row.ok === 'true') all.recordMs(Number(row.e2e_ms));
  const want = all.summary();
  const got = merged.steps[0].latency_ms.e2e;
  const exact = JSON.stringify(got) === JSON.stringify(want);
  const w = stats(wall);
  return {
    figure: `shards: gw load merge, ${LOAD_SHARDS} shard reports (${want.count} requests)`,
    gw: fmt(w, 'ms', 0),
    baseline: exact
      ? 'e2e percentiles = one histogram of every --csv row'
      : `NOT EXACT: ${JSON.stringify(got)}`,
    ratio: `${(w.median / 1000).toFixed(2)} s, ${exact ? 'exact' : 'not exact'}`,
    target: '≤ 2 s, exact',
    ok: exact && w.max <= 2000,
    raw: { wall: w, merged: got, expected: want },
  };
}

async function slurmSkew(dir, h) {
  const cluster = await h.startSlurm();
  const sim = await startSim(
    { capacity: { maxConcurrent: 1000, queue: 1000, ttftMs: 5, tokensPerSecond: 2000 } },
    'shards-skew-sim',
  );
  const lateness = [];
  try {
    for (let round = 0; round < SKEW_ROUNDS; round++) {
      const d = join(dir, `round-${round}`);
      mkdirSync(join(d, 'logs'), { recursive: true });
      writeFileSync(join(d, 'load.sbatch'), h.docFile('load.sbatch'));
      const env = {
        PATH: `${h.gwBinDir()}:${process.env.PATH}`,
        NO_COLOR: '1',
        ...h.isolatedDirs(),
        GW_BASE_URL: sim.baseUrl,
        GW_TOKEN: SIM_TOKEN,
      };
      // Time for the three tasks to be running: Slurm starts them within a second on an idle machine, but at a
      // load average of 20 one task once started 1.1 s after a 6 s lead, which measures the machine, not gw.
      const startAt = Date.now() + 10_000;
      const jid = await cluster.sbatch(h.SBATCH.load(30, '2s', startAt), { cwd: d, env });
      const states = await cluster.untilEnded([jid], 120_000);
      if ([...states.values()].some((s) => s !== 'COMPLETED'))
        throw new Error(`load shards ended ${[...states.values()]}`);
      const stamps = await getJson(`${sim.baseUrl}/sim/capacity?stamps=1`);
      const arrived = new Map(stamps.stamps.map((x) => [x.request_id, x.arrived_unix_ms]));
      for (let k = 0; k < 3; k++)
        lateness.push(h.firstRequestLateness(h.csvRows(join(d, 'load', `run-${k}.csv`)), startAt, arrived));
    }
  } finally {
    await sim.stop();
    await cluster.stop();
  }
  const s = stats(lateness);
  const p99 = quantile(lateness, 0.99);
  return {
    figure: `shards: first-request lateness of 3 Slurm shards with --start-at (${lateness.length} shards)`,
    gw: `p99 ${p99.toFixed(1)} ms, median ${fmt(s, 'ms', 1)}`,
    baseline: '',
    ratio: `p99 ${p99.toFixed(1)} ms`,
    target: 'p99 ≤ 20 ms',
    ok: p99 <= 20,
    raw: { lateness },
  };
}

/** The shard figures. */
export async function shards() {
  const dir = tempDir('shards');
  let h;
  try {
    h = await testHelpers();
    const rows = [];
    rows.push(await batchMerge(join(dir, 'batch')).catch((e) => notMeasured('gw batch merge', e)));
    rows.push(await loadMerge(join(dir, 'load'), h).catch((e) => notMeasured('gw load merge', e)));
    rows.push(await slurmSkew(join(dir, 'skew'), h).catch((e) => notMeasured('Slurm start skew', e)));
    return rows;
  } finally {
    h?.removeTempDirs();
    cleanup(dir);
  }
}

function notMeasured(what, e) {
  process.exitCode = 1;
  return {
    figure: `shards: ${what}: not measured`,
    gw: String(e?.message ?? e).split('\n')[0],
    baseline: '',
    ratio: '',
    target: '',
    ok: false,
  };
}
