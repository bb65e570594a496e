// Replay: `gw load --replay` of long traces against the simulator (its own process).
//
// A trace of tiny non-streamed chat requests (4 words in, 2 tokens out) spaced 0.2 ms apart: 5 000 requests/s
// at --speed 1. Replayed with 100 000 and with 1 000 000 lines, --connections 64 (as the open loop's headroom
// row). Figures: the schedule lag p99 of the 1M run (how late requests left their scheduled time), the rate it
// reached, and gw's peak RSS for both lengths (flat in the trace's length: the file is streamed through a
// read-ahead window, never held). Then the rate this machine sustains: 20 000-line replays at half the speed,
// and half again, until the lag p99 is within 2 ms.
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { GW, cleanup, gwEnv, run, startSim, tempDir } from './lib.mjs';

const RATE = 5000;
const LAG_P99_MS = 2;
const RSS_MB = 300;

/** Writes a trace of `n` lines at RATE per second. */
async function writeTrace(path, n) {
  const w = createWriteStream(path);
  let chunk = '';
  for (let i = 0; i < n; i++) {
    const t = Math.round((i * 1000 * 1000) / RATE) / 1000;
    chunk += `{"t_ms":${t},"api":"chat","model":"chat-3.7-plus","input_words":4,"max_tokens":2}\n`;
    if (chunk.length > 1 << 20) {
      if (!w.write(chunk)) await once(w, 'drain');
      chunk = '';
    }
  }
  w.end(chunk);
  await once(w, 'close');
}

async function replay(sim, dir, trace, speed) {
  const env = gwEnv(dir, { GW_BASE_URL: sim.baseUrl, GW_TOKEN: sim.token });
  const args = [
    'load',
    '--replay',
    trace,
    '--speed',
    String(speed),
    '--no-stream',
    '--connections',
    '64',
    '--json',
  ];
  const r = await run(process.execPath, [GW, ...args], { env, rss: true, capture: true });
  if (r.code !== 0 && r.code !== 1)
    throw new Error(`gw load --replay exited ${r.code}: ${r.stderr.slice(0, 300)}`);
  const st = JSON.parse(r.stdout).steps[0];
  return {
    lagP99: st.latency_ms.lag.p99,
    rate: st.requests / st.duration_s,
    requests: st.requests,
    errors: st.errors,
    rssMb: r.rssMb,
  };
}

export async function replayBench() {
  const dir = tempDir('replay', { needBytes: 200 * 1024 * 1024 });
  const sim = await startSim({ timings: { streamDelayMs: 0 } });
  try {
    const short = join(dir, 't100k.jsonl');
    const long = join(dir, 't1m.jsonl');
    const probe = join(dir, 't20k.jsonl');
    await writeTrace(short, 100_000);
    await writeTrace(long, 1_000_000);
    await writeTrace(probe, 20_000);
    const a = await replay(sim, dir, short, 1);
    const b = await replay(sim, dir, long, 1);
    let sustained;
    for (let speed = 1; speed >= 1 / 16 && sustained === undefined; speed /= 2) {
      const r = speed === 1 ? a : await replay(sim, dir, probe, speed);
      if (r.lagP99 <= LAG_P99_MS) sustained = { ...r, offered: RATE * speed };
    }
    const rss = `100k lines: ${a.rssMb.toFixed(0)} MB`;
    return [
      {
        figure: `replay: schedule lag p99, 1 000 000 lines at ${RATE} req/s (reached ${b.rate.toFixed(0)} req/s, ${b.errors} errors)`,
        gw: `${b.lagP99.toFixed(2)} ms`,
        baseline: `100k lines: ${a.lagP99.toFixed(2)} ms`,
        ratio: `${b.lagP99.toFixed(2)} ms`,
        target: `≤ ${LAG_P99_MS} ms`,
        ok: b.lagP99 <= LAG_P99_MS,
        raw: { a, b },
      },
      {
        figure:
          'replay: the rate this machine sustains with lag p99 ≤ 2 ms (20 000 lines, halving from 5000)',
        gw: sustained !== undefined ? `${sustained.offered} req/s offered` : 'none down to 312 req/s',
        baseline: sustained !== undefined ? `lag p99 ${sustained.lagP99.toFixed(2)} ms` : '',
        ratio: sustained !== undefined ? `${(sustained.offered / RATE).toFixed(2)}×` : '',
        target: '(reference)',
        ok: true,
      },
      {
        figure: 'replay: gw peak RSS, 1 000 000 lines (flat in the trace: against 100 000)',
        gw: `${b.rssMb.toFixed(0)} MB`,
        baseline: rss,
        ratio: `${(b.rssMb / a.rssMb).toFixed(2)}×`,
        target: `≤ ${RSS_MB} MB, ≤ 1.25×`,
        ok: b.rssMb <= RSS_MB && b.rssMb / a.rssMb <= 1.25,
      },
    ];
  } finally {
    await sim.stop();
    cleanup(dir);
  }
}
