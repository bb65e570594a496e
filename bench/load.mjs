// Load: the accuracy and headroom of `gw load` as a generator.
//
//  (a) TTFT accuracy. The simulator runs in its own process (never sharing an event loop or a CPU time slice
//      with the generator), with a fixed 50 ms time to first token and room for every stream; `gw load` (as users
//      run it, bin/gw) drives it at 256 concurrent streams. What each side measures, per request:
//        gw   from the moment undici writes the request on its connection (closed loop) to the moment the bytes
//             of the first content event are handed to gw (undici's onResponseData, before decoding or parsing);
//        sim  stamps the request's arrival in its handler and the write of its first token.
//      Comparing gw's TTFT with the simulator's arrival-to-write stamp is not like with like: between gw's write
//      and the simulator's arrival the request waits in the kernel until the simulator's event loop reads it (a
//      burst of 256 requests is read one after another), and that server-side wait is real latency every client
//      sees but is in no stamp of the simulator. So both figures are taken from the same instant: the reference
//      of a request is (the simulator's first-token write) − (gw's write of the request), both on the machine's
//      one clock (`performance.timeOrigin + performance.now()` in each process: gw's report carries its origin as
//      `origin_unix_ms`, its CSV each request's `start_ms`; the simulator's `GET /sim/capacity?stamps=1` its
//      stamps by request id). Δ = gw's reported TTFT p50 − the p50 of those references: what gw adds on its
//      side (the time from the simulator's write until gw's event loop got round to the bytes, plus anything
//      wrong in its bookkeeping). A reference row shows the simulator's own arrival-to-write stamps (50 ms when
//      it is not starved of CPU) and the wait before its arrival stamp.
//      Slow tokens (2 per answer, 1 per second) keep requests per second, and so the two processes' CPU, modest:
//      the row measures the timing path, not how many requests per second two processes on one machine push.
//      The users start over `--ramp-up 1s` (about one answer's length) inside the warm-up, as an operator measuring
//      TTFT at this concurrency would: started in one millisecond, 256 users against answers that all take the same
//      time stay in lockstep, and each wave's 256 first tokens queue in gw's event loop behind the wave's other
//      work (measured: mean lateness 1–3 ms with stalls to 40 ms, against 0.1–0.2 ms spread out).
//  (b) Headroom: the highest request rate for tiny non-streamed requests against a trivial loopback server (its
//      own process), gw load against autocannon at the same connection count, interleaved runs; the ratio is the
//      median of each round's own ratio (the machine's speed drifts between rounds).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  GW,
  ROOT,
  SIM_TOKEN,
  childServer,
  cleanup,
  fmt,
  getJson,
  gwEnv,
  interleaveRaw,
  quantile,
  run,
  startSim,
  stats,
  tempDir,
} from './lib.mjs';

const TTFT_MS = 50;
export const CONNECTIONS = 64;
export const SECONDS = 5;
const WARMUP_REQUESTS = 3000;
/** Measured rounds of the request-rate row (each a gw run then an autocannon run), after one discarded. */
const ROUNDS = 5;
// (a) Waves of streams run untimed first: both processes compile their hot paths and the simulator's reading of a
// wave settles (with one wave, the simulator's cold start put 45 ms between gw's send and its arrival stamp and the
// row swung by ±8 ms from run to run; with four it is steady).
const WARMUP_WAVES = 4;

/** `gw load --json -m chat-3.7-plus <args>` (bin/gw, as users run it) against `baseUrl`: its JSON report. */
export async function gwLoad(dir, baseUrl, args, extraEnv = {}) {
  const r = await run(process.execPath, [GW, 'load', '--json', '-m', 'chat-3.7-plus', ...args], {
    env: gwEnv(dir, { GW_BASE_URL: baseUrl, GW_TOKEN: SIM_TOKEN, ...extraEnv }),
    capture: true,
  });
  if (r.code !== 0) throw new Error(`gw load exited ${r.code}: ${r.stderr.slice(0, 300)}`);
  return JSON.parse(r.stdout);
}

/** `--csv` rows of gw load as objects. */
function readCsv(path) {
  const [head, ...lines] = readFileSync(path, 'utf8').trim().split('\n');
  const cols = head.split(',');
  return lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [cols[i], v])));
}

/** One round: a fresh simulator, a warm-up of `streams * WARMUP_WAVES` streams, `streams * 4` measured streams. */
async function ttftRound(streams, seed) {
  const sim = await startSim(
    { seed, capacity: { maxConcurrent: 4096, queue: 0, ttftMs: TTFT_MS, tokensPerSecond: 1 } },
    'load-sim',
  );
  const dir = tempDir('load-ttft');
  const n = streams * 4;
  try {
    const csv = join(dir, 'requests.csv');
    const report = await gwLoad(dir, sim.baseUrl, [
      '--concurrency',
      String(streams),
      '--ramp-up',
      '1s',
      '--warmup',
      String(streams * WARMUP_WAVES),
      '--requests',
      String(n),
      '--max-tokens',
      '2',
      '--csv',
      csv,
    ]);
    const st = report.steps[0];
    // The warm-up's streams were stamped first (and are not in the CSV): leave them out.
    const stamped = await getJson(`${sim.baseUrl}/sim/capacity?since=${streams * WARMUP_WAVES}&stamps=1`);
    if (st.ok !== n || stamped.ttftMs.count !== n) {
      throw new Error(
        `expected ${n} streams, gw saw ${st.ok} ok, the simulator stamped ${stamped.ttftMs.count}`,
      );
    }
    const byId = new Map(stamped.stamps.map((x) => [x.request_id, x]));
    const ref = [];
    const beforeArrival = [];
    const late = [];
    for (const row of readCsv(csv)) {
      const x = byId.get(row.request_id);
      if (x === undefined) throw new Error(`request ${row.request_id} was not stamped by the simulator`);
      const sent = report.origin_unix_ms + Number(row.start_ms);
      ref.push(x.first_token_unix_ms - sent);
      beforeArrival.push(x.arrived_unix_ms - sent);
      late.push(sent + Number(row.ttft_ms) - x.first_token_unix_ms);
    }
    if (ref.length !== n) throw new Error(`the CSV has ${ref.length} rows, expected ${n}`);
    return {
      gw: st.latency_ms.ttft.p50,
      ref: quantile(ref, 0.5),
      own: stamped.ttftMs.p50,
      wait: quantile(beforeArrival, 0.5),
      // Per request: how long after the simulator's write gw took its timestamp (median).
      lateP50: quantile(late, 0.5),
      // Its tail: first tokens that arrive in a burst are read one after another.
      lateP90: quantile(late, 0.9),
      // A write stamped after gw's own first-token time would mean a broken clock or comparison.
      minLate: Math.min(...late),
    };
  } finally {
    cleanup(dir);
    await sim.stop();
  }
}

export async function ttftAccuracy(streams) {
  const rounds = [];
  for (let i = 0; i < 4; i++) {
    const r = await ttftRound(streams, 1 + i);
    if (r.minLate < -0.05)
      throw new Error(`gw stamped a first token ${-r.minLate} ms before the simulator wrote it`);
    rounds.push(r);
  }
  const pick = (k) => rounds.map((r) => r[k]);
  const d = stats(rounds.map((r) => r.gw - r.ref));
  const rows = [
    {
      figure: `load: TTFT p50 reported by gw vs the sim's first-token write − gw's send (${streams} streams, fixed ${TTFT_MS} ms)`,
      gw: fmt(stats(pick('gw')), 'ms', 2),
      baseline: `sim: ${fmt(stats(pick('ref')), 'ms', 2)}`,
      ratio: `${d.median >= 0 ? '+' : ''}${d.median.toFixed(2)} ms`,
      target: streams === 256 ? '|Δ| ≤ 2 ms' : '(reference)',
      ok: streams !== 256 || Math.abs(d.median) <= 2,
      raw: { diffs: rounds.map((r) => r.gw - r.ref), rounds },
    },
  ];
  if (streams === 256) {
    const late = stats(pick('lateP50'));
    rows.push(
      {
        figure: `load: per request, gw's first-token timestamp after the sim's write, median (p90) (${streams} streams)`,
        gw: fmt(late, 'ms', 2),
        baseline: `p90: ${fmt(stats(pick('lateP90')), 'ms', 2)}`,
        ratio: `+${late.median.toFixed(2)} ms`,
        target: '(reference)',
        ok: true,
        raw: { lateP50: pick('lateP50'), lateP90: pick('lateP90') },
      },
      {
        figure: `load: the sim's own TTFT stamps p50, arrival → first write (${streams} streams; ${TTFT_MS} ms unless starved)`,
        gw: `wait before arrival: ${fmt(stats(pick('wait')), 'ms', 2)}`,
        baseline: `sim: ${fmt(stats(pick('own')), 'ms', 2)}`,
        ratio: `+${(stats(pick('own')).median - TTFT_MS).toFixed(2)} ms`,
        target: '(reference)',
        ok: true,
        raw: { own: pick('own'), wait: pick('wait') },
      },
    );
  }
  return rows;
}

/** A trivial loopback server in its own process: every POST gets the same tiny chat completion. */
export function trivialServer() {
  return childServer(`
const body = Buffer.from(JSON.stringify({id:'x',object:'chat.completion',created:1,model:'m',choices:[{index:0,message:{role:'assistant',content:'ok'},finish_reason:'stop'}],usage:{prompt_tokens:1,completion_tokens:1,total_tokens:2}}));
const s = require('node:http').createServer((req, res) => {
  req.resume();
  req.on('end', () => { res.writeHead(200, {'content-type': 'application/json', 'content-length': body.length}); res.end(body); });
});
s.keepAliveTimeout = 60000;
s.listen(0, '127.0.0.1', () => console.log(s.address().port));`);
}

/**
 * `gw load`'s arguments for tiny non-streamed requests at CONNECTIONS for SECONDS (also the telemetry section's).
 * Both tools first run about a second untimed (connections opened, code compiled).
 */
export const TINY_LOAD_ARGS = [
  '--no-stream',
  '--prompt-words',
  '1',
  '--max-tokens',
  '1',
  '--concurrency',
  String(CONNECTIONS),
  '--warmup',
  String(WARMUP_REQUESTS),
  '--duration',
  `${SECONDS}s`,
];

export async function headroom() {
  const server = await trivialServer();
  const dir = tempDir('load-rate');
  const body = JSON.stringify({
    model: 'chat-3.7-plus',
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 1,
  });
  try {
    const [gs, as] = await interleaveRaw(
      [
        async () => {
          const report = await gwLoad(dir, server.url, TINY_LOAD_ARGS);
          const st = report.steps[0];
          if (st.errors > 0)
            throw new Error(`gw load saw ${st.errors} errors: ${JSON.stringify(st.errors_by_code)}`);
          return st.requests_per_s;
        },
        async () => {
          const r = await run(
            process.execPath,
            [
              join(ROOT, 'node_modules', 'autocannon', 'autocannon.js'),
              '-j',
              '-c',
              String(CONNECTIONS),
              '-d',
              String(SECONDS),
              '-W',
              '[',
              '-c',
              String(CONNECTIONS),
              '-d',
              '1',
              ']',
              '-m',
              'POST',
              '-H',
              'content-type=application/json',
              '-H',
              `authorization=Bearer ${SIM_TOKEN}`,
              '-b',
              body,
              `${server.url}/v1/chat/completions`,
            ],
            { capture: true },
          );
          if (r.code !== 0) throw new Error(`autocannon exited ${r.code}: ${r.stderr.slice(0, 300)}`);
          // With -W, autocannon prints the warm-up's result on a line of its own first: the run's is the last.
          const j = JSON.parse(r.stdout.trim().split('\n').pop());
          if (j.non2xx > 0 || j.errors > 0)
            throw new Error(`autocannon saw ${j.non2xx} non-2xx, ${j.errors} errors`);
          return j.requests.total / (j.duration || SECONDS);
        },
      ],
      ROUNDS,
      1,
    );
    const g = stats(gs);
    const a = stats(as);
    // The machine's speed drifts by half within minutes here: each round's pair (run back to back) is compared,
    // and the row's ratio is the median of those ratios, not the ratio of two medians taken minutes apart.
    const ratios = stats(gs.map((x, k) => x / as[k]));
    const ratio = ratios.median;
    return {
      figure: `load: tiny non-streamed req/s, gw load vs autocannon (${CONNECTIONS} connections, ${SECONDS} s)`,
      gw: fmt(g, 'req/s', 0),
      baseline: `autocannon: ${fmt(a, 'req/s', 0)}`,
      ratio: `${ratio.toFixed(2)}× [${ratios.min.toFixed(2)}–${ratios.max.toFixed(2)}]`,
      target: '≥ 0.8×',
      ok: ratio >= 0.8,
      raw: { gw: g, baseline: a, ratio, ratios },
    };
  } finally {
    cleanup(dir);
    await server.stop();
  }
}

/** Both load rows. */
export async function load() {
  // 16 streams: a reference row, where two processes on one loaded machine are not the limit.
  return [...(await ttftAccuracy(256)), ...(await ttftAccuracy(16)), await headroom()];
}
