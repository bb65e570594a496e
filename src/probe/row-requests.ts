/**
 * The one request of an `--all-models` row, per kind, and how its answer is judged: the cheapest request of the
 * kind (a few output tokens, one image, the shortest task). Text rows go to the row's API; a streamed one is
 * drained with `strictEnd` and judged by its API's stream grammar (stream-grammar.ts).
 */
import type { GatewayClient } from '../client/gateway-client.js';
import { PROBE_MAX_TOKENS } from '../contract/model-kinds.js';
import { tokensOf } from '../contract/usage.js';
import type { PlannedRow } from './all-models.js';
import { CHECKS, fail as bad, pass as ok, type Check, type CheckContext } from './checks.js';
import type { CheckOutcome, CreatedKind } from './runner.js';
import { judgeStream, type TextApi } from './stream-grammar.js';
import * as chatApi from '../client/resources/chat.js';
import * as responsesApi from '../client/resources/responses.js';
import * as messagesApi from '../client/resources/messages.js';
import * as embeddingsApi from '../client/resources/embeddings.js';
import * as imagesApi from '../client/resources/images.js';
import * as alphaApi from '../client/resources/alpha.js';
import * as betaApi from '../client/resources/beta-tasks.js';

/** What a row's request needs besides the row and its client. */
export interface RowContext {
  client: GatewayClient;
  signal: AbortSignal;
  now: () => number;
  /** A public https image (image edits and alpha's first frame). */
  probeImage: string | undefined;
  taskTimeoutMs: number;
  videoPoll: { initialMs: number; maxMs: number };
  /** The checklist's context, for the video row (it runs the checklist's video check). */
  checkContext: () => CheckContext;
  onCreated?(kind: CreatedKind, id: string, model: string, requestId: string | undefined): void;
}

const PROMPT = 'Reply with the single word: ok';

function rec(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};
}

/** The usage of an answer in the outcome's data (spend is priced from it, never from a tokenizer). */
function withUsage(usage: unknown, extra: Partial<CheckOutcome> = {}): Partial<CheckOutcome> {
  if (usage === null || typeof usage !== 'object') return extra;
  return { ...extra, data: { ...extra.data, usage } };
}

function maxTokens(row: PlannedRow): number {
  return row.info?.reasoning === true ? PROBE_MAX_TOKENS.reasoning : PROBE_MAX_TOKENS.plain;
}

const responsesInput = [{ role: 'user', content: [{ type: 'input_text', text: PROMPT }] }];

/** A row's request: the path it is sent to and its body (what `--prices` bounds for `--budget`). */
export interface RowRequest {
  url: string;
  body: Record<string, unknown>;
}

/** The request of a text, embeddings or image row; undefined for a task row (its check builds its own). */
export function rowRequest(row: PlannedRow, probeImage?: string): RowRequest | undefined {
  const model = row.model;
  const messages = [{ role: 'user', content: PROMPT }];
  switch (row.api) {
    case 'chat':
      return { url: '/v1/chat/completions', body: { model, messages, max_tokens: maxTokens(row) } };
    case 'responses':
      return {
        url: '/v1/responses',
        body: { model, input: responsesInput, max_output_tokens: maxTokens(row) },
      };
    case 'messages':
      return { url: '/v1/messages', body: { model, max_tokens: maxTokens(row), messages } };
  }
  const image = { model, prompt: 'gw probe: a small blue square', n: 1, response_format: 'url' };
  switch (row.kind) {
    case 'embeddings':
      return { url: '/v1/embeddings', body: { model, input: ['gw probe'] } };
    case 'image':
      return { url: '/v1/images/generations', body: image };
    case 'image-edit':
      return { url: '/v1/images/edits', body: { ...image, images: [{ image_url: probeImage }] } };
    default:
      return undefined;
  }
}

/** The body of a row that has one (text, embeddings, image). */
function bodyOf(row: PlannedRow, probeImage?: string): never {
  return (rowRequest(row, probeImage) as RowRequest).body as never;
}

/** A streamed text row: the stream is drained to its end and judged by its API's grammar. */
async function streamRow(row: PlannedRow, textApi: TextApi, c: RowContext): Promise<CheckOutcome> {
  const body = bodyOf(row);
  const s = { signal: c.signal, strictEnd: true };
  const t0 = c.now();
  const stream =
    textApi === 'chat'
      ? await chatApi.stream(c.client, body, s)
      : textApi === 'responses'
        ? await responsesApi.stream(c.client, body, s)
        : await messagesApi.stream(c.client, body, s);
  const j = await judgeStream(textApi, stream.events as AsyncIterable<unknown>, c.now, t0);
  const at = withUsage(j.usage, { requestId: stream.requestId, ttftMs: j.ttftMs, stream: j.timing });
  if (j.problem !== undefined) {
    const { code, reason } = j.problem;
    return bad(`stream grammar: ${reason}`, { ...at, error: { code, message: reason } });
  }
  return ok(`${j.events} events, first token at ${Math.round(j.ttftMs ?? 0)}ms`, at);
}

/** A non-streamed text row on its API. */
async function textRow(row: PlannedRow, textApi: TextApi, c: RowContext): Promise<CheckOutcome> {
  const body = bodyOf(row);
  const s = { signal: c.signal };
  if (textApi === 'chat') {
    const res = await chatApi.create(c.client, body, s);
    const choice = rec(res.data.choices[0]);
    const msg = rec(choice.message);
    const text = [msg.content, msg.reasoning_content].filter((t) => typeof t === 'string').join('');
    const at = withUsage(res.data.usage, { requestId: res.requestId });
    if (text === '' && choice.finish_reason !== 'length') return bad('no assistant text in choices[0]', at);
    const out = tokensOf(res.data.usage).output ?? '?';
    return ok(`${JSON.stringify(text.slice(0, 20))} (${out} out tokens)`, at);
  }
  if (textApi === 'responses') {
    const res = await responsesApi.create(c.client, body, s);
    const text = responsesApi.outputText(res.data);
    const status = rec(res.data).status;
    const at = withUsage(rec(res.data).usage, { requestId: res.requestId });
    if (text === '' && status !== 'incomplete') return bad('the answer carries no output text', at);
    return ok(`${JSON.stringify(text.slice(0, 20))}${status === 'incomplete' ? ' (incomplete)' : ''}`, at);
  }
  const res = await messagesApi.create(c.client, body, s);
  const text = messagesApi.text(res.data);
  const at = withUsage(rec(res.data).usage, { requestId: res.requestId });
  if (text === '' && rec(res.data).stop_reason !== 'max_tokens') return bad('no text block', at);
  return ok(JSON.stringify(text.slice(0, 20)), at);
}

async function embeddingsRow(row: PlannedRow, c: RowContext): Promise<CheckOutcome> {
  const res = await embeddingsApi.create(c.client, bodyOf(row), { signal: c.signal });
  const v = embeddingsApi.vectors(res.data);
  const at = withUsage(rec(res.data).usage, { requestId: res.requestId });
  if (v.length === 0 || v[0]?.length === 0) return bad('no vector in data[]', at);
  return ok(`1 vector of ${v[0]?.length ?? 0} dims`, at);
}

async function imageRow(row: PlannedRow, c: RowContext): Promise<CheckOutcome> {
  const body = bodyOf(row, c.probeImage);
  const s = { signal: c.signal };
  const res =
    row.kind === 'image'
      ? await imagesApi.generate(c.client, body, s)
      : await imagesApi.edit(c.client, body, s);
  const n = Array.isArray(res.data.data) ? res.data.data.length : 0;
  const at = { requestId: res.requestId, data: { images: n } };
  if (n === 0) return bad('no image in data[] (an edit model and a public input URL are needed)', at);
  return ok(`${n} image`, at);
}

async function alphaRow(row: PlannedRow, c: RowContext): Promise<CheckOutcome> {
  const res = await alphaApi.image2video(
    c.client,
    { model_name: row.model, image: c.probeImage, prompt: 'gw probe', mode: 'std', duration: '5' },
    { signal: c.signal },
  );
  const id = res.data.data.task_id;
  const requestId = res.data.request_id ?? res.requestId;
  c.onCreated?.('alpha', id, row.model, requestId);
  return ok(`task ${id} ${res.data.data.task_status} (the documents show no query endpoint: not followed)`, {
    requestId,
    data: { taskId: id },
  });
}

async function betaRow(row: PlannedRow, c: RowContext): Promise<CheckOutcome> {
  const created = await betaApi.create(
    c.client,
    {
      model: row.model,
      content: [{ type: 'text', text: 'gw probe: a slow pan over a calm sea' }],
      resolution: '480p',
      duration: 4,
      generate_audio: false,
    },
    { signal: c.signal },
  );
  const id = created.data.id;
  c.onCreated?.('beta-task', id, row.model, created.requestId);
  const done = await betaApi.wait(c.client, id, {
    signal: c.signal,
    timeoutMs: c.taskTimeoutMs,
    initialMs: c.videoPoll.initialMs,
    maxMs: c.videoPoll.maxMs,
  });
  const at = { requestId: created.requestId, data: { taskId: id, state: done.status } };
  return done.status === 'succeeded' ? ok(`${id} succeeded`, at) : bad(`${id} ended ${done.status}`, at);
}

/** Sends one row's request and judges the answer. */
export function sendRow(row: PlannedRow, c: RowContext): Promise<CheckOutcome> {
  if (row.api !== undefined) return row.stream ? streamRow(row, row.api, c) : textRow(row, row.api, c);
  switch (row.kind) {
    case 'embeddings':
      return embeddingsRow(row, c);
    case 'image':
    case 'image-edit':
      return imageRow(row, c);
    case 'video':
      return (CHECKS.find((x) => x.id === 'video') as Check).run(c.checkContext());
    case 'alpha':
      return alphaRow(row, c);
    case 'beta':
      return betaRow(row, c);
    default:
      return Promise.resolve(bad(`no probe for kind ${String(row.kind)}`));
  }
}
