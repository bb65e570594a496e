/**
 * The trace of `gw load --replay`: one request per JSONL line, `{"t_ms", "api", "model", "body"?, "input_words"?,
 * "max_tokens"?, "session"?}`, in time order. A line is read into a `TraceItem`: its time, its api and the body to
 * send (given whole, or synthesised from `input_words`/`max_tokens` as `gw load` builds its own), checked against
 * the contract (unless the client does not validate). Every refusal is a UsageError naming the line and the field.
 */
import * as z from 'zod';
import { estimateRequest, type Currency } from '../contract/estimate.js';
import {
  chatCreateParamsSchema,
  embeddingCreateParamsSchema,
  imageGenerateParamsSchema,
  messageCreateParamsSchema,
  responseCreateParamsSchema,
} from '../contract/text.js';
import { check, formatPath } from '../contract/validate.js';
import { minVideoSecondsFor, videoCreateSchema } from '../contract/video.js';
import { UsageError } from '../core/errors.js';
import { DEFAULTS } from './plan.js';
import { buildBody, generatedPrompts, type TextApi } from './workload.js';

/** The apis a trace line may name. */
export const TRACE_APIS = ['chat', 'responses', 'messages', 'embeddings', 'images', 'video'] as const;
export type TraceApi = (typeof TRACE_APIS)[number];

/** Longest session name (a conversation id). */
const MAX_SESSION = 256;

/** One line as written (the schema gw's importers write to, and the replay reads). */
export const traceLineSchema = z.strictObject({
  t_ms: z.number({ error: 'must be a number of milliseconds' }).nonnegative('must be 0 or more'),
  api: z.enum(TRACE_APIS, { error: `must be one of ${TRACE_APIS.join(', ')}` }),
  model: z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty'),
  body: z.record(z.string(), z.unknown(), { error: 'must be a JSON object (the request body)' }).optional(),
  input_words: z.int('must be an integer').min(1).max(100_000).optional(),
  max_tokens: z.int('must be an integer').min(1).max(10_000_000).optional(),
  session: z
    .union([z.string().min(1).max(MAX_SESSION), z.int()], {
      error: `must be a string (1 to ${MAX_SESSION} characters) or an integer`,
    })
    .optional(),
});
export type TraceLine = z.input<typeof traceLineSchema>;

/** A line ready to send. */
export interface TraceItem {
  lineNo: number;
  /** Scheduled time in the trace (ms from its start, before --speed). */
  tMs: number;
  api: TraceApi;
  model: string;
  session: string | undefined;
  stream: boolean;
  /** The serialised body (text apis and images), or the video create body. */
  body: Buffer | Record<string, unknown>;
}

/** How bodies are synthesised where a line gives none. */
export interface TraceDefaults {
  /** Stream the answers of synthesised chat/responses/messages bodies (a given body says for itself). */
  stream: boolean;
  maxTokens: number;
  /** Check each body against the contract (the client validates). */
  validate: boolean;
}

const SCHEMAS: Record<Exclude<TraceApi, 'video'>, z.ZodType> = {
  chat: chatCreateParamsSchema,
  responses: responseCreateParamsSchema,
  messages: messageCreateParamsSchema,
  embeddings: embeddingCreateParamsSchema,
  images: imageGenerateParamsSchema,
};

/** Synthesised prompt texts by word count (a few variants each, so no cache answers them all); bounded. */
const promptCache = new Map<string, string>();
const PROMPT_VARIANTS = 8;

function promptText(words: number, lineNo: number): string {
  const k = lineNo % PROMPT_VARIANTS;
  const key = `${words}:${k}`;
  let text = promptCache.get(key);
  if (text === undefined) {
    text = (generatedPrompts(words, k + 1)[k] as { text: string }).text;
    if (promptCache.size >= 1024) promptCache.clear();
    promptCache.set(key, text);
  }
  return text;
}

/** Refuses line `lineNo`'s `field` with `rule` (exit 2). */
export function lineError(path: string, lineNo: number, field: string, rule: string): UsageError {
  return new UsageError(`--replay: ${path} line ${lineNo}: ${field}: ${rule}`, { field: '--replay' });
}

function synthesised(line: z.output<typeof traceLineSchema>, lineNo: number, d: TraceDefaults) {
  const text = promptText(line.input_words ?? DEFAULTS.promptWords, lineNo);
  const maxTokens = line.max_tokens ?? d.maxTokens;
  if (line.api === 'video')
    return { model: line.model, prompt: text, seconds: minVideoSecondsFor(line.model) };
  if (line.api === 'images') return { model: line.model, prompt: text, n: 1 };
  const stream = line.api !== 'embeddings' && d.stream;
  return buildBody(line.api, { text, maxTokens }, { model: line.model, stream, maxTokens, prompts: [] });
}

/**
 * Reads one line of a trace (its text, 1-based number) into the item to send. `path` names the file in errors.
 * Refused: text that is not JSON, a field that breaks the line's schema or the contract's rules for the body.
 */
export function readTraceLine(text: string, lineNo: number, path: string, d: TraceDefaults): TraceItem {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw lineError(path, lineNo, '(the line)', 'is not JSON');
  }
  const r = traceLineSchema.safeParse(v);
  if (!r.success) {
    const issue = r.error.issues[0];
    const field = issue !== undefined && issue.path.length > 0 ? formatPath(issue.path) : '(the line)';
    throw lineError(path, lineNo, field, issue?.message ?? 'is invalid');
  }
  const line = r.data;
  if (line.body !== undefined) {
    for (const f of ['input_words', 'max_tokens'] as const) {
      if (line[f] !== undefined) throw lineError(path, lineNo, f, 'does not apply when body is given whole');
    }
    const named = line.body.model;
    if (named !== undefined && named !== line.model)
      throw lineError(
        path,
        lineNo,
        'body.model',
        `is ${JSON.stringify(named)}, not the line's model "${line.model}"`,
      );
  }
  if (line.api === 'embeddings' && line.max_tokens !== undefined)
    throw lineError(path, lineNo, 'max_tokens', 'does not apply to embeddings');
  const body = line.body !== undefined ? { ...line.body, model: line.model } : synthesised(line, lineNo, d);
  if (d.validate) {
    const c = check(line.api === 'video' ? videoCreateSchema : SCHEMAS[line.api], body);
    if (!c.ok) throw lineError(path, lineNo, `body.${c.violation.field}`, c.violation.message);
  }
  const session = line.session !== undefined ? String(line.session) : undefined;
  const stream = (body as { stream?: unknown }).stream === true;
  const item = { lineNo, tMs: line.t_ms, api: line.api, model: line.model, session, stream };
  if (line.api === 'video') return { ...item, body };
  return { ...item, body: Buffer.from(JSON.stringify(body)) };
}

/** The list price of a video line (CNY), or why it has none. */
export function videoPrice(
  item: TraceItem,
): { ok: true; currency: Currency; amount: number } | { ok: false; reason: string } {
  const est = estimateRequest('/v1/videos', item.body);
  return est.priced
    ? { ok: true, currency: est.currency, amount: est.amount }
    : { ok: false, reason: est.reason };
}

/** FNV-1a (32 bits) of a session name: the same shard for every turn, on every machine. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * The shard (1..n) a line belongs to: every turn of a session on one shard (by a hash of its name), a line
 * without a session by its index among the trace's lines (0-based: index mod n, plus one).
 */
export function traceShard(session: string | undefined, index: number, n: number): number {
  if (n <= 1) return 1;
  return (session !== undefined ? fnv1a(session) % n : index % n) + 1;
}

/** The text apis (what `exchange` parses streams of). */
export function isTextApi(api: TraceApi): api is TextApi {
  return api !== 'video' && api !== 'images';
}
