/**
 * The acceptance checklist of common.md §4 rule 5 as data: what each check sends and what passes.
 * Checks are independent of each other; the runner runs them concurrently and adds the shared rules
 * (request id on every answer, buffered-stream warning, latency). The client code the checks call is imported
 * with this module, before any check's clock starts: a latency is the gateway's, never gw's module loading.
 */
import type { Exchange, GatewayClient } from '../client/gateway-client.js';
import { GatewayError } from '../client/errors.js';
import { formatDuration } from '../core/duration.js';
import {
  isVideoSuccess,
  isVideoTerminal,
  minVideoSecondsFor,
  videoError,
  videoListPrice,
} from '../contract/video.js';
import type { CheckOutcome, ProbePlan, StreamTiming } from './runner.js';
import { isTimeout } from '../core/error-map.js';
import { tokensOf } from '../contract/usage.js';
import * as chat from '../client/resources/chat.js';
import * as embeddings from '../client/resources/embeddings.js';
import * as messages from '../client/resources/messages.js';
import * as models from '../client/resources/models.js';
import * as responses from '../client/resources/responses.js';
import * as videos from '../client/resources/videos.js';

/** What a check gets from the runner. */
export interface CheckContext {
  plan: ProbePlan;
  signal: AbortSignal;
  videoTimeoutMs: number;
  videoPoll: { initialMs: number; maxMs: number };
  /** Monotonic milliseconds. */
  now(): number;
  /** A client whose every exchange is recorded for this check; `validate: false` sends rule-breaking bodies. */
  client(o?: { validate?: boolean }): Promise<GatewayClient>;
  /** The exchanges this check made so far (with the X-Gateway-Request-Id each answer carried). */
  exchanges(): readonly Exchange[];
  /** A note on stderr (e.g. the video's list price before creating it). */
  note(text: string): void;
  /** Live progress text for this check's line. */
  update(text: string): void;
  /** A billable task was created (the command journals it before anything else happens). */
  created(kind: 'video', id: string, model: string, requestId: string | undefined): void;
}

/** Model roles of the plan a check needs. */
export type ModelRole = Exclude<keyof ProbePlan, 'models'>;

/** The gateway route family a check calls (an in-process simulator registers the text family on first need). */
export type CheckFamily = 'models' | 'text' | 'video';

/** One check of the checklist. */
export interface Check {
  id: string;
  title: string;
  /** Only with `--extended` (or when named by `--only`). */
  extended?: boolean;
  /** The planned model it uses (the `models` check then expects it to be listed). */
  needs?: ModelRole;
  /** The route family it calls. */
  family?: CheckFamily;
  /** Takes far longer than the others (a task to a terminal state): started first, see runner.runChecklist. */
  slow?: boolean;
  run(ctx: CheckContext): Promise<CheckOutcome>;
}

/** A short prompt: the probe wants a cheap, quick answer. */
const PROMPT = 'Reply with the single word: ok';
const VIDEO_PROMPT = 'gw probe: a slow pan over a calm sea at dawn';
/** A model name no gateway lists (the extended checks expect model_not_found for it). */
export const UNKNOWN_MODEL = 'gw-probe-no-such-model';

/** A passing (or failing) outcome with its detail; also the rows of --all-models (row-requests.ts). */
export const pass = (detail: string, extra: Partial<CheckOutcome> = {}): CheckOutcome => ({
  status: 'pass',
  detail,
  ...extra,
});
export const fail = (detail: string, extra: Partial<CheckOutcome> = {}): CheckOutcome => ({
  status: 'fail',
  detail,
  ...extra,
});

function snippet(text: string, max = 24): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(one.length > max ? `${one.slice(0, max)}…` : one);
}

function rec(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};
}

/** A gateway error as the error part of an outcome. */
function gatewayFailure(e: GatewayError, prefix = ''): CheckOutcome {
  const error = { code: e.code, message: e.message, status: e.status } as CheckOutcome['error'] & object;
  if (e.requestId !== undefined) error.requestId = e.requestId;
  if (e.hint !== undefined) error.hint = e.hint;
  return fail(`${prefix}${e.code}: ${e.message}`, { error, requestId: e.requestId });
}

/** common.md §2.4: what is wrong with an error body (empty when it follows the section). */
export function errorShapeProblems(body: unknown, headerRequestId: string | undefined): string[] {
  const e = rec(rec(body).error);
  const problems: string[] = [];
  const rid = e.request_id;
  if (typeof rid !== 'string' || rid === '') problems.push('error.request_id is missing');
  else if (headerRequestId !== undefined && rid !== headerRequestId) {
    problems.push(`error.request_id ${rid} differs from the header's ${headerRequestId}`);
  }
  if (typeof e.message !== 'string') problems.push('error.message is missing');
  else if (typeof rid === 'string' && !e.message.trimEnd().endsWith(`(${rid})`)) {
    problems.push('error.message does not end with the request id in parentheses');
  }
  if (typeof e.type !== 'string') problems.push('error.type is missing');
  if (typeof e.code !== 'string') problems.push('error.code is missing');
  return problems;
}

/** Sends a request the gateway must reject with `code`, and checks the §2.4 body of the rejection. */
async function expectRejection(
  ctx: CheckContext,
  code: string,
  what: string,
  send: (client: GatewayClient) => Promise<{ requestId?: string | undefined; data?: unknown }>,
): Promise<CheckOutcome> {
  // Client validation off: the gateway's own rejection is what is tested.
  const client = await ctx.client({ validate: false });
  let accepted: { requestId?: string | undefined; data?: unknown };
  try {
    accepted = await send(client);
  } catch (e) {
    if (!(e instanceof GatewayError)) throw e;
    if (e.code !== code) return gatewayFailure(e, `expected ${code} for ${what}, got `);
    const header = ctx.exchanges().at(-1)?.requestId;
    const problems = errorShapeProblems(e.body, header);
    if (problems.length > 0) {
      return fail(
        `${e.status} ${code}, but the error body breaks the documented shape: ${problems.join('; ')}`,
        {
          requestId: e.requestId,
        },
      );
    }
    return pass(`${e.status} ${code} with a documented error body (request_id matches the header)`, {
      requestId: header ?? e.requestId,
    });
  }
  const id = rec(accepted.data).video_id ?? rec(accepted.data).id;
  return fail(`the gateway accepted ${what}${typeof id === 'string' ? ` (created ${id})` : ''}`, {
    requestId: accepted.requestId,
  });
}

const modelsCheck: Check = {
  id: 'models',
  title: 'model list (GET /v1/models)',
  family: 'models',
  async run(ctx) {
    const res = await models.list(await ctx.client(), { signal: ctx.signal });
    if (res.status !== 200) return fail(`answered ${res.status}, expected 200`, { requestId: res.requestId });
    const visible = new Set(res.data.data.map((m) => m.id));
    const missing = ctx.plan.models.filter((m) => !visible.has(m));
    if (missing.length > 0) {
      return fail(
        `not listed: ${missing.join(', ')} (${visible.size} visible); a model is invisible because of the token's permissions, the channel model configuration or the upstream account entitlement`,
        { requestId: res.requestId, data: { visible: visible.size, missing } },
      );
    }
    return pass(`${visible.size} visible; all ${ctx.plan.models.length} planned models listed`, {
      requestId: res.requestId,
      data: { visible: visible.size, planned: ctx.plan.models },
    });
  },
};

const chatCheck: Check = {
  id: 'chat',
  title: 'chat completion',
  needs: 'chatModel',
  family: 'text',
  async run(ctx) {
    const res = await chat.create(
      await ctx.client(),
      { model: ctx.plan.chatModel, messages: [{ role: 'user', content: PROMPT }], max_tokens: 16 },
      { signal: ctx.signal },
    );
    const message = rec(res.data.choices[0]?.message);
    const content = message.content;
    const { input, output } = tokensOf(res.data.usage);
    const at = { requestId: res.requestId };
    if (message.role !== 'assistant' || typeof content !== 'string' || content === '') {
      return fail('no assistant message in choices[0].message', at);
    }
    if (input === undefined || output === undefined) return fail('the answer carries no usage', at);
    return pass(`${ctx.plan.chatModel}: ${snippet(content)} (${input} in / ${output} out tokens)`, {
      ...at,
      data: { usage: res.data.usage },
    });
  },
};

const chatStreamCheck: Check = {
  id: 'chat-stream',
  title: 'streaming chat completion',
  needs: 'chatModel',
  family: 'text',
  async run(ctx) {
    const t0 = ctx.now();
    const s = await chat.stream(
      await ctx.client(),
      { model: ctx.plan.chatModel, messages: [{ role: 'user', content: PROMPT }], max_tokens: 16 },
      { signal: ctx.signal },
    );
    let chunks = 0;
    let deltas = 0;
    let first: number | undefined;
    let last = 0;
    let ttft: number | undefined;
    let finish: string | undefined;
    let text = '';
    try {
      for await (const chunk of s.events) {
        const t = ctx.now() - t0;
        chunks++;
        first ??= t;
        last = t;
        for (const choice of chunk.choices) {
          const c = rec(choice);
          const content = rec(c.delta).content;
          if (typeof content === 'string' && content.length > 0) {
            deltas++;
            ttft ??= t;
            text += content;
          }
          if (typeof c.finish_reason === 'string' && c.finish_reason !== '') finish = c.finish_reason;
        }
        ctx.update(`${chunks} chunks`);
      }
    } catch (e) {
      const at = `stream broke after ${chunks} chunks${finish === undefined ? ', before a finishing chunk' : ''}: `;
      if (e instanceof GatewayError) return gatewayFailure(e, at);
      const msg = e instanceof Error ? e.message : String(e);
      const code = (e as { code?: unknown }).code;
      return fail(`${at}${msg}`, {
        requestId: s.requestId,
        ttftMs: ttft,
        error: { code: typeof code === 'string' ? code : 'stream_error', message: msg },
      });
    }
    const stream: StreamTiming | undefined =
      first !== undefined ? { chunks, firstMs: first, lastMs: last } : undefined;
    const at = { requestId: s.requestId, ttftMs: ttft, stream };
    if (deltas === 0) return fail(`no content delta in ${chunks} chunks`, at);
    if (finish === undefined) {
      return fail(`the stream ended after ${chunks} chunks without a finishing chunk (finish_reason)`, at);
    }
    return pass(
      `${snippet(text)} in ${chunks} chunks, first token at ${Math.round(ttft ?? 0)}ms, finish_reason ${finish}`,
      at,
    );
  },
};

const responsesCheck: Check = {
  id: 'responses',
  title: 'responses call',
  needs: 'responsesModel',
  family: 'text',
  async run(ctx) {
    const res = await responses.create(
      await ctx.client(),
      {
        model: ctx.plan.responsesModel,
        input: [{ role: 'user', content: [{ type: 'input_text', text: PROMPT }] }],
      },
      { signal: ctx.signal },
    );
    const text = responses.outputText(res.data);
    if (text === '') return fail('the answer carries no output text', { requestId: res.requestId });
    return pass(`${ctx.plan.responsesModel}: ${snippet(text)}`, { requestId: res.requestId });
  },
};

const messagesCheck: Check = {
  id: 'messages',
  title: 'messages call',
  needs: 'messagesModel',
  family: 'text',
  async run(ctx) {
    const res = await messages.create(
      await ctx.client(),
      { model: ctx.plan.messagesModel, max_tokens: 16, messages: [{ role: 'user', content: PROMPT }] },
      { signal: ctx.signal },
    );
    const text = messages.text(res.data);
    if (text === '') return fail('the answer carries no text block', { requestId: res.requestId });
    return pass(`${ctx.plan.messagesModel}: ${snippet(text)}`, { requestId: res.requestId });
  },
};

const videoCheck: Check = {
  id: 'video',
  title: 'video task to a terminal state',
  needs: 'videoModel',
  family: 'video',
  slow: true,
  async run(ctx) {
    const model = ctx.plan.videoModel;
    // Cheapest settings (common.md §2.3): the minimum seconds the model allows, at 720p.
    const seconds = minVideoSecondsFor(model);
    const resolution = '720p';
    const price = videoListPrice(model, seconds, resolution);
    const priceText =
      price?.amount !== undefined
        ? `list price ${price.currency} ${price.amount.toFixed(2)}`
        : 'list price not documented for this model';
    // The price is shown before anything billable is sent.
    ctx.note(`probe: creating a ${seconds}s ${resolution} ${model} video (${priceText})`);
    const client = await ctx.client();
    const created = await videos.create(
      client,
      { model, prompt: VIDEO_PROMPT, seconds, resolution },
      { signal: ctx.signal },
    );
    const id = created.data.video_id;
    ctx.created('video', id, model, created.requestId);
    const data: Record<string, unknown> = {
      videoId: id,
      model,
      seconds,
      resolution,
      listPrice: price?.amount !== undefined ? { currency: price.currency, amount: price.amount } : null,
    };
    const at = { requestId: created.requestId, data };
    const started = ctx.now();
    let state = created.data.status;
    let record = created.data;
    if (!isVideoTerminal(state)) {
      try {
        const done = await videos.wait(client, id, {
          signal: ctx.signal,
          timeoutMs: ctx.videoTimeoutMs,
          initialMs: ctx.videoPoll.initialMs,
          maxMs: ctx.videoPoll.maxMs,
          onUpdate: (r, elapsed) => {
            state = r.status;
            ctx.update(`${id} ${state} ${formatDuration(elapsed)}`);
          },
        });
        record = done.data;
        state = record.status;
      } catch (e) {
        if (!isTimeout(e)) throw e;
        data.state = state;
        const message = `${id} still ${state} after ${formatDuration(ctx.videoTimeoutMs)} (--video-timeout)`;
        return fail(message, { ...at, error: { code: 'timeout', message } });
      }
    }
    data.state = state;
    const took = formatDuration(ctx.now() - started);
    // common.md §3: pass only on completed/success.
    if (isVideoSuccess(state)) {
      return pass(`${id} ${state} after ${took} (${seconds}s ${resolution}, ${priceText})`, at);
    }
    const err = videoError(record);
    const code = err.code ?? `video_${state}`;
    const message = err.message ?? `the video ended ${state}`;
    return fail(`${id} ended ${state} after ${took}: ${code}: ${message}`, {
      ...at,
      error: { code, message },
    });
  },
};

const modelNotFoundCheck: Check = {
  id: 'model-not-found',
  title: 'unknown model → model_not_found, documented error body',
  extended: true,
  family: 'text',
  run: (ctx) =>
    expectRejection(ctx, 'model_not_found', `the unknown model ${UNKNOWN_MODEL}`, async (client) => {
      return chat.create(
        client,
        { model: UNKNOWN_MODEL, messages: [{ role: 'user', content: PROMPT }], max_tokens: 16 },
        { signal: ctx.signal },
      );
    }),
};

const invalidDurationCheck: Check = {
  id: 'invalid-duration',
  title: 'video seconds 1 → invalid_duration',
  extended: true,
  needs: 'videoModel',
  family: 'video',
  run: (ctx) =>
    expectRejection(ctx, 'invalid_duration', 'a 1-second video', async (client) => {
      return videos.create(
        client,
        { model: ctx.plan.videoModel, prompt: VIDEO_PROMPT, seconds: 1, resolution: '720p' },
        { signal: ctx.signal },
      );
    }),
};

const invalidResolutionCheck: Check = {
  id: 'invalid-resolution',
  title: 'video resolution 4k → invalid_resolution',
  extended: true,
  needs: 'videoModel',
  family: 'video',
  run: (ctx) =>
    expectRejection(ctx, 'invalid_resolution', 'resolution 4k', async (client) => {
      const model = ctx.plan.videoModel;
      return videos.create(
        client,
        { model, prompt: VIDEO_PROMPT, seconds: minVideoSecondsFor(model), resolution: '4k' },
        { signal: ctx.signal },
      );
    }),
};

const embeddingsCheck: Check = {
  id: 'embeddings',
  title: 'embeddings: vectors and usage',
  extended: true,
  needs: 'embeddingModel',
  family: 'text',
  async run(ctx) {
    const res = await embeddings.create(
      await ctx.client(),
      { model: ctx.plan.embeddingModel, input: ['gw probe'] },
      { signal: ctx.signal },
    );
    const at = { requestId: res.requestId };
    const vectors = embeddings.vectors(res.data);
    const dims = vectors.map((v) => v.length);
    if (vectors.length === 0 || dims.some((d) => d === 0)) return fail('no vector in data[]', at);
    const tokens = tokensOf(res.data.usage).input;
    if (tokens === undefined) return fail('the answer carries no usage', at);
    return pass(`${vectors.length} vector of ${dims[0]} dims; ${tokens} tokens`, {
      ...at,
      data: { usage: res.data.usage },
    });
  },
};

/** The checklist, in report order. */
export const CHECKS: readonly Check[] = [
  modelsCheck,
  chatCheck,
  chatStreamCheck,
  responsesCheck,
  messagesCheck,
  videoCheck,
  modelNotFoundCheck,
  invalidDurationCheck,
  invalidResolutionCheck,
  embeddingsCheck,
];
