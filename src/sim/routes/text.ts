/**
 * Text routes of common.md §4: chat completions, responses, messages and embeddings, each in the public wire
 * format it mirrors (shared/reference/wire-formats.md §1–§4). Bodies are checked with the same contract schemas gw
 * uses (src/contract/text.ts); a model that is unknown, not visible to the token, or of another kind answers
 * `model_not_found` (404, common.md §7). Replies are deterministic, derived from the prompt; triggers in the prompt
 * (`[sim:utf8]`, `[sim:error]`, `[sim:cache]`) are described in docs/simulator.md "Triggers".
 */
import type { z } from 'zod';
import { ALL_MODELS, CHAT_MODELS, EMBEDDING_MODELS } from '../../contract/catalog.js';
import {
  chatCreateParamsSchema,
  embeddingCreateParamsSchema,
  messageCreateParamsSchema,
  responseCreateParamsSchema,
} from '../../contract/text.js';
import { check } from '../../contract/validate.js';
import type { SimReply, SimRequest, SseOut } from '../http.js';
import type { Sim } from '../server.js';

/** The multi-byte reply of the `[sim:utf8]` trigger (2-, 3- and 4-byte UTF-8 characters). */
export const UTF8_REPLY = 'héllo 世界 🦊';

/** Triggers recognised in the prompt (docs/simulator.md "Triggers"). */
export const TRIGGERS = { utf8: '[sim:utf8]', error: '[sim:error]', cache: '[sim:cache]' } as const;

/** The deterministic reply to a prompt: an echo, or the multi-byte text of the `[sim:utf8]` trigger. */
export function replyText(prompt: string, images = 0): string {
  if (prompt.includes(TRIGGERS.utf8)) return UTF8_REPLY;
  const p = prompt.replace(/\s+/g, ' ').trim();
  const shown = p.length > 200 ? `${p.slice(0, 200)}…` : p;
  const seen = images > 0 ? ` (${images} image${images > 1 ? 's' : ''} seen)` : '';
  return `Simulated reply to: ${shown}${seen}`;
}

/** Splits a reply into stream pieces (one word plus its trailing space each); a piece counts as one token. */
export function pieces(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [text];
}

/** Rough input token count (4 characters per token, at least 1). */
export function tokenCount(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/**
 * Checks a body against a contract schema; on a violation answers 400 in the common §2.4 shape naming the field
 * and the rule, and returns undefined.
 */
export function validBody<T>(schema: z.ZodType<T>, req: SimRequest, reply: SimReply): T | undefined {
  if (req.body === null || typeof req.body !== 'object' || Array.isArray(req.body)) {
    reply.error(400, 'invalid_request', 'body: must be a JSON object', 'common', {
      param: 'body',
    });
    return undefined;
  }
  const r = check(schema, req.body);
  if (r.ok) return r.value;
  reply.error(
    400,
    r.violation.code ?? 'invalid_request',
    `${r.violation.field}: ${r.violation.message}`,
    'common',
    { param: r.violation.field },
  );
  return undefined;
}

/** True when an extra model of this kind (config `extraModels`) serves the route `what`. */
function extraServes(kind: string | undefined, what: string): boolean {
  if (kind === undefined) return false;
  const served: Record<string, string[]> = {
    chat: ['/v1/chat/completions', '/v1/responses', '/v1/messages'],
    responses: ['/v1/responses'],
    messages: ['/v1/messages'],
    embeddings: ['/v1/embeddings'],
    image: ['/v1/images/generations'],
    'image-edit': ['/v1/images/edits'],
  };
  return served[kind]?.includes(what) === true;
}

/** Answers `model_not_found` (404) unless the model is of this family and visible to the token. */
export function modelAllowed(
  req: SimRequest,
  reply: SimReply,
  model: string,
  family: readonly string[],
  what: string,
): boolean {
  if ((family.includes(model) || extraServes(req.extraKind?.(model), what)) && req.canSee(model)) return true;
  const why =
    ALL_MODELS.includes(model) && req.canSee(model)
      ? `does not serve ${what}`
      : 'does not exist or is not visible to this token';
  reply.error(404, 'model_not_found', `The model \`${model}\` ${why}`, 'common', { param: 'model' });
  return false;
}

/** The mid-stream / upstream failure of the `[sim:error]` trigger. */
function upstreamError(req: SimRequest): { code: string; message: string } {
  return {
    code: 'upstream_error',
    message: `the upstream stream failed (simulated by ${TRIGGERS.error}) (${req.requestId})`,
  };
}

interface Plan {
  /** Output pieces (one token each). */
  out: string[];
  /** True when max tokens cut the answer. */
  cut: boolean;
  promptTokens: number;
  cached: number;
  cacheWritten: number;
  utf8: boolean;
  error: boolean;
}

function plan(prompt: string, images: number, maxTokens: unknown, chunks?: number): Plan {
  const all = pieces(replyText(prompt, images));
  let out = all;
  if (chunks !== undefined && chunks > 0) {
    out = [];
    for (let i = 0; i < chunks; i++) out.push(all[i % all.length] as string);
  }
  const limit = typeof maxTokens === 'number' && Number.isInteger(maxTokens) ? maxTokens : Infinity;
  const cut = out.length > limit;
  if (cut) out = out.slice(0, limit);
  const promptTokens = tokenCount(prompt) + 8 + images * 85;
  const cache = prompt.includes(TRIGGERS.cache);
  return {
    out,
    cut,
    promptTokens,
    cached: cache ? Math.floor(promptTokens / 2) : 0,
    cacheWritten: cache ? Math.ceil(promptTokens / 4) : 0,
    utf8: prompt.includes(TRIGGERS.utf8),
    error: prompt.includes(TRIGGERS.error),
  };
}

function seconds(sim: Sim): number {
  return Math.floor(sim.now() / 1000);
}

// ---------------------------------------------------------------------------------------------------------------
// chat completions (wire-formats.md §1)

function chatPrompt(messages: ReadonlyArray<{ role: string; content: unknown }>): {
  prompt: string;
  images: number;
} {
  let images = 0;
  let prompt = '';
  for (const m of messages) {
    const parts =
      typeof m.content === 'string'
        ? [{ type: 'text', text: m.content }]
        : (m.content as Array<{ type: string; text?: unknown }>);
    const texts: string[] = [];
    for (const p of parts) {
      if (p.type === 'image_url') images++;
      else if (typeof p.text === 'string') texts.push(p.text);
    }
    if (m.role === 'user') prompt = texts.join(' ');
  }
  return { prompt, images };
}

function chatUsage(p: Plan): Record<string, unknown> {
  return {
    prompt_tokens: p.promptTokens,
    completion_tokens: p.out.length,
    total_tokens: p.promptTokens + p.out.length,
    prompt_tokens_details: { cached_tokens: p.cached, cache_creation_input_tokens: p.cacheWritten },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}

function* chatFrames(
  req: SimRequest,
  p: Plan,
  head: { id: string; created: number; model: string },
  includeUsage: boolean,
): Generator<SseOut> {
  const prefix = `{"id":${JSON.stringify(head.id)},"object":"chat.completion.chunk","created":${head.created},"model":${JSON.stringify(head.model)},"choices":`;
  const tail = includeUsage ? ',"usage":null}' : '}';
  const chunk = (delta: string, finish: string | null): SseOut => ({
    data: `${prefix}[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish === null ? 'null' : JSON.stringify(finish)}}]${tail}`,
  });
  yield chunk('{"role":"assistant","content":""}', null);
  let i = 0;
  for (const piece of p.out) {
    if (p.error && i === 2) break;
    const c = chunk(`{"content":${JSON.stringify(piece)}}`, null);
    if (p.utf8) c.splitUtf8 = true;
    yield c;
    i++;
  }
  if (p.error) {
    const e = upstreamError(req);
    yield {
      data: JSON.stringify({
        error: {
          message: e.message,
          type: 'server_error',
          code: e.code,
          param: null,
          request_id: req.requestId,
        },
      }),
    };
    return;
  }
  yield chunk('{}', p.cut ? 'length' : 'stop');
  if (includeUsage) {
    yield {
      data: JSON.stringify({
        id: head.id,
        object: 'chat.completion.chunk',
        created: head.created,
        model: head.model,
        choices: [],
        usage: chatUsage(p),
      }),
    };
  }
  yield { data: '[DONE]' };
}

function registerChat(sim: Sim): void {
  sim.router.add('POST', '/v1/chat/completions', async (req, reply, signal) => {
    const body = validBody(chatCreateParamsSchema, req, reply);
    if (body === undefined) return;
    if (!modelAllowed(req, reply, body.model, CHAT_MODELS, '/v1/chat/completions')) return;
    const { prompt, images } = chatPrompt(body.messages);
    const p = plan(
      prompt,
      images,
      body.max_tokens,
      body.stream === true ? sim.config.streamChunks : undefined,
    );
    const head = { id: sim.id('chatcmpl-'), created: seconds(sim), model: body.model };
    if (body.stream === true) {
      const opts = body.stream_options as { include_usage?: unknown } | undefined;
      await reply.sse(chatFrames(req, p, head, opts?.include_usage === true), signal, {
        coalesceBytes: 16_384,
      });
      return;
    }
    if (p.error) {
      const e = upstreamError(req);
      reply.error(502, e.code, e.message.replace(` (${req.requestId})`, ''), 'common', {
        type: 'server_error',
      });
      return;
    }
    reply.json(200, {
      id: head.id,
      object: 'chat.completion',
      created: head.created,
      model: head.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: p.out.join(''), refusal: null, annotations: [] },
          logprobs: null,
          finish_reason: p.cut ? 'length' : 'stop',
        },
      ],
      usage: chatUsage(p),
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// responses (wire-formats.md §2)

function responsesUsage(p: Plan): Record<string, unknown> {
  return {
    input_tokens: p.promptTokens,
    input_tokens_details: { cached_tokens: p.cached, cache_write_tokens: p.cacheWritten },
    output_tokens: p.out.length,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: p.promptTokens + p.out.length,
  };
}

function registerResponses(sim: Sim): void {
  sim.router.add('POST', '/v1/responses', async (req, reply, signal) => {
    const body = validBody(responseCreateParamsSchema, req, reply);
    if (body === undefined) return;
    if (!modelAllowed(req, reply, body.model, CHAT_MODELS, '/v1/responses')) return;
    let prompt = '';
    for (const item of body.input) {
      if (item.role === 'user') prompt = item.content.map((c) => c.text).join(' ');
    }
    const p = plan(prompt, 0, body.max_output_tokens);
    const id = sim.id('resp_');
    const msgId = sim.id('msg_');
    const created = seconds(sim);
    const text = p.out.join('');
    const base = (status: string, output: unknown[], usage: unknown): Record<string, unknown> => ({
      id,
      object: 'response',
      created_at: created,
      status,
      ...(status === 'completed' ? { completed_at: seconds(sim) } : {}),
      model: body.model,
      output,
      error: null,
      incomplete_details: p.cut && status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
      instructions: body.instructions ?? null,
      max_output_tokens: body.max_output_tokens ?? null,
      metadata: {},
      parallel_tool_calls: true,
      temperature: 1,
      top_p: 1,
      tool_choice: 'auto',
      tools: [],
      usage,
    });
    const part = { type: 'output_text', text, annotations: [], logprobs: [] };
    const finalStatus = p.cut ? 'incomplete' : 'completed';
    const item = (status: string, content: unknown[]): Record<string, unknown> => ({
      id: msgId,
      type: 'message',
      status,
      role: 'assistant',
      content,
    });
    if (body.stream !== true) {
      if (p.error) {
        const e = upstreamError(req);
        reply.error(502, e.code, e.message.replace(` (${req.requestId})`, ''), 'common', {
          type: 'server_error',
        });
        return;
      }
      reply.json(200, base(finalStatus, [item(finalStatus, [part])], responsesUsage(p)));
      return;
    }
    let seq = 0;
    const ev = (type: string, fields: Record<string, unknown>, utf8 = false): SseOut => {
      const out: SseOut = { event: type, data: JSON.stringify({ type, sequence_number: seq++, ...fields }) };
      if (utf8) out.splitUtf8 = true;
      return out;
    };
    function* frames(): Generator<SseOut> {
      yield ev('response.created', { response: base('in_progress', [], null) });
      yield ev('response.in_progress', { response: base('in_progress', [], null) });
      yield ev('response.output_item.added', { output_index: 0, item: item('in_progress', []) });
      const loc = { item_id: msgId, output_index: 0, content_index: 0 };
      yield ev('response.content_part.added', {
        ...loc,
        part: { type: 'output_text', text: '', annotations: [] },
      });
      let i = 0;
      for (const piece of p.out) {
        if (p.error && i === 2) {
          const e = upstreamError(req);
          yield ev('error', { code: e.code, message: e.message, param: null });
          return;
        }
        yield ev('response.output_text.delta', { ...loc, delta: piece, logprobs: [] }, p.utf8);
        i++;
      }
      if (p.error) {
        const e = upstreamError(req);
        yield ev('error', { code: e.code, message: e.message, param: null });
        return;
      }
      yield ev('response.output_text.done', { ...loc, text, logprobs: [] });
      yield ev('response.content_part.done', { ...loc, part });
      yield ev('response.output_item.done', { output_index: 0, item: item(finalStatus, [part]) });
      yield ev(`response.${finalStatus}`, {
        response: base(finalStatus, [item(finalStatus, [part])], responsesUsage(p)),
      });
    }
    await reply.sse(frames(), signal, { coalesceBytes: 16_384 });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// messages (wire-formats.md §3)

function messagesUsage(p: Plan, output: number): Record<string, unknown> {
  return {
    input_tokens: p.promptTokens,
    output_tokens: output,
    cache_creation_input_tokens: p.cacheWritten,
    cache_read_input_tokens: p.cached,
  };
}

/** The text of the last user message (its text blocks joined), which the simulated answer echoes. */
function lastUserText(messages: ReadonlyArray<{ role: string; content: unknown }>): string {
  let prompt = '';
  for (const m of messages) {
    if (m.role !== 'user') continue;
    prompt =
      typeof m.content === 'string'
        ? m.content
        : (m.content as Array<{ type?: unknown; text?: unknown }>)
            .map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : ''))
            .filter((t) => t.length > 0)
            .join(' ');
  }
  return prompt;
}

/** One messages answer, as both the JSON body and the event stream tell it. */
interface MessageAnswer {
  id: string;
  model: string;
  p: Plan;
  /** The thinking block's text and signature, when thinking was asked for. */
  thinking: { thought: string; signature: string } | undefined;
  stop: string;
}

function sseEvent(type: string, fields: Record<string, unknown> = {}, utf8 = false): SseOut {
  const out: SseOut = { event: type, data: JSON.stringify({ type, ...fields }) };
  if (utf8) out.splitUtf8 = true;
  return out;
}

/** The event stream of a messages answer (wire-formats.md §3), cut by an error event when the plan says so. */
function* messageFrames(a: MessageAnswer, req: SimRequest): Generator<SseOut> {
  const { p } = a;
  const message = { id: a.id, type: 'message', role: 'assistant', model: a.model, content: [] };
  yield sseEvent('message_start', {
    message: { ...message, stop_reason: null, stop_sequence: null, usage: messagesUsage(p, 1) },
  });
  let index = 0;
  if (a.thinking !== undefined) {
    const { thought, signature } = a.thinking;
    yield sseEvent('content_block_start', {
      index,
      content_block: { type: 'thinking', thinking: '', signature: '' },
    });
    yield sseEvent('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: thought } });
    yield sseEvent('content_block_delta', { index, delta: { type: 'signature_delta', signature } });
    yield sseEvent('content_block_stop', { index });
    index++;
  }
  yield sseEvent('content_block_start', { index, content_block: { type: 'text', text: '' } });
  yield sseEvent('ping');
  let i = 0;
  for (const piece of p.out) {
    if (p.error && i === 2) break;
    yield sseEvent('content_block_delta', { index, delta: { type: 'text_delta', text: piece } }, p.utf8);
    i++;
  }
  if (p.error) {
    const e = upstreamError(req);
    yield sseEvent('error', {
      error: { type: 'api_error', code: e.code, message: e.message },
      request_id: req.requestId,
    });
    return;
  }
  yield sseEvent('content_block_stop', { index });
  // message_delta usage is cumulative (wire-formats.md §3): the final totals.
  yield sseEvent('message_delta', {
    delta: { stop_reason: a.stop, stop_sequence: null },
    usage: messagesUsage(p, p.out.length),
  });
  yield sseEvent('message_stop');
}

function registerMessages(sim: Sim): void {
  sim.router.add('POST', '/v1/messages', async (req, reply, signal) => {
    const body = validBody(messageCreateParamsSchema, req, reply);
    if (body === undefined) return;
    if (!modelAllowed(req, reply, body.model, CHAT_MODELS, '/v1/messages')) return;
    const prompt = lastUserText(body.messages);
    const p = plan(prompt, 0, body.max_tokens);
    const thought = `Considering the request: ${prompt.replace(/\s+/g, ' ').trim().slice(0, 80)}`;
    const thinking =
      (body.thinking as { type?: unknown } | undefined)?.type === 'enabled'
        ? { thought, signature: Buffer.from(`sim:${thought}`).toString('base64') }
        : undefined;
    const a: MessageAnswer = {
      id: sim.id('msg_'),
      model: body.model,
      p,
      thinking,
      stop: p.cut ? 'max_tokens' : 'end_turn',
    };
    if (body.stream === true) {
      await reply.sse(messageFrames(a, req), signal, { coalesceBytes: 16_384 });
      return;
    }
    if (p.error) {
      const e = upstreamError(req);
      reply.error(502, e.code, e.message.replace(` (${req.requestId})`, ''), 'common', { type: 'api_error' });
      return;
    }
    const content: unknown[] = [];
    if (thinking !== undefined)
      content.push({ type: 'thinking', thinking: thinking.thought, signature: thinking.signature });
    content.push({ type: 'text', text: p.out.join('') });
    reply.json(200, {
      id: a.id,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content,
      stop_reason: a.stop,
      stop_sequence: null,
      usage: messagesUsage(p, p.out.length),
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// embeddings (wire-formats.md §4)

/** FNV-1a hash of a string (seeds the deterministic vectors). */
function fnv(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** A deterministic unit vector for `text`, rounded to float32 so float and base64 answers carry the same values. */
export function embeddingVector(text: string, dims: number): number[] {
  let a = fnv(text);
  const v: number[] = [];
  let norm = 0;
  for (let i = 0; i < dims; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const x = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
    v.push(x);
    norm += x * x;
  }
  const s = Math.sqrt(norm) || 1;
  return v.map((x) => Math.fround(x / s));
}

/** Little-endian float32 bytes of a vector, base64-encoded (`encoding_format: base64`). */
export function base64Floats(v: readonly number[]): string {
  const b = Buffer.alloc(v.length * 4);
  v.forEach((x, i) => b.writeFloatLE(x, i * 4));
  return b.toString('base64');
}

/** Dimensions of the simulated embedding model (text-embedding-v4 defaults to 1024). */
export const EMBEDDING_DIMS = 1024;

function registerEmbeddings(sim: Sim): void {
  sim.router.add('POST', '/v1/embeddings', (req, reply) => {
    const body = validBody(embeddingCreateParamsSchema, req, reply);
    if (body === undefined) return;
    if (!modelAllowed(req, reply, body.model, EMBEDDING_MODELS, '/v1/embeddings')) return;
    const d = body.dimensions;
    const dims = typeof d === 'number' && Number.isInteger(d) && d >= 1 && d <= 8192 ? d : EMBEDDING_DIMS;
    const b64 = body.encoding_format === 'base64';
    const tokens = body.input.reduce((n, s) => n + tokenCount(s), 0);
    reply.json(200, {
      object: 'list',
      data: body.input.map((s, index) => {
        const v = embeddingVector(s, dims);
        return { object: 'embedding', index, embedding: b64 ? base64Floats(v) : v };
      }),
      model: body.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  });
}

/** Registers chat, responses, messages and embeddings. */
export function registerTextRoutes(sim: Sim): void {
  registerChat(sim);
  registerResponses(sim);
  registerMessages(sim);
  registerEmbeddings(sim);
}
