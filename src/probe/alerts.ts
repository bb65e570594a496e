/**
 * `gw probe --every --webhook <url> --alert-after <n>`: one JSON POST when a check (per model) has failed n runs
 * in a row, and one when it recovers. Deliveries run in the background, in order, retried with exponential
 * backoff; the probe loop never waits for them (except the final flush, bounded). A payload carries the check,
 * model, status, error code and the gateway's address: never the token, never a request or response body.
 */
import { maskUserinfo } from '../client/base-url.js';
import type { ProbeReport } from './runner.js';

/**
 * Text for Slack's `text` field, escaped by Slack's rules (`&`, `<`, `>` as HTML entities): gateway text such as
 * `<!channel>` or `<https://evil|click>` then shows as written instead of pinging a channel or making a link.
 */
export function slackText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** One webhook payload (Slack's incoming webhooks read `text`; other receivers read the fields). */
export interface AlertPayload {
  text: string;
  event: 'alert' | 'recovery';
  check: string;
  model: string;
  gateway: string;
  consecutiveFailures: number;
  /** The last failure's error code and one-line detail (alert), or the passing detail (recovery). */
  error?: string;
  detail: string;
  requestId?: string;
  at: string;
}

/** How deliveries are sent (tests inject one; the default POSTs with fetch). */
export type Deliver = (url: string, body: string, signal: AbortSignal) => Promise<{ status: number }>;

const defaultDeliver: Deliver = async (url, body, signal) => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'gw-probe' },
    body,
    signal,
    redirect: 'manual',
  });
  await res.arrayBuffer().catch(() => undefined);
  return { status: res.status };
};

/** Options of the alerter. */
export interface AlerterOptions {
  url: string;
  after: number;
  /** The gateway's address as shown (a base URL never holds credentials: normalizeBaseUrl refuses them). */
  gateway: string;
  /** Removes secrets from text (the token, should a gateway echo it). */
  redact(text: string): string;
  warn(text: string): void;
  deliver?: Deliver;
  /** Backoff of retries, ms: first delay, doubled each time (default 500). */
  backoffMs?: number;
  /** Attempts per payload (default 5). */
  attempts?: number;
  /** Time limit of one attempt, ms (default 10 s). */
  attemptTimeoutMs?: number;
}

/** Tracks consecutive failures per check and model and sends alerts and recoveries. */
export class Alerter {
  readonly #streak = new Map<string, number>();
  readonly #alerted = new Set<string>();
  #queue: Promise<void> = Promise.resolve();
  #pending = 0;
  readonly #stop = new AbortController();
  /** Payloads delivered (2xx) and given up, for the final report. */
  delivered = 0;
  dropped = 0;

  constructor(private readonly o: AlerterOptions) {}

  /** Feeds one run's report; queues the payloads it triggers and returns them at once. */
  observe(r: ProbeReport): AlertPayload[] {
    const out: AlertPayload[] = [];
    for (const c of r.checks) {
      if (c.status === 'skip') continue;
      const check = c.check ?? c.id;
      const model = c.model ?? '';
      const key = `${check}\u0000${model}`;
      const who = model !== '' ? `${check} on ${model}` : check;
      if (c.status === 'fail') {
        const n = (this.#streak.get(key) ?? 0) + 1;
        this.#streak.set(key, n);
        if (n === this.o.after && !this.#alerted.has(key)) {
          this.#alerted.add(key);
          const error = c.error?.code;
          out.push({
            text: slackText(
              this.o.redact(
                `:red_circle: gw probe: ${who} failed ${n} time${n === 1 ? '' : 's'} in a row on ${this.o.gateway}: ${c.detail}`,
              ),
            ),
            event: 'alert',
            check,
            model,
            gateway: this.o.gateway,
            consecutiveFailures: n,
            ...(error !== undefined ? { error } : {}),
            detail: this.o.redact(c.detail),
            ...(c.requestId !== undefined ? { requestId: c.requestId } : {}),
            at: r.startedAt,
          });
        }
      } else {
        const n = this.#streak.get(key) ?? 0;
        this.#streak.delete(key);
        if (this.#alerted.delete(key)) {
          out.push({
            text: slackText(
              this.o.redact(
                `:large_green_circle: gw probe: ${who} recovered on ${this.o.gateway} after ${n} failed runs`,
              ),
            ),
            event: 'recovery',
            check,
            model,
            gateway: this.o.gateway,
            consecutiveFailures: n,
            detail: this.o.redact(c.detail),
            ...(c.requestId !== undefined ? { requestId: c.requestId } : {}),
            at: r.startedAt,
          });
        }
      }
    }
    for (const p of out) this.#enqueue(p);
    return out;
  }

  #enqueue(p: AlertPayload): void {
    this.#pending++;
    this.#queue = this.#queue.then(() => this.#send(p)).finally(() => this.#pending--);
  }

  async #send(p: AlertPayload): Promise<void> {
    const deliver = this.o.deliver ?? defaultDeliver;
    const body = JSON.stringify(p);
    const attempts = this.o.attempts ?? 5;
    let delay = this.o.backoffMs ?? 500;
    let last = '';
    for (let i = 0; i < attempts && !this.#stop.signal.aborted; i++) {
      if (i > 0) {
        await sleep(delay, this.#stop.signal);
        delay *= 2;
      }
      try {
        // Linked by hand (AbortSignal.any on the long-lived stop signal would keep every attempt's signal).
        const attempt = new AbortController();
        const stop = (): void => attempt.abort();
        this.#stop.signal.addEventListener('abort', stop, { once: true });
        const timer = setTimeout(() => attempt.abort(), this.o.attemptTimeoutMs ?? 10_000);
        const { status } = await deliver(this.o.url, body, attempt.signal).finally(() => {
          clearTimeout(timer);
          this.#stop.signal.removeEventListener('abort', stop);
        });
        if (status >= 200 && status < 300) {
          this.delivered++;
          return;
        }
        last = `answered ${status}`;
        // A 4xx other than 408/429 will not change with a retry.
        if (status >= 400 && status < 500 && status !== 408 && status !== 429) break;
      } catch (e) {
        // fetch names a URL it refuses, credentials and all.
        last = maskUserinfo((e as Error).message);
      }
    }
    this.dropped++;
    this.o.warn(
      `webhook: ${p.event} for ${p.check}${p.model !== '' ? ` on ${p.model}` : ''} not delivered (${last})`,
    );
  }

  /** Payloads not yet delivered or dropped. */
  get pending(): number {
    return this.#pending;
  }

  /** Waits for queued deliveries, at most `timeoutMs`; then stops retrying. */
  async flush(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.#queue,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    this.#stop.abort();
    await this.#queue;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}
