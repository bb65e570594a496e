/**
 * `gw load --remote-write <url>`: the run's figures pushed to Prometheus (or anything that takes remote write 1.0:
 * Mimir, Thanos receive, VictoriaMetrics) while it goes, every few seconds and once at the end. A WriteRequest is
 * encoded with protobufjs from the remote-write message definitions, block-compressed with snappyjs, and POSTed
 * with the headers the specification names.
 *
 * Every push carries the cumulative values so far (counters and classic histograms, the way a scrape would see
 * them), so a push that fails loses nothing but its own timestamp: it is never retried, and a failure is a warning
 * (each kind once), never a failed run. One push at a time; the last one waits at most FINAL_PUSH_MS.
 */
import protobuf from 'protobufjs/light.js';
import snappy from 'snappyjs';
import type { Dispatcher } from 'undici';
import { readText } from '../client/body.js';
import { createDispatcher } from '../client/transport.js';
import { BucketHistogram } from '../core/bucket-histogram.js';
import type { Outcome } from './exchange.js';

/** How often the figures are pushed while the run goes. */
export const PUSH_INTERVAL_MS = 5_000;
/** The longest the last push (and any push) may take. */
export const FINAL_PUSH_MS = 5_000;

/**
 * Upper bounds of the latency histograms, seconds: ten per decade from 0.1 ms to 100 s (each 1.26× the last), so
 * a quantile Prometheus interpolates inside a bucket is within about a quarter of the value measured.
 */
export const BUCKETS_S: readonly number[] = Array.from(
  { length: 61 },
  (_, i) => Math.round(10 ** (-4 + i / 10) * 1e7) / 1e7,
);

// The remote-write 1.0 messages (prometheus/prompb: WriteRequest, TimeSeries, Label, Sample).
const root = protobuf.Root.fromJSON({
  nested: {
    prometheus: {
      nested: {
        WriteRequest: { fields: { timeseries: { rule: 'repeated', type: 'TimeSeries', id: 1 } } },
        TimeSeries: {
          fields: {
            labels: { rule: 'repeated', type: 'Label', id: 1 },
            samples: { rule: 'repeated', type: 'Sample', id: 2 },
          },
        },
        Label: { fields: { name: { type: 'string', id: 1 }, value: { type: 'string', id: 2 } } },
        Sample: { fields: { value: { type: 'double', id: 1 }, timestamp: { type: 'int64', id: 2 } } },
      },
    },
  },
});
const WriteRequest = root.lookupType('prometheus.WriteRequest');

type Labels = Record<string, string>;

/**
 * Error codes come from the gateway's answers: a hostile or broken one could name a new code in every answer, and
 * each would be a series of its own in the receiver. Past this many codes in a step, the rest count as `other`;
 * a code is cut to CODE_CHARS characters.
 */
export const MAX_CODES = 50;
const CODE_CHARS = 64;

/** One series and its value now. */
interface Series {
  labels: Labels;
  value: number;
}

/** A classic Prometheus histogram of seconds over BUCKETS_S: cumulative bucket counts, sum and count. */
class Histogram extends BucketHistogram {
  constructor() {
    super(BUCKETS_S);
  }

  observeMs(ms: number): void {
    this.record(ms / 1000);
  }

  series(name: string, labels: Labels, out: Series[]): void {
    let cumulative = 0;
    BUCKETS_S.forEach((le, i) => {
      cumulative += this.counts[i] as number;
      out.push({ labels: { ...labels, __name__: `${name}_bucket`, le: String(le) }, value: cumulative });
    });
    out.push({ labels: { ...labels, __name__: `${name}_bucket`, le: '+Inf' }, value: this.count });
    out.push({ labels: { ...labels, __name__: `${name}_sum` }, value: this.sum });
    out.push({ labels: { ...labels, __name__: `${name}_count` }, value: this.count });
  }
}

/** The figures of one step. */
class StepFigures {
  readonly requests = new Map<string, number>();
  readonly errors = new Map<string, number>();
  readonly e2e = new Histogram();
  readonly ttft = new Histogram();
  readonly itl = new Histogram();
}

/** What a push sends to, and the labels of every series. */
export interface RemoteWriteOptions {
  url: string;
  /** Labels on every series (job, instance, run): names of letters, digits and underscores. */
  labels: Labels;
  /** Told of every problem (each kind once); never thrown. */
  warn: (text: string) => void;
  intervalMs?: number | undefined;
  /** Where HTTPS_PROXY/HTTP_PROXY/NO_PROXY are read (default process.env). */
  env?: Record<string, string | undefined> | undefined;
}

/** A running remote write: feed it the run's requests and live figures, `close` it at the end. */
export class RemoteWrite {
  readonly #o: RemoteWriteOptions;
  readonly #steps = new Map<string, StepFigures>();
  readonly #dispatcher: Dispatcher;
  readonly #warned = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #pushing: Promise<void> | undefined;
  #lastTimestamp = 0;
  #inFlight = 0;
  /** Pushes the endpoint accepted. */
  pushed = 0;

  constructor(o: RemoteWriteOptions) {
    this.#o = o;
    this.#dispatcher = createDispatcher({ connectTimeoutMs: FINAL_PUSH_MS, env: o.env });
  }

  /** Starts the pushes every few seconds. */
  start(): void {
    this.#timer = setInterval(() => {
      this.#pushing ??= this.#push().finally(() => (this.#pushing = undefined));
    }, this.#o.intervalMs ?? PUSH_INTERVAL_MS);
    this.#timer.unref();
  }

  #step(label: string): StepFigures {
    let st = this.#steps.get(label);
    if (st === undefined) this.#steps.set(label, (st = new StepFigures()));
    return st;
  }

  /** One finished request of a measured step (the report's figures: successes' latencies, errors by code). */
  request(step: string, o: Outcome): void {
    const st = this.#step(step);
    st.requests.set(o.api, (st.requests.get(o.api) ?? 0) + 1);
    if (!o.ok) {
      let code = (o.code ?? 'error').slice(0, CODE_CHARS);
      if (!st.errors.has(code) && st.errors.size >= MAX_CODES) code = 'other';
      st.errors.set(code, (st.errors.get(code) ?? 0) + 1);
      return;
    }
    st.e2e.observeMs(o.e2eMs);
    if (o.ttftMs !== undefined) st.ttft.observeMs(o.ttftMs);
    for (const gap of o.itlMs) st.itl.observeMs(gap);
  }

  /** Requests in flight now (the live figures). */
  progress(inFlight: number): void {
    this.#inFlight = inFlight;
  }

  /** Every series now. */
  series(): Series[] {
    const out: Series[] = [
      { labels: { ...this.#o.labels, __name__: 'gw_load_in_flight' }, value: this.#inFlight },
    ];
    for (const [step, st] of this.#steps) {
      const base = { ...this.#o.labels, step };
      for (const [api, n] of st.requests)
        out.push({ labels: { ...base, __name__: 'gw_load_requests_total', api }, value: n });
      for (const [code, n] of st.errors)
        out.push({ labels: { ...base, __name__: 'gw_load_errors_total', code }, value: n });
      st.e2e.series('gw_load_e2e_seconds', base, out);
      st.ttft.series('gw_load_ttft_seconds', base, out);
      st.itl.series('gw_load_itl_seconds', base, out);
    }
    return out;
  }

  /** The body of a push: the series at `timestamp`, encoded and compressed. */
  encode(timestamp: number): Uint8Array {
    const timeseries = this.series().map((s) => ({
      // Remote write wants the labels sorted by name.
      labels: Object.keys(s.labels)
        .sort()
        .map((name) => ({ name, value: s.labels[name] })),
      samples: [{ value: s.value, timestamp }],
    }));
    return snappy.compress(WriteRequest.encode(WriteRequest.create({ timeseries })).finish());
  }

  async #push(): Promise<void> {
    // Strictly later than the last push: Prometheus refuses a second sample at the same time.
    const timestamp = Math.max(Date.now(), this.#lastTimestamp + 1);
    this.#lastTimestamp = timestamp;
    const u = new URL(this.#o.url);
    try {
      const res = await this.#dispatcher.request({
        origin: u.origin,
        path: `${u.pathname}${u.search}`,
        method: 'POST',
        headers: {
          'content-type': 'application/x-protobuf',
          'content-encoding': 'snappy',
          'x-prometheus-remote-write-version': '0.1.0',
          'user-agent': 'gw',
        },
        body: Buffer.from(this.encode(timestamp)),
        headersTimeout: FINAL_PUSH_MS,
        bodyTimeout: FINAL_PUSH_MS,
        signal: AbortSignal.timeout(FINAL_PUSH_MS),
      });
      const text = (await readText(res.body, 4096, true).catch(() => '')).split('\n')[0]?.trim() ?? '';
      if (res.statusCode >= 300)
        this.#once(`${res.statusCode}`, `answered ${res.statusCode}${text ? `: ${text}` : ''}`);
      else this.pushed++;
    } catch (e) {
      const err = e as { name?: string; code?: string; message?: string };
      const why =
        err.name === 'TimeoutError' ? `no answer within ${FINAL_PUSH_MS / 1000}s` : (err.code ?? err.message);
      this.#once(String(err.code ?? err.name), `failed: ${why ?? 'unknown error'}`);
    }
  }

  #once(kind: string, text: string): void {
    if (this.#warned.has(kind)) return;
    this.#warned.add(kind);
    this.#o.warn(`remote write to ${this.#o.url} ${text}`);
  }

  /** Stops the pushes and sends the last one (after any push still going); never throws. */
  async close(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    await this.#pushing;
    await this.#push();
    await this.#dispatcher.close().catch(() => undefined);
  }
}
