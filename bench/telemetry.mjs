// Telemetry's cost to a load run: tiny non-streamed requests against a trivial loopback server (its own process),
// `gw load` without telemetry, with --otlp and with --remote-write, both to a local receiver (its own process,
// answering every POST with an empty 200 and counting what it got), interleaved rounds in one run. Each row's
// ratio is the median of each round's own ratio (the machine's speed drifts between rounds), as the headroom row of
// the load section does. A row is measured only when the receiver got exports: a run whose exports all failed
// would cost nothing and prove nothing.
/* global fetch */
import { childServer, cleanup, fmt, interleaveRaw, stats, tempDir } from './lib.mjs';
import { CONNECTIONS, SECONDS, TINY_LOAD_ARGS, gwLoad, trivialServer } from './load.mjs';

const ROUNDS = 5;

/** Accepts every POST (OTLP/HTTP, remote write) with an empty 200; GET answers how many it took since the last GET. */
function receiver() {
  return childServer(`
let posts = 0, bytes = 0;
const s = require('node:http').createServer((req, res) => {
  if (req.method === 'GET') {
    res.end(JSON.stringify({ posts, bytes }));
    posts = 0; bytes = 0;
    return;
  }
  req.on('data', (c) => (bytes += c.length));
  req.on('end', () => { posts++; res.writeHead(200, { 'content-type': 'application/x-protobuf' }); res.end(); });
});
s.listen(0, '127.0.0.1', () => console.log(s.address().port));`);
}

async function taken(url) {
  return (await fetch(url)).json();
}

export async function telemetry() {
  const server = await trivialServer();
  const sink = await receiver();
  const dir = tempDir('telemetry');
  const rate = (extra) => async () => {
    await taken(sink.url);
    const report = await gwLoad(dir, server.url, [...TINY_LOAD_ARGS, ...extra]);
    const st = report.steps[0];
    if (st.errors > 0)
      throw new Error(`gw load saw ${st.errors} errors: ${JSON.stringify(st.errors_by_code)}`);
    const got = await taken(sink.url);
    if (extra.length > 0 && got.posts === 0)
      throw new Error(`gw load ${extra[0]}: the receiver got no export`);
    return st.requests_per_s;
  };
  try {
    const [plain, otlp, rw] = await interleaveRaw(
      [rate([]), rate(['--otlp', sink.url]), rate(['--remote-write', `${sink.url}/api/v1/write`])],
      ROUNDS,
      1,
    );
    const row = (name, with_) => {
      const ratios = stats(with_.map((x, k) => x / plain[k]));
      return {
        figure: `telemetry: tiny non-streamed req/s, gw load ${name} vs without (${CONNECTIONS} connections, ${SECONDS} s)`,
        gw: fmt(stats(with_), 'req/s', 0),
        baseline: `without: ${fmt(stats(plain), 'req/s', 0)}`,
        ratio: `${ratios.median.toFixed(2)}× [${ratios.min.toFixed(2)}–${ratios.max.toFixed(2)}]`,
        target: '≥ 0.95×',
        ok: ratios.median >= 0.95,
        raw: { with: with_, without: plain, ratios },
      };
    };
    return [row('--otlp', otlp), row('--remote-write', rw)];
  } finally {
    cleanup(dir);
    await Promise.all([server.stop(), sink.stop()]);
  }
}
