/**
 * `gw load ... --prices`: the real bin/gw against gw sim. Each request's spend is recomputed here from the usage
 * the simulator reports for its body (asked again of the simulator, not read from gw's output) and priced by this
 * test's own arithmetic; the report's spend must be their sum exactly, in millionths. Also: the --csv column,
 * unpriced models, replayed images and videos, --api video, merges, and a run without --prices unchanged.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CSV_HEAD } from '../../src/commands/load/csv.js';
import { amountText } from '../../src/contract/money.js';
import type { RunReport, StepReport } from '../../src/load/schema.js';
import type { LoggedRequest } from '../../src/sim/server.js';
import { csvRows } from '../helpers/distributed.js';
import { spawnGw } from '../helpers/gw.js';
import { useSim } from '../helpers/sim.js';
import { tempDir } from '../helpers/tmp.js';

const CHAT = 'chat-3.7-plus';
const EMBED = 'text-embedding-v4';
/** Rates that leave fractions of a millionth per request: each request is rounded on its own, then summed. */
const PRICES = {
  currency: 'USD',
  models: {
    [CHAT]: { input_per_million: 0.37, output_per_million: 15, cached_per_million: 0.05 },
    [EMBED]: { input_per_million: 0.13, currency: 'CNY' },
    'image-gen-1': { per_image: 0.04 },
    'clip-1.1-t2v': { per_video_second: 0.9, currency: 'CNY' },
  },
};
/** Prompts of three lengths, one of which the simulator answers with cached input tokens. */
const PROMPTS = [
  '"a short question about foxes"',
  '"[sim:cache] a long shared preamble that the gateway has cached before, then a question"',
  '"tell me about the sea, the tides and the moon in as many words as you like"',
];

type Money = Partial<Record<'CNY' | 'USD', number>>;
interface Usage {
  prompt_tokens: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number };
}

function files(): { dir: string; prices: string; prompts: string } {
  const dir = tempDir('gw-load-prices-');
  const prices = join(dir, 'prices.json');
  const prompts = join(dir, 'prompts.jsonl');
  writeFileSync(prices, JSON.stringify(PRICES));
  writeFileSync(prompts, `${PROMPTS.join('\n')}\n`);
  return { dir, prices, prompts };
}

/** This test's own pricing of one usage, in millionths (each request rounded to a millionth, as documented). */
function micros(model: string, u: Usage): number {
  const p = PRICES.models[model as typeof CHAT] as {
    input_per_million: number;
    output_per_million?: number;
    cached_per_million?: number;
  };
  const cached = u.prompt_tokens_details?.cached_tokens ?? 0;
  const amount =
    (u.prompt_tokens - cached) * p.input_per_million +
    cached * (p.cached_per_million ?? p.input_per_million) +
    (u.completion_tokens ?? 0) * (p.output_per_million ?? 0);
  return Math.round(amount);
}

/**
 * The usage the simulator reports for a logged request's body, asked of it again without streaming (its answers
 * are a function of the body; a stream reports the same usage as the whole answer).
 */
async function usageOf(base: string, q: LoggedRequest, seen: Map<string, Usage>): Promise<Usage> {
  const body = { ...(q.body as Record<string, unknown>) };
  delete body.stream;
  delete body.stream_options;
  const key = `${q.path} ${JSON.stringify(body)}`;
  const known = seen.get(key);
  if (known !== undefined) return known;
  const res = await fetch(`${base}${q.path}`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-sim-local-0000', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const usage = ((await res.json()) as { usage: Usage }).usage;
  seen.set(key, usage);
  return usage;
}

/** What the simulator's answers to `logged` cost, per currency and per request id, and their input tokens. */
async function expected(base: string, logged: LoggedRequest[]) {
  const seen = new Map<string, Usage>();
  const total: Partial<Record<'CNY' | 'USD', number>> = {};
  const perRequest = new Map<string, number>();
  let input = 0;
  let cached = 0;
  for (const q of logged) {
    const model = (q.body as { model: string }).model;
    const u = await usageOf(base, q, seen);
    const m = micros(model, u);
    const currency = model === EMBED ? 'CNY' : 'USD';
    total[currency] = (total[currency] ?? 0) + m;
    perRequest.set(q.requestId, m);
    input += u.prompt_tokens;
    cached += u.prompt_tokens_details?.cached_tokens ?? 0;
  }
  return { total, perRequest, input, cached };
}

const textPosts = (requests: LoggedRequest[]): LoggedRequest[] =>
  requests.filter((q) => q.method === 'POST' && /\/(chat\/completions|embeddings)$/.test(q.path));

/** Runs the real bin/gw with --json; the report and stderr. */
async function gwJson(args: string[], env: Record<string, string>) {
  const r = await spawnGw([...args, '--json'], { env });
  return { ...r, report: r.exitCode === 0 ? (JSON.parse(r.stdout) as RunReport) : undefined };
}

const stepOf = (r: RunReport | undefined): StepReport => r?.steps[0] as StepReport;
const fromMicros = (m: Money): Money => Object.fromEntries(Object.entries(m).map(([c, a]) => [c, a / 1e6]));

describe('gw load --prices against the simulator', () => {
  it.each([
    ['streamed', []],
    ['whole', ['--no-stream']],
  ])(
    'chat (%s) and embeddings: the spend is the exact sum of what each reported usage costs',
    async (_mode, streamArgs) => {
      const sim = await useSim();
      const f = files();
      const csv = join(f.dir, 'requests.csv');
      const r = await gwJson(
        [
          'load',
          '-m',
          CHAT,
          '--mix',
          `chat=2,embeddings@${EMBED}=1`,
          '--prompts',
          f.prompts,
          '--max-tokens',
          '9',
          '--requests',
          '30',
          '--concurrency',
          '3',
          '--prices',
          f.prices,
          '--csv',
          csv,
          ...streamArgs,
        ],
        sim.env,
      );
      expect(r.exitCode, r.stderr).toBe(0);
      const logged = textPosts(sim.requests);
      expect(logged).toHaveLength(30);
      const want = await expected(sim.baseUrl, logged);
      const st = stepOf(r.report);
      // Exact, in millionths: the report's figure is the sum of the requests' own prices.
      expect(st.spend).toEqual({
        total: fromMicros(want.total),
        priced: 30,
        unpriced: 0,
        unpriced_models: [],
      });
      expect(r.report?.spend).toEqual(fromMicros(want.total));
      expect(want.cached).toBeGreaterThan(0);
      expect(st.input_tokens).toBe(want.input);
      expect(st.cached_tokens).toBe(want.cached);
      // The --csv column: each request's own price, by its request id.
      const rows = csvRows(csv);
      expect(rows).toHaveLength(30);
      for (const row of rows) {
        expect(Math.round(Number(row.spend) * 1e6)).toBe(want.perRequest.get(row.request_id ?? ''));
        expect(row.currency).toBe(row.api === 'embeddings' ? 'CNY' : 'USD');
      }
      expect(r.stderr).not.toContain('no spend at --prices');
    },
  );

  it('counts requests of a model the file does not price as unpriced and says so; spend leaves them out', async () => {
    const sim = await useSim();
    const f = files();
    const out = join(f.dir, 'run.json');
    const html = join(f.dir, 'run.html');
    const args = ['load', '-m', CHAT, '--mix', 'chat=1,messages@chat-3-vl-plus=1', '--requests', '12'];
    const r = await spawnGw([...args, '--prices', f.prices, '--out', out, '--html', html], { env: sim.env });
    expect(r.exitCode, r.stderr).toBe(0);
    const report = JSON.parse(readFileSync(out, 'utf8')) as RunReport;
    const other = sim.requests.filter((q) => q.path === '/v1/messages');
    expect(other.length).toBeGreaterThan(0);
    const st = stepOf(report);
    expect(st.spend).toMatchObject({
      priced: 12 - other.length,
      unpriced: other.length,
      unpriced_models: ['chat-3-vl-plus'],
    });
    const mine = textPosts(sim.requests).filter((q) => (q.body as { model: string }).model === CHAT);
    const total = fromMicros((await expected(sim.baseUrl, mine)).total);
    expect(st.spend?.total).toEqual(total);
    expect(r.stderr).toContain(
      `${other.length} successful request${other.length === 1 ? ' has' : 's have'} no spend at --prices (models not in the file: chat-3-vl-plus)`,
    );
    // The summary and the HTML report show the same total.
    const usd = `USD ${amountText(total.USD ?? 0)}`;
    expect(r.stderr).toMatch(
      new RegExp(`at --prices: +${usd.replace('.', '\\.')} spent \\(${12 - other.length} requests priced`),
    );
    expect(r.stderr).toMatch(/tokens: +\d+ input \(\d+ cached\), \d+ output/);
    expect(readFileSync(html, 'utf8')).toContain(`spend at --prices</dt><dd>${usd}</dd>`);
  });

  it('without --prices the report, the CSV and the summary are as before', async () => {
    const sim = await useSim();
    const csv = join(tempDir('gw-load-noprices-'), 'r.csv');
    const r = await spawnGw(['load', '-m', CHAT, '--requests', '4', '--csv', csv, '--out', `${csv}.json`], {
      env: sim.env,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const report = JSON.parse(readFileSync(`${csv}.json`, 'utf8')) as RunReport;
    // The step's fields as gw wrote them before --prices (in order), and no spend anywhere.
    expect(Object.keys(stepOf(report))).toEqual([
      'label',
      'mode',
      'concurrency',
      'duration_s',
      'requests',
      'ok',
      'errors',
      'cancelled',
      'error_rate',
      'errors_by_code',
      'statuses',
      'apis',
      'requests_per_s',
      'ok_per_s',
      'good',
      'goodput_per_s',
      'output_tokens',
      'output_tokens_per_s',
      'usage_missing',
      'schedule',
      'latency_ms',
      'cdf_ms',
      'histograms',
      'timeline',
    ]);
    expect(Object.keys(report)).not.toContain('spend');
    expect(Object.keys(report.config)).not.toContain('prices');
    expect(readFileSync(csv, 'utf8').split('\n')[0]).toBe(CSV_HEAD.join(','));
    expect(r.stdout + r.stderr).not.toMatch(/--prices|tokens: /);
  });

  it('--replay prices images by their count, videos by their seconds, messages with their cache reads', async () => {
    const sim = await useSim();
    const f = files();
    const trace = join(f.dir, 'trace.jsonl');
    const lines = [
      { t_ms: 0, api: 'images', model: 'image-gen-1', body: { model: 'image-gen-1', prompt: 'a fox', n: 2 } },
      {
        t_ms: 5,
        api: 'video',
        model: 'clip-1.1-t2v',
        body: { model: 'clip-1.1-t2v', prompt: 'sea', seconds: 3 },
      },
      {
        t_ms: 10,
        api: 'messages',
        model: CHAT,
        body: {
          model: CHAT,
          max_tokens: 5,
          stream: true,
          messages: [{ role: 'user', content: '[sim:cache] hello again' }],
        },
      },
    ];
    writeFileSync(trace, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const r = await gwJson(
      ['load', '--replay', trace, '--budget', '20CNY', '--poll-interval', '50ms', '--prices', f.prices],
      sim.env,
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const st = stepOf(r.report);
    expect(st.ok).toBe(3);
    // The messages answer: its usage as the simulator reports it for that body; input_tokens is the total (cache
    // reads and writes inside it): the reads at the cached rate, the rest at the input rate.
    const q = sim.requests.find((x) => x.path === '/v1/messages') as LoggedRequest;
    const res = await fetch(`${sim.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-sim-local-0000', 'content-type': 'application/json' },
      body: JSON.stringify({ ...(q.body as object), stream: false }),
    });
    const u = ((await res.json()) as { usage: Record<string, number> }).usage;
    const read = u.cache_read_input_tokens as number;
    const uncached = (u.input_tokens as number) - read;
    expect(read).toBeGreaterThan(0);
    const messages = Math.round(uncached * 0.37 + read * 0.05 + (u.output_tokens as number) * 15);
    expect(st.by_api_model?.[`messages ${CHAT}`]?.spend).toEqual({ USD: messages / 1e6 });
    expect(st.by_api_model?.['images image-gen-1']?.spend).toEqual({ USD: 0.08 });
    expect(st.by_api_model?.['video clip-1.1-t2v']?.spend).toEqual({ CNY: 2.7 });
    expect(st.spend?.total).toEqual({ CNY: 2.7, USD: (80_000 + messages) / 1e6 });
    expect(st.cached_tokens).toBe(read);
    expect(st.input_tokens).toBe(uncached + read);
  });

  it('--api video prices each finished video by its seconds', async () => {
    const sim = await useSim();
    const f = files();
    const r = await gwJson(
      [
        'load',
        '--api',
        'video',
        '-m',
        'clip-1.1-t2v',
        '--seconds',
        '4',
        '--requests',
        '2',
        '--budget',
        '20CNY',
        '--poll-interval',
        '50ms',
        '--prices',
        f.prices,
      ],
      sim.env,
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(stepOf(r.report).spend).toEqual({
      total: { CNY: 7.2 },
      priced: 2,
      unpriced: 0,
      unpriced_models: [],
    });
    expect(r.report?.config.prices).toMatchObject({
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown,
    });
  });

  it('gw load merge adds the shards’ spend exactly, and refuses parts priced otherwise or not at all', async () => {
    const sim = await useSim();
    const f = files();
    const other = join(f.dir, 'other.json');
    writeFileSync(other, JSON.stringify({ ...PRICES, currency: 'CNY' }));
    const run = async (shard: string, out: string, prices: string | undefined) => {
      const args = ['load', '-m', CHAT, '--prompts', f.prompts, '--concurrency', '2', '--requests', '10'];
      const r = await spawnGw(
        [...args, '--shard', shard, '--out', join(f.dir, out), ...(prices ? ['--prices', prices] : [])],
        { env: sim.env },
      );
      expect(r.exitCode, r.stderr).toBe(0);
      return JSON.parse(readFileSync(join(f.dir, out), 'utf8')) as RunReport;
    };
    const a = await run('1/2', 'a.json', f.prices);
    const b = await run('2/2', 'b.json', f.prices);
    const m = await gwJson(['load', 'merge', join(f.dir, 'a.json'), join(f.dir, 'b.json')], sim.env);
    expect(m.exitCode, m.stderr).toBe(0);
    const want = await expected(sim.baseUrl, textPosts(sim.requests));
    const sum = (f: (s: StepReport) => number) => f(stepOf(a)) + f(stepOf(b));
    expect(stepOf(m.report).spend).toEqual({
      total: fromMicros(want.total),
      priced: 10,
      unpriced: 0,
      unpriced_models: [],
    });
    expect(m.report?.spend).toEqual(fromMicros(want.total));
    expect(stepOf(m.report).input_tokens).toBe(sum((s) => s.input_tokens ?? 0));
    expect(stepOf(m.report).cached_tokens).toBe(want.cached);

    await run('2/2', 'plain.json', undefined);
    await run('2/2', 'dear.json', other);
    for (const [second, why] of [
      ['plain.json', 'a.json ran with --prices and'],
      ['dear.json', 'were priced with different --prices files'],
    ] as const) {
      const r = await spawnGw(['load', 'merge', join(f.dir, 'a.json'), join(f.dir, second)], {
        env: sim.env,
      });
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(why);
    }
  });
});

/** The documented upper bound of a text request, in millionths: every body byte an input token, plus max_tokens. */
function boundMicros(q: LoggedRequest): number {
  const body = q.body as { model: string; max_tokens?: number };
  const p = PRICES.models[body.model as typeof CHAT];
  const bytes = Buffer.byteLength(JSON.stringify(body));
  return Math.ceil(
    bytes * Math.max(p.input_per_million, p.cached_per_million) +
      (body.max_tokens ?? 0) * p.output_per_million,
  );
}

describe('gw load --budget with --prices', () => {
  it('closed loop: sends a request only while its bound fits beside the real spend, then stops', async () => {
    const sim = await useSim();
    const f = files();
    const one = join(f.dir, 'one.jsonl');
    writeFileSync(one, `${PROMPTS[0]}\n`);
    const args = ['load', '-m', CHAT, '--prompts', one, '--max-tokens', '9', '--concurrency', '1'];
    // A first run without a budget tells what one request spends (S) and what it holds (its bound B).
    const probe = await gwJson([...args, '--requests', '1', '--prices', f.prices], sim.env);
    expect(probe.exitCode, probe.stderr).toBe(0);
    const first = textPosts(sim.requests)[0] as LoggedRequest;
    const s = Math.round((stepOf(probe.report).spend?.total.USD ?? 0) * 1e6);
    const b = boundMicros(first);
    expect(s).toBeGreaterThan(0);
    expect(b).toBeGreaterThan(s);
    // Room for the bound after 4 spent requests, not after 5: exactly 5 are sent.
    const cap = 4 * s + b + Math.floor((s - 1) / 2);
    sim.requests.length = 0;
    const r = await gwJson(
      [...args, '--requests', '50', '--prices', f.prices, '--budget', `${cap / 1e6}USD`],
      sim.env,
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(textPosts(sim.requests)).toHaveLength(5);
    expect(r.report?.stopped).toBe('budget');
    expect(r.report?.config.budget).toBe(`${cap / 1e6}USD`);
    expect(r.report?.spend).toEqual({ USD: (5 * s) / 1e6 });
    expect(5 * s + b).toBeGreaterThan(cap);
    expect(r.stderr).toContain(
      'stopped sending: the next request could have carried the spend past --budget',
    );
  });

  it.each([
    ['closed loop', ['--concurrency', '4']],
    ['open loop', ['--rate', '200']],
  ])('%s: the real spend never passes the budget', async (_loop, loopArgs) => {
    const sim = await useSim();
    const f = files();
    const cap = 0.004;
    const r = await gwJson(
      [
        'load',
        '-m',
        CHAT,
        '--prompts',
        f.prompts,
        '--max-tokens',
        '9',
        '--requests',
        '400',
        ...loopArgs,
      ].concat(['--prices', f.prices, '--budget', `${cap}USD`]),
      sim.env,
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const sent = textPosts(sim.requests);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.length).toBeLessThan(400);
    expect(r.report?.stopped).toBe('budget');
    const want = await expected(sim.baseUrl, sent);
    expect(r.report?.spend).toEqual(fromMicros(want.total));
    expect(want.total.USD).toBeLessThanOrEqual(cap * 1e6);
    // Arrivals the budget held back are not "dropped" (that would say the client fell behind).
    expect(stepOf(r.report).schedule.dropped).toBe(0);
  });

  it('refuses before anything is sent: no --prices, no budget in the currency, a budget below one request', async () => {
    const sim = await useSim();
    const f = files();
    const base = ['load', '-m', CHAT, '--requests', '3'];
    for (const [args, rule] of [
      [['--budget', '1USD'], '--budget: text requests are priced only at --prices <prices.json>'],
      [
        ['--mix', `chat=1,embeddings@${EMBED}=1`, '--prices', f.prices, '--budget', '1USD'],
        `--budget: ${EMBED} is priced in CNY: give a budget in CNY`,
      ],
      [
        ['--prices', f.prices, '--budget', '0.00001USD'],
        '--budget: 0.00001 USD does not cover one request of',
      ],
    ] as const) {
      const r = await spawnGw([...base, ...args], { env: sim.env });
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(rule);
    }
    expect(sim.requests.filter((q) => q.method === 'POST')).toEqual([]);
  });
});
