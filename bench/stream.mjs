// Streaming: a 50 000-chunk chat stream from gw sim at full speed, `gw chat --stream` against `curl -N`
// (wall time), with the floor any Node client pays (a bare node:http request piping the body to stdout, no
// parsing) measured alongside; and the delay from a chunk's arrival to its text on stdout, through a loopback tap.
import { Buffer } from 'node:buffer';
import { createConnection, createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { GW, cleanup, fmt, gwEnv, interleave, run, startSim, stats, tempDir } from './lib.mjs';

const MODEL = 'chat-3.7-plus';
const CHUNKS = 50_000;
const PACED_CHUNKS = 400;
const PACED_DELAY_MS = 3;
const RUNS = 9;

/**
 * The floor: Node's start-up plus reading the same stream with node:http and piping it to stdout, with no SSE or
 * JSON parsing at all: what a Node client pays before doing any work of its own. gw's distance to it is what
 * parsing every event and gw itself cost; its distance to curl is Node's.
 */
const FLOOR_SCRIPT = [
  'const e = process.env;',
  "const q = require('node:http').request(e.GW_BASE_URL + '/v1/chat/completions', { method: 'POST', headers:",
  "{ authorization: 'Bearer ' + e.GW_TOKEN, 'content-type': 'application/json', accept: 'text/event-stream' } },",
  '(r) => { if (r.statusCode !== 200) process.exitCode = 1; r.pipe(process.stdout); });',
  "q.on('error', (x) => { console.error(x.message); process.exitCode = 1; });",
  'q.end(e.GW_BENCH_BODY);',
].join(' ');

function curlArgs(baseUrl, token, body) {
  return [
    '-sS',
    '-N',
    '--fail',
    '-H',
    `authorization: Bearer ${token}`,
    '-H',
    'content-type: application/json',
    '-H',
    'accept: text/event-stream',
    '--data-binary',
    JSON.stringify(body),
    `${baseUrl}/v1/chat/completions`,
  ];
}

const body = { model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true };

/**
 * A TCP tap between the client and the sim: forwards bytes unchanged and stamps, for every SSE frame the sim
 * sends, the moment it reached the client's socket (performance.now()). Frames are paced (one write each), so
 * every `data:` frame arrives whole in one read; HTTP chunk framing around it is skipped by the regexp.
 */
async function startTap(target) {
  const { hostname, port } = new URL(target);
  const frames = [];
  const server = createServer((client) => {
    const upstream = createConnection({ host: hostname, port: Number(port) });
    client.pipe(upstream);
    upstream.on('data', (buf) => {
      const t = performance.now();
      const text = buf.toString('utf8');
      for (const m of text.matchAll(/data: (\{.*?\})\n\n/g)) {
        let content = '';
        try {
          content = JSON.parse(m[1]).choices?.[0]?.delta?.content ?? '';
        } catch {
          // not a chunk of the chat stream (usage, [DONE])
        }
        frames.push({ t, content });
      }
      client.write(buf);
    });
    upstream.on('end', () => client.end());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    frames,
    reset() {
      frames.length = 0;
    },
    close: () => new Promise((r) => server.close(r)),
  };
}

/** Delays (ms) from each content frame's arrival to the moment its text was on gw's stdout. */
async function gwDelays(tap, env, dir) {
  tap.reset();
  const seen = []; // [time, cumulative bytes]
  let total = 0;
  const r = await run(process.execPath, [GW, 'chat', '--stream', '-m', MODEL, 'hi'], {
    env: gwEnv(dir, { ...env, GW_BASE_URL: tap.url }),
    onStdout: (c, t) => {
      total += c.length;
      seen.push([t, total]);
    },
  });
  if (r.code !== 0) throw new Error(`gw chat --stream exited ${r.code}: ${r.stderr.slice(0, 300)}`);
  const delays = [];
  let need = 0;
  let i = 0;
  for (const f of tap.frames) {
    if (f.content === '') continue;
    need += Buffer.byteLength(f.content);
    while (i < seen.length && seen[i][1] < need) i++;
    if (i === seen.length) break;
    delays.push(seen[i][0] - f.t);
  }
  return delays;
}

/** The same for curl -N: when each frame's bytes (its blank-line end) were on curl's stdout. */
async function curlDelays(tap, token) {
  tap.reset();
  const ends = [];
  await run('curl', curlArgs(tap.url, token, body), {
    onStdout: (c, t) => {
      const n = c.toString('utf8').split('\n\n').length - 1;
      for (let k = 0; k < n; k++) ends.push(t);
    },
  });
  const delays = [];
  tap.frames.forEach((f, k) => {
    if (f.content !== '' && ends[k] !== undefined) delays.push(ends[k] - f.t);
  });
  return delays;
}

/** The streaming figures. */
export async function stream() {
  const dir = tempDir('stream');
  const rows = [];
  try {
    const fast = await startSim({ streamChunks: CHUNKS, timings: { streamDelayMs: 0 } }, 'stream');
    try {
      const env = gwEnv(dir, { GW_BASE_URL: fast.baseUrl, GW_TOKEN: fast.token });
      const wall = (cmd, args, opts) => async () => {
        const r = await run(cmd, args, opts);
        if (r.code !== 0) throw new Error(`${cmd} exited ${r.code}: ${r.stderr.slice(0, 300)}`);
        return r.ms;
      };
      const [curl, gwStream, floor] = await interleave(
        [
          wall('curl', curlArgs(fast.baseUrl, fast.token, body), {}),
          wall(process.execPath, [GW, 'chat', '--stream', '-m', MODEL, 'hi'], { env }),
          wall(process.execPath, ['-e', FLOOR_SCRIPT], {
            env: { ...env, GW_BENCH_BODY: JSON.stringify(body) },
          }),
        ],
        RUNS,
        1,
      );
      const ratio = gwStream.median / curl.median;
      const floorRatio = floor.median / curl.median;
      rows.push({
        figure: `stream: ${CHUNKS} chunks, gw chat --stream`,
        gw: fmt(gwStream, 'ms'),
        baseline: `curl -N: ${fmt(curl, 'ms')}`,
        ratio: `${ratio.toFixed(2)}×`,
        target: '≤ 1.5×',
        ok: ratio <= 1.5,
        raw: { gw: gwStream, baseline: curl, ratio, floor, vsFloor: gwStream.median / floor.median },
      });
      rows.push({
        figure: `stream: floor, bare node:http pipe vs curl -N`,
        gw: fmt(floor, 'ms'),
        baseline: `curl -N: ${fmt(curl, 'ms')}`,
        ratio: `${floorRatio.toFixed(2)}×`,
        target: '(reference)',
        ok: true,
        raw: { gw: floor, baseline: curl, ratio: floorRatio },
      });
    } finally {
      await fast.stop();
    }

    const paced = await startSim(
      { streamChunks: PACED_CHUNKS, timings: { streamDelayMs: PACED_DELAY_MS } },
      'paced',
    );
    const tap = await startTap(paced.baseUrl);
    try {
      const env = { GW_TOKEN: paced.token };
      const gwAll = [];
      const curlAll = [];
      for (let i = 0; i < 3; i++) {
        gwAll.push(...(await gwDelays(tap, env, dir)));
        curlAll.push(...(await curlDelays(tap, paced.token)));
      }
      const g = stats(gwAll);
      const c = stats(curlAll);
      rows.push({
        figure: `stream: chunk arrival → stdout (${PACED_CHUNKS} paced chunks ×3)`,
        gw: fmt(g, 'ms', 2),
        baseline: `curl -N: ${fmt(c, 'ms', 2)}`,
        ratio: `${g.median.toFixed(2)} ms`,
        target: '≤ 2 ms median',
        ok: g.median <= 2,
        raw: { gw: g, baseline: c },
      });
    } finally {
      await tap.close();
      await paced.stop();
    }
  } finally {
    cleanup(dir);
  }
  return rows;
}
