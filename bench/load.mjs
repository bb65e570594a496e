// Load: the accuracy and headroom of `gw load` as a generator.
//  (a) TTFT accuracy: the simulator (its own process) with a fixed 50 ms time to first token and room for every
//      stream, driven by `gw load` at 256 concurrent streams; gw's reported TTFT p50 against the p50 of the times
//      the simulator stamped itself (arrival of the request to the write of its first token, GET /sim/capacity).
//  (b) Headroom: the highest request rate for tiny non-streamed requests against a trivial loopback server (its
//      own process), gw load against autocannon at the same connection count, interleaved runs.
import { spawn } from 'node:child_process';
import { get } from 'node:http';
import { join } from 'node:path';
import {
  GW,
  ROOT,
  SIM_TOKEN,
  cleanup,
  fmt,
  gwEnv,
  interleave,
  run,
  startSim,
  stats,
  tempDir,
} from './lib.mjs';

const TTFT_MS = 50;
const CONNECTIONS = 64;
const SECONDS = 5;
const WARMUP_REQUESTS = 3000;

/** GET a JSON document over plain HTTP. */
function getJson(url) {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve(JSON.parse(text)));
    }).on('error', reject);
  });
}

async function ttftAccuracy(streams) {
  const STREAMS = streams;
  const diffs = [];
  const gwP50 = [];
  const simP50 = [];
  for (let i = 0; i < 4; i++) {
    const sim = await startSim(
      {
        seed: 1 + i,
        // Slow tokens (10/s, 4 per answer) keep the machine's work per second modest: the row measures the
        // timing path, not how many frames per second two processes on one loaded machine can push.
        capacity: { maxConcurrent: 4096, queue: 0, ttftMs: TTFT_MS, tokensPerSecond: 10 },
      },
      'load-sim',
    );
    const dir = tempDir('load-ttft');
    try {
      const r = await run(
        process.execPath,
        [
          GW,
          'load',
          '--json',
          '-m',
          'chat-3.7-plus',
          '--concurrency',
          String(STREAMS),
          '--warmup',
          String(STREAMS),
          '--requests',
          String(STREAMS * 4),
          '--max-tokens',
          '4',
        ],
        { env: gwEnv(dir, { GW_BASE_URL: sim.baseUrl, GW_TOKEN: SIM_TOKEN }), capture: true },
      );
      if (r.code !== 0) throw new Error(`gw load exited ${r.code}: ${r.stderr.slice(0, 300)}`);
      const report = JSON.parse(r.stdout);
      // The warm-up streams (connections opened, code compiled) were stamped first: leave them out.
      const stamped = await getJson(`${sim.baseUrl}/sim/capacity?since=${STREAMS}`);
      const st = report.steps[0];
      if (st.ok !== STREAMS * 4 || stamped.ttftMs.count !== STREAMS * 4) {
        throw new Error(
          `expected ${STREAMS * 4} streams, gw saw ${st.ok} ok, the simulator stamped ${stamped.ttftMs.count}`,
        );
      }
      if (i === 0) continue; // warm-up round
      gwP50.push(st.latency_ms.ttft.p50);
      simP50.push(stamped.ttftMs.p50);
      diffs.push(st.latency_ms.ttft.p50 - stamped.ttftMs.p50);
    } finally {
      cleanup(dir);
      await sim.stop();
    }
  }
  const d = stats(diffs);
  return {
    figure: `load: TTFT p50 reported by gw vs stamped by the sim (${STREAMS} streams, fixed ${TTFT_MS} ms)`,
    gw: fmt(stats(gwP50), 'ms', 2),
    baseline: `sim: ${fmt(stats(simP50), 'ms', 2)}`,
    ratio: `${d.median >= 0 ? '+' : ''}${d.median.toFixed(2)} ms`,
    target: STREAMS === 256 ? '|Δ| ≤ 2 ms' : '(reference)',
    ok: STREAMS !== 256 || Math.abs(d.median) <= 2,
    raw: { diffs, gwP50, simP50 },
  };
}

/** A trivial loopback server in its own process: every POST gets the same tiny chat completion. */
async function trivialServer() {
  const code = `
const body = Buffer.from(JSON.stringify({id:'x',object:'chat.completion',created:1,model:'m',choices:[{index:0,message:{role:'assistant',content:'ok'},finish_reason:'stop'}],usage:{prompt_tokens:1,completion_tokens:1,total_tokens:2}}));
const s = require('node:http').createServer((req, res) => {
  req.resume();
  req.on('end', () => { res.writeHead(200, {'content-type': 'application/json', 'content-length': body.length}); res.end(body); });
});
s.keepAliveTimeout = 60000;
s.listen(0, '127.0.0.1', () => console.log(s.address().port));`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    child.stdout.once('data', (c) => resolve(Number(String(c).trim())));
    child.once('exit', (c) => reject(new Error(`server exited ${c}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      const done = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await done;
    },
  };
}

async function headroom() {
  const server = await trivialServer();
  const dir = tempDir('load-rate');
  const body = JSON.stringify({
    model: 'chat-3.7-plus',
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 1,
  });
  try {
    const [g, a] = await interleave(
      [
        async () => {
          const r = await run(
            process.execPath,
            [
              GW,
              'load',
              '--json',
              '-m',
              'chat-3.7-plus',
              '--no-stream',
              '--prompt-words',
              '1',
              '--max-tokens',
              '1',
              '--concurrency',
              String(CONNECTIONS),
              // Both tools first run about a second untimed (connections opened, code compiled).
              '--warmup',
              String(WARMUP_REQUESTS),
              '--duration',
              `${SECONDS}s`,
            ],
            { env: gwEnv(dir, { GW_BASE_URL: server.url, GW_TOKEN: SIM_TOKEN }), capture: true },
          );
          if (r.code !== 0) throw new Error(`gw load exited ${r.code}: ${r.stderr.slice(0, 300)}`);
          const st = JSON.parse(r.stdout).steps[0];
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
      3,
      1,
    );
    const ratio = g.median / a.median;
    return {
      figure: `load: tiny non-streamed req/s, gw load vs autocannon (${CONNECTIONS} connections, ${SECONDS} s)`,
      gw: fmt(g, 'req/s', 0),
      baseline: `autocannon: ${fmt(a, 'req/s', 0)}`,
      ratio: `${ratio.toFixed(2)}×`,
      target: '≥ 0.8×',
      ok: ratio >= 0.8,
      raw: { gw: g, baseline: a, ratio },
    };
  } finally {
    cleanup(dir);
    await server.stop();
  }
}

/** Both load rows. */
export async function load() {
  // 16 streams: a reference row, where two processes on one loaded machine are not the limit.
  return [await ttftAccuracy(256), await ttftAccuracy(16), await headroom()];
}
