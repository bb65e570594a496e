/**
 * The grammar of a text stream, per API (the public wire formats the gateway mirrors), judged while a probe drains
 * it: chat sends chunks, one with a finish_reason, the usage chunk it was asked for, then `[DONE]`; responses ends
 * with `response.completed` (or `.incomplete`) carrying usage; messages sends `message_delta` with usage, then
 * `message_stop`. Nothing may follow the terminal event, and the stream must not be cut. A broken rule is a
 * failed cell with a code and a reason, so "the stream of model X on API Y broke" is said, not guessed.
 */
import { ConnectionError, ResponseShapeError, TruncatedStreamError } from '../client/errors.js';
import type { StreamTiming } from './runner.js';

/** The text APIs a model may be probed on. */
export const TEXT_APIS = ['chat', 'responses', 'messages'] as const;
export type TextApi = (typeof TEXT_APIS)[number];

/** The terminal event of each API, as a person reads it. */
export const TERMINAL: Record<TextApi, string> = {
  chat: 'data: [DONE]',
  responses: 'response.completed',
  messages: 'message_stop',
};

/** What a drained stream showed. `problem` is set when it broke its grammar (a code and the reason). */
export interface StreamJudgement {
  events: number;
  text: string;
  ttftMs?: number;
  timing?: StreamTiming;
  /** The usage object of the final event (as the gateway sent it). */
  usage?: Record<string, unknown>;
  problem?: { code: string; reason: string };
}

function rec(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};
}

/** What one event adds: text, a finish reason, usage, the terminal state of a response. */
interface Facts {
  text: string;
  finish?: string;
  usage?: Record<string, unknown>;
  status?: string;
}

function factsOf(api: TextApi, ev: unknown): Facts {
  const e = rec(ev);
  const out: Facts = { text: '' };
  if (api === 'chat') {
    for (const choice of Array.isArray(e.choices) ? e.choices : []) {
      const c = rec(choice);
      const d = rec(c.delta);
      for (const k of ['content', 'reasoning_content']) if (typeof d[k] === 'string') out.text += d[k];
      if (typeof c.finish_reason === 'string' && c.finish_reason !== '') out.finish = c.finish_reason;
    }
    if (e.usage !== null && typeof e.usage === 'object') out.usage = rec(e.usage);
  } else if (api === 'responses') {
    if (e.type === 'response.output_text.delta' && typeof e.delta === 'string') out.text = e.delta;
    if (typeof e.type === 'string' && /^response\.(completed|incomplete|failed)$/.test(e.type)) {
      out.status = e.type.slice('response.'.length);
      const usage = rec(e.response).usage;
      if (usage !== null && typeof usage === 'object') out.usage = rec(usage);
    }
  } else {
    const delta = rec(e.delta);
    for (const k of ['text', 'thinking']) if (typeof delta[k] === 'string') out.text += delta[k];
    if (e.type === 'message_delta') {
      out.finish = typeof delta.stop_reason === 'string' ? delta.stop_reason : '';
      if (e.usage !== null && typeof e.usage === 'object') out.usage = rec(e.usage);
    }
  }
  return out;
}

/** The grammar rule the whole stream broke, once it ended at its terminal event. */
function endProblem(
  api: TextApi,
  seen: { text: string; finish?: string; usage?: Record<string, unknown>; status?: string; events: number },
): StreamJudgement['problem'] {
  if (api === 'chat' && seen.finish === undefined)
    return { code: 'stream_no_finish_reason', reason: `no chunk carried a finish_reason` };
  if (api === 'messages' && seen.finish === undefined)
    return {
      code: 'stream_no_message_delta',
      reason: 'no message_delta (stop_reason and usage) before message_stop',
    };
  if (api === 'responses' && seen.status === 'failed')
    return { code: 'stream_failed', reason: 'the terminal event is response.failed' };
  if (seen.usage === undefined) {
    const where = {
      chat: 'the last chunk',
      responses: `the ${seen.status ?? 'terminal'} event`,
      messages: 'message_delta',
    };
    return { code: 'stream_no_usage', reason: `${where[api]} carries no usage` };
  }
  if (
    seen.text === '' &&
    seen.finish !== 'length' &&
    seen.finish !== 'max_tokens' &&
    seen.status !== 'incomplete'
  )
    return { code: 'stream_no_text', reason: `no text in ${seen.events} events` };
  return undefined;
}

/** The grammar rule a thrown error says the stream broke, or undefined for an error of another kind. */
function thrownProblem(api: TextApi, e: unknown, events: number): StreamJudgement['problem'] {
  if (e instanceof TruncatedStreamError)
    return {
      code: 'stream_no_terminal',
      reason: `the stream ended after ${events} events without its terminal event (${TERMINAL[api]})`,
    };
  if (e instanceof ResponseShapeError && e.code === 'event_after_final')
    return { code: 'stream_after_terminal', reason: e.message };
  if (e instanceof ConnectionError)
    return { code: 'stream_cut', reason: `the stream was cut after ${events} events: ${e.message}` };
  return undefined;
}

/**
 * Drains a typed stream (opened with `strictEnd`, so what follows the terminal event is read too) and judges it.
 * An error event of the gateway (a GatewayError), a timeout or an abort is thrown on, as any failed request.
 */
export async function judgeStream(
  api: TextApi,
  events: AsyncIterable<unknown>,
  now: () => number,
  t0: number,
): Promise<StreamJudgement> {
  const seen: {
    text: string;
    finish?: string;
    usage?: Record<string, unknown>;
    status?: string;
    events: number;
  } = {
    text: '',
    events: 0,
  };
  let first: number | undefined;
  let last = 0;
  let ttft: number | undefined;
  const judged = (problem: StreamJudgement['problem']): StreamJudgement => ({
    events: seen.events,
    text: seen.text,
    ...(ttft !== undefined ? { ttftMs: ttft } : {}),
    ...(first !== undefined ? { timing: { chunks: seen.events, firstMs: first, lastMs: last } } : {}),
    ...(seen.usage !== undefined ? { usage: seen.usage } : {}),
    ...(problem !== undefined ? { problem } : {}),
  });
  try {
    for await (const ev of events) {
      const t = now() - t0;
      seen.events++;
      first ??= t;
      last = t;
      const f = factsOf(api, ev);
      if (f.text !== '') {
        ttft ??= t;
        seen.text += f.text;
      }
      if (f.finish !== undefined) seen.finish = f.finish;
      if (f.status !== undefined) seen.status = f.status;
      // Chat: usage belongs to the last chunk; a usage chunk followed by more chunks does not count.
      if (f.usage !== undefined) seen.usage = f.usage;
      else if (api === 'chat') delete seen.usage;
    }
  } catch (e) {
    // A gateway's error event, a timeout, an abort: not the grammar's business (thrown on as any failure).
    const problem = thrownProblem(api, e, seen.events);
    if (problem === undefined) throw e;
    return judged(problem);
  }
  return judged(endProblem(api, seen));
}
