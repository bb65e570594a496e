// Batch: `gw batch run` of a chat file against a `gw sim` child at --concurrency 256.
//  - peak RSS of a 100 000-line run, and its flatness against a 10 000-line run;
//  - a re-run of the finished 100 000-line batch (everything skipped);
//  - throughput against a bare undici script (public API: undici.request with its own Agent) that reads the same
//    file as a stream and sends the same requests at the same concurrency, interleaved runs, a fresh simulator
//    for every run (its request log would otherwise grow from run to run).
// GW_BENCH_BATCH_LINES (default 100000) and GW_BENCH_BATCH_RUNS (default 3) shrink it on a slow machine.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanup, fmt, GW, gwEnv, interleaveRaw, ROOT, run, startSim, stats, tempDir } from './lib.mjs';

const BIG = Number(process.env.GW_BENCH_BATCH_LINES ?? 100_000);
const SMALL = Math.max(1000, Math.round(BIG / 10));
const RUNS = Number(process.env.GW_BENCH_BATCH_RUNS ?? 3);
const THROUGHPUT_LINES = Math.min(BIG, 20_000);
const CONCURRENCY = 256;

function chatFile(dir, n) {
  const file = join(dir, `chat-${n}.jsonl`);
  let text = '';
  for (let i = 0; i < n; i++) {
    text += `${JSON.stringify({
      custom_id: `c-${i}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'chat-3.7-plus', messages: [{ role: 'user', content: `hello number ${i}` }] },
    })}\n`;
  }
  writeFileSync(file, text);
  return file;
}

// The baseline: the least a client can do for the same work (stream the file, send, read the answer).
const BARE = `
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { Agent, request } from ${JSON.stringify(join(ROOT, 'node_modules', 'undici', 'index.js'))};
const [file, conc] = [process.argv[1], Number(process.argv[2])];
const agent = new Agent({ keepAliveTimeout: 4000 });
const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity })[Symbol.asyncIterator]();
let failed = 0;
async function worker() {
  for (;;) {
    const it = await lines.next();
    if (it.done) return;
    const l = JSON.parse(it.value);
    const r = await request(process.env.GW_BASE_URL + l.url, {
      dispatcher: agent, method: 'POST', body: JSON.stringify(l.body),
      headers: { authorization: 'Bearer ' + process.env.GW_TOKEN, 'content-type': 'application/json' },
    });
    await r.body.json();
    if (r.statusCode !== 200) failed++;
  }
}
await Promise.all(Array.from({ length: conc }, worker));
await agent.close();
if (failed > 0) { console.error(failed + ' failed'); process.exit(1); }
`;

async function withSim(fn) {
  const sim = await startSim({ timings: { streamDelayMs: 0 } }, 'batch-sim');
  try {
    return await fn(sim);
  } finally {
    await sim.stop();
  }
}

async function gwBatch(dir, file, out, sim, rss) {
  const r = await run(
    process.execPath,
    [GW, 'batch', 'run', file, '--out', out, '--concurrency', String(CONCURRENCY), '--quiet'],
    {
      env: { ...gwEnv(dir), GW_BASE_URL: sim.baseUrl, GW_TOKEN: sim.token },
      rss,
    },
  );
  if (r.code !== 0) throw new Error(`gw batch run exited ${r.code}: ${r.stderr.slice(0, 300)}`);
  return r;
}

/** The batch figures. */
export async function batch() {
  const dir = tempDir('batch');
  try {
    const big = chatFile(dir, BIG);
    const small = chatFile(dir, SMALL);
    const part = THROUGHPUT_LINES === BIG ? big : chatFile(dir, THROUGHPUT_LINES);
    let n = 0;
    const out = () => join(dir, `out-${n++}`);

    // Memory: one run of each size per round, interleaved.
    const rssBig = [];
    const rssSmall = [];
    const rerun = [];
    const bigWall = [];
    for (let i = 0; i < Math.max(1, RUNS - 1); i++) {
      const o = out();
      await withSim(async (sim) => {
        const r = await gwBatch(dir, big, o, sim, true);
        rssBig.push(r.rssMb);
        bigWall.push(r.ms);
        for (let k = 0; k < 3; k++) rerun.push((await gwBatch(dir, big, o, sim, false)).ms);
      });
      cleanup(o);
      await withSim(async (sim) => rssSmall.push((await gwBatch(dir, small, out(), sim, true)).rssMb));
    }

    // Throughput: gw against the bare script, interleaved, a fresh simulator each.
    const [gwRuns, bareRuns] = await interleaveRaw(
      [
        () => withSim(async (sim) => (await gwBatch(dir, part, out(), sim, false)).ms),
        () =>
          withSim(async (sim) => {
            const r = await run(
              process.execPath,
              ['--input-type=module', '-e', BARE, part, String(CONCURRENCY)],
              {
                env: { PATH: process.env.PATH, GW_BASE_URL: sim.baseUrl, GW_TOKEN: sim.token },
              },
            );
            if (r.code !== 0)
              throw new Error(`bare undici script exited ${r.code}: ${r.stderr.slice(0, 300)}`);
            return r.ms;
          }),
      ],
      RUNS,
      0,
    );
    const perSec = (s) => ({
      median: THROUGHPUT_LINES / (s.median / 1000),
      min: THROUGHPUT_LINES / (s.max / 1000),
      max: THROUGHPUT_LINES / (s.min / 1000),
    });
    const gwStats = stats(gwRuns);
    const bareStats = stats(bareRuns);
    const gwRate = perSec(gwStats);
    const bareRate = perSec(bareStats);
    // Each round's pair ran back to back; the machine's speed drifts between rounds: the ratio is the median of
    // the rounds' own ratios (rate = lines / time, so gw's rate over the bare script's is bare time / gw time).
    const ratios = stats(gwRuns.map((ms, k) => bareRuns[k] / ms));
    const ratio = ratios.median;
    const big1 = stats(rssBig);
    const small1 = stats(rssSmall);
    const re = stats(rerun);
    const delta = big1.median - small1.median;
    const k = (x) => `${Math.round(x / 1000)}k`;
    return [
      {
        figure: `batch: ${k(BIG)} chat lines, gw peak RSS (--concurrency ${CONCURRENCY})`,
        gw: fmt(big1, 'MB', 0),
        baseline: `wall ${fmt(stats(bigWall.map((x) => x / 1000)), 's', 1)}`,
        ratio: `${Math.round(big1.median)} MB`,
        target: '≤ 200 MB',
        ok: big1.max <= 200,
        raw: { gw: big1 },
      },
      {
        figure: `batch: gw peak RSS, ${k(BIG)} vs ${k(SMALL)} lines`,
        gw: `${k(BIG)}: ${fmt(big1, 'MB', 0)}`,
        baseline: `${k(SMALL)}: ${fmt(small1, 'MB', 0)}`,
        ratio: `${delta >= 0 ? '+' : ''}${delta.toFixed(1)} MB`,
        target: 'flat (± 15 MB)',
        ok: Math.abs(delta) <= 15,
        raw: { gw: big1, baseline: small1 },
      },
      {
        figure: `batch: re-run of the finished ${k(BIG)}-line batch`,
        gw: fmt(re, 'ms', 0),
        baseline: '',
        ratio: `${(re.median / 1000).toFixed(2)} s`,
        target: '≤ 2 s',
        ok: re.max <= 2000,
        raw: { gw: re },
      },
      {
        figure: `batch: throughput, ${k(THROUGHPUT_LINES)} chat lines at ${CONCURRENCY} in flight`,
        gw: `${fmt(gwRate, 'req/s', 0)}`,
        baseline: `bare undici: ${fmt(bareRate, 'req/s', 0)}`,
        ratio: `${ratio.toFixed(2)}× [${ratios.min.toFixed(2)}–${ratios.max.toFixed(2)}]`,
        target: '≥ 0.8×',
        ok: ratio >= 0.8,
        raw: { gw: gwStats, baseline: bareStats, ratio, ratios },
      },
    ];
  } finally {
    cleanup(dir);
  }
}
