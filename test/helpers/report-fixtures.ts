/**
 * Deterministic documents in the shapes of `gw load --json`, `gw probe history --json` and `gw batch status
 * --json`, for the report renderers' tests and screenshots (seeded pseudo-random numbers, fixed clock).
 */
import { build, encodeIntoCompressedBase64 } from 'hdr-histogram-js';
import type { StatusDoc } from '../../src/batch/status.js';
import type { RunReport, StepReport } from '../../src/load/schema.js';
import type { HistoryView } from '../../src/probe/history-view.js';
import type { ProbeReport } from '../../src/probe/runner.js';

/** A seeded generator of numbers in [0, 1). */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** A log-normal-ish latency sample around `median` ms with a tail. */
function latency(r: () => number, median: number, spread: number): number {
  const u = Math.max(1e-9, r());
  const v = r();
  const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  return median * Math.exp(spread * z);
}

const T0 = Date.UTC(2026, 10, 23, 13, 0, 0);

interface Hist {
  record(ms: number): void;
  summary(): {
    count: number;
    mean: number;
    p50: number;
    p90: number;
    p95: number;
    p99: number;
    p999: number;
    max: number;
  };
  cdf(): [number, number][];
  encode(): string;
}

function hist(): Hist {
  const h = build({ numberOfSignificantValueDigits: 3, lowestDiscernibleValue: 1, autoResize: true });
  const r3 = (us: number): number => Math.round(us) / 1000;
  return {
    record: (ms) => h.recordValue(Math.max(0, Math.round(ms * 1000))),
    summary: () => ({
      count: h.totalCount,
      mean: r3(h.mean),
      p50: r3(h.getValueAtPercentile(50)),
      p90: r3(h.getValueAtPercentile(90)),
      p95: r3(h.getValueAtPercentile(95)),
      p99: r3(h.getValueAtPercentile(99)),
      p999: r3(h.getValueAtPercentile(99.9)),
      max: r3(h.maxValue),
    }),
    cdf: () =>
      h.totalCount === 0
        ? []
        : [0, 10, 20, 30, 40, 50, 60, 70, 75, 80, 85, 90, 92.5, 95, 97.5, 99, 99.5, 99.9, 99.99, 100].map(
            (p) => [p, Math.round(p === 0 ? h.minNonZeroValue : h.getValueAtPercentile(p)) / 1000],
          ),
    encode: () => (h.totalCount === 0 ? '' : encodeIntoCompressedBase64(h)),
  };
}

/** One load step of `requests` requests at `concurrency`, its latency growing past `capacity`. */
function loadStep(r: () => number, requests: number, concurrency: number, capacity: number): StepReport {
  const load = concurrency / capacity;
  const queue = load > 1 ? load : 1;
  const e2e = hist();
  const ttft = hist();
  const itl = hist();
  const tpot = hist();
  const e2eFailed = hist();
  const lag = hist();
  const perSecond = Math.min(concurrency, capacity) * 2.2;
  const seconds = Math.max(1, Math.ceil(requests / perSecond));
  const timeline = Array.from({ length: seconds }, (_, t) => ({
    t,
    done: 0,
    ok: 0,
    errors: 0,
    output_tokens: 0,
  }));
  const codes: Record<string, number> = {};
  let ok = 0;
  for (let i = 0; i < requests; i++) {
    const sec = timeline[Math.min(seconds - 1, Math.floor(i / perSecond))]!;
    sec.done++;
    const fail = r() < (load > 1.5 ? 0.03 : 0.004);
    if (fail) {
      sec.errors++;
      e2eFailed.record(900 * queue); // a fixed value: the seeded sequence stays what the other figures drew
      const code = r() < 0.7 ? 'rate_limit_exceeded' : 'upstream_timeout';
      codes[code] = (codes[code] ?? 0) + 1;
      continue;
    }
    ok++;
    sec.ok++;
    sec.output_tokens += 64;
    const first = latency(r, 180 * queue, 0.35);
    ttft.record(first);
    let gap = 0;
    for (let k = 0; k < 8; k++) {
      const g = latency(r, 22, 0.5);
      itl.record(g);
      gap += g;
    }
    e2e.record((first + gap * 8) * queue);
    tpot.record((gap * 8) / 64);
  }
  const duration = seconds;
  const perSec = (n: number): number => Math.round((n / duration) * 100) / 100;
  const statuses: Record<string, number> = { '200': ok };
  if (codes.rate_limit_exceeded) statuses['429'] = codes.rate_limit_exceeded;
  if (codes.upstream_timeout) statuses['504'] = codes.upstream_timeout;
  return {
    label: `concurrency=${concurrency}`,
    mode: 'closed',
    concurrency,
    duration_s: duration,
    requests,
    ok,
    errors: requests - ok,
    cancelled: 0,
    error_rate: Math.round(((requests - ok) / requests) * 1e4) / 1e4,
    errors_by_code: codes,
    statuses,
    apis: { chat: { requests, ok, errors: requests - ok } },
    requests_per_s: perSec(requests),
    ok_per_s: perSec(ok),
    good: ok,
    goodput_per_s: perSec(ok),
    output_tokens: ok * 64,
    output_tokens_per_s: perSec(ok * 64),
    usage_missing: 0,
    schedule: { late: 0, late_share: 0, lag_p99_ms: 0, lag_max_ms: 0, behind: false, dropped: 0 },
    latency_ms: {
      e2e: e2e.summary(),
      ttft: ttft.summary(),
      itl: itl.summary(),
      tpot: tpot.summary(),
      e2e_failed: e2eFailed.summary(),
      lag: lag.summary(),
    },
    cdf_ms: { e2e: e2e.cdf(), ttft: ttft.cdf(), itl: itl.cdf(), tpot: tpot.cdf() },
    histograms: {
      e2e: e2e.encode(),
      ttft: ttft.encode(),
      itl: itl.encode(),
      tpot: tpot.encode(),
      e2e_failed: e2eFailed.encode(),
      lag: lag.encode(),
    },
    timeline,
  };
}

/** A `gw load` run: one step of `requests`, or a sweep over concurrencies. */
export function loadFixture(o: { requests?: number; sweep?: number[]; slo?: string } = {}): RunReport {
  const r = rng(7);
  const values = o.sweep ?? [16];
  const steps = values.map((c) => loadStep(r, o.requests ?? 2000, c, 16));
  const points = steps.map((s, i) => ({
    value: values[i] as number,
    throughput_rps: s.goodput_per_s,
    latency_p50_ms: s.latency_ms.e2e.p50,
    latency_p95_ms: s.latency_ms.e2e.p95,
    ttft_p95_ms: s.latency_ms.ttft.p95,
    error_rate: s.error_rate,
  }));
  let knee: { index: number; value: number } | null = null;
  let best = 0;
  points.forEach((p, i) => {
    const power = p.throughput_rps / p.latency_p50_ms;
    if (power > best * 1.02) {
      best = power;
      knee = { index: i, value: p.value };
    }
  });
  return {
    schema: 'gw.load.v1',
    created_at: new Date(T0).toISOString(),
    gw_version: '0.1.0',
    target: 'https://gateway.example.com',
    machines: 1,
    config: { model: 'chat-3.7-plus', api: 'chat', mode: 'closed' },
    interrupted: false,
    stopped: null,
    warnings: [],
    steps,
    sweep: o.sweep ? { parameter: 'concurrency', points, knee, best_within_slo: null } : null,
    slo: o.slo ? { expr: o.slo, pass: false } : null,
  };
}

/** `gw probe history` over `hours` of runs every 5 minutes, with an outage of chat-stream and a new model. */
export function historyFixture(hours = 6): HistoryView {
  const r = rng(11);
  const every = 5 * 60_000;
  const n = (hours * 3_600_000) / every;
  const checks: [string, string][] = [
    ['models', ''],
    ['chat', 'chat-3.7-plus'],
    ['chat-stream', 'chat-3.7-plus'],
    ['responses', 'chat-3.7-plus'],
    ['messages', 'chat-3.7-plus'],
    ['embeddings', 'text-embedding-v4'],
  ];
  const series: HistoryView['series'] = checks.map(([check, model]) => {
    const points: [number, string, number | null][] = [];
    for (let i = 0; i < n; i++) {
      const t = T0 + i * every;
      let status = 'pass';
      if (check === 'chat-stream' && i > n * 0.45 && i < n * 0.55) status = 'fail';
      else if (check === 'messages' && i > n * 0.7 && i < n * 0.75) status = 'warn';
      else if (r() < 0.01) status = 'fail';
      points.push([
        t,
        status,
        status === 'fail' ? null : Math.round(latency(r, check === 'models' ? 40 : 300, 0.3)),
      ]);
    }
    const lat = points
      .map((p) => p[2])
      .filter((v): v is number => v !== null)
      .sort((a, b) => a - b);
    const q = (p: number): number =>
      lat[Math.min(lat.length - 1, Math.ceil((p / 100) * lat.length) - 1)] ?? 0;
    const upShare = points.filter((p) => p[1] !== 'fail').length / points.length;
    const last = points[points.length - 1]!;
    return {
      gateway: 'https://gateway.example.com',
      check,
      model,
      runs: points.length,
      uptime: {
        '5m': last[1] === 'fail' ? 0 : 1,
        '1h': 1,
        '1d': Math.round(upShare * 1000) / 1000,
        '7d': null,
      },
      latencyMs: { p50: q(50), p90: q(90), p99: q(99), max: lat[lat.length - 1] ?? 0 },
      ttftMs: null,
      last: { at: new Date(last[0]).toISOString(), status: last[1] },
      failingFor: 0,
      points,
    };
  });
  const runs = Array.from({ length: n }, (_, i) => ({
    gateway: 'https://gateway.example.com',
    at: new Date(T0 + i * every).toISOString(),
    durationMs: 1200,
    ok: series.every((s) => s.points[i]?.[1] !== 'fail'),
    passed: series.filter((s) => s.points[i]?.[1] === 'pass').length,
    failed: series.filter((s) => s.points[i]?.[1] === 'fail').length,
    warned: series.filter((s) => s.points[i]?.[1] === 'warn').length,
  }));
  const appeared: HistoryView['changes'][number] = {
    kind: 'appeared',
    gateway: 'https://gateway.example.com',
    check: 'embeddings',
    model: 'text-embedding-v4',
    detail: 'text-embedding-v4 is listed now',
  };
  return {
    generatedAt: new Date(T0 + hours * 3_600_000).toISOString(),
    since: new Date(T0).toISOString(),
    filters: {},
    runs,
    series,
    changes: [appeared],
    markers: [{ ...appeared, at: runs[runs.length - 1]?.at ?? new Date(T0).toISOString() }],
  };
}

/** `gw batch status` of `items` items (videos), a few failed and one in doubt, with estimated spend. */
export function batchFixture(items = 24): StatusDoc {
  const r = rng(5);
  const docItems: StatusDoc['items'] = [];
  const spend: StatusDoc['spend_over_time'] = [];
  let total = 0;
  const counts = {
    total: items,
    succeeded: 0,
    failed: 0,
    in_doubt: 0,
    running: 0,
    sending: 0,
    unfinished: 0,
  };
  const failures: Record<string, number> = {};
  const inDoubt: string[] = [];
  for (let i = 0; i < items; i++) {
    const id = `fox-${String(i + 1).padStart(3, '0')}`;
    const send = T0 + Math.floor(i / 4) * 9000 + Math.floor(r() * 2000);
    const created = send + 300 + Math.floor(r() * 500);
    const running = created + 2000 + Math.floor(r() * 6000);
    const end = running + 20_000 + Math.floor(r() * 30_000);
    total = Math.round((total + 2.7) * 100) / 100;
    spend.push({ at: new Date(send).toISOString(), CNY: total });
    const events: [string, number][] = [['sending', send]];
    let status = 'done';
    if (i === 5) {
      events.push(['doubt', send + 30_000]);
      status = 'doubt';
      counts.in_doubt++;
      inDoubt.push(id);
    } else {
      events.push(['created', created], ['queued', created + 10], ['running', running]);
      if (r() < 0.15) {
        events.push(['failed', end]);
        status = 'failed';
        counts.failed++;
        const code = r() < 0.5 ? 'content_policy_violation' : 'task_timeout';
        failures[code] = (failures[code] ?? 0) + 1;
      } else {
        events.push(['done', end]);
        counts.succeeded++;
      }
    }
    docItems.push({ custom_id: id, status, events, model: 'clip-1.1-t2v' });
  }
  return {
    dir: 'out/',
    runs: [
      {
        at: new Date(T0).toISOString(),
        input: 'videos.jsonl',
        command: 'gw batch run videos.jsonl --out out/ --budget 100CNY',
      },
    ],
    counts,
    spend: {
      estimated: { CNY: total },
      implied_by_usage: { CNY: Math.round(counts.succeeded * 2.7 * 100) / 100 },
    },
    spend_over_time: spend,
    failures_by_code: failures,
    in_doubt: inDoubt,
    items: docItems,
    finished: true,
    budgets: { CNY: 100 },
  };
}

/**
 * `gw probe --all-models --json` of a slower gateway (~2 s): long row names and notes leave the latency axis
 * narrow; a failed row, a degraded one, and the SLO bounds.
 */
export function probeFixture(): ProbeReport {
  const at = new Date(T0).toISOString();
  const row = (
    check: string,
    model: string,
    latencyMs: number,
    extra: Partial<ProbeReport['checks'][number]> = {},
  ): ProbeReport['checks'][number] => ({
    id: `${check}:${model}`,
    check,
    model,
    title: check,
    status: 'pass',
    latencyMs,
    requestId: `req-${Math.round(latencyMs)}`,
    detail: 'ok',
    ...extra,
  });
  const checks: ProbeReport['checks'] = [
    {
      id: 'models',
      title: 'models',
      status: 'pass',
      latencyMs: 41.2,
      requestId: 'req-1',
      detail: '29 visible',
    },
    row('chat', 'chat-3.7-plus', 312.4),
    row('chat-stream', 'chat-3.7-plus', 1240.5, {
      status: 'warn',
      ttftMs: 352.1,
      detail: 'ttft 352ms ≥ 300ms',
      slo: { verdict: 'degraded', missed: ['ttft 352ms ≥ 300ms'] },
    }),
    row('responses', 'codex-mini-sim', 421),
    row('messages', 'claude-sim-4', 1502.3, {
      status: 'fail',
      detail: 'service_error: upstream failure (req-5)',
      error: { code: 'service_error', message: 'upstream failure (req-5)', status: 500 },
      class: 'model',
    }),
    row('embeddings', 'text-embedding-v4', 95.5),
    row('video', 'clip-1.1-t2v', 1951.8),
  ];
  return {
    gateway: 'https://gateway.example.com',
    startedAt: at,
    finishedAt: new Date(T0 + 1960).toISOString(),
    durationMs: 1960,
    checks,
    summary: { passed: 5, failed: 1, warned: 1, skipped: 0 },
    slo: { fail: { latency: 1800 }, warn: { ttft: 300 } },
  };
}
