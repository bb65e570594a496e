/**
 * What `gw load` sends: one request body per api (chat, responses, messages, embeddings) built from a prompt, with
 * usage requested in streams where the wire format allows (chat `stream_options.include_usage`; responses and
 * messages carry usage in their final events anyway). Bodies are checked once against the contract schemas before
 * the run (exit 2 on a violation, unless --no-validate). Bodies are serialised once per prompt and reused.
 */
import type { z } from 'zod';
import { UsageError } from '../core/errors.js';
import {
  chatCreateParamsSchema,
  embeddingCreateParamsSchema,
  messageCreateParamsSchema,
  responseCreateParamsSchema,
} from '../contract/text.js';
import { check } from '../contract/validate.js';

export const TEXT_APIS = ['chat', 'responses', 'messages', 'embeddings'] as const;
export type TextApi = (typeof TEXT_APIS)[number];

/** Path of each api (appended to the base URL); `images`: a replay's image generations. */
export const API_PATH: Record<TextApi | 'images', string> = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  messages: '/v1/messages',
  embeddings: '/v1/embeddings',
  images: '/v1/images/generations',
};

/** One prompt of the pool. */
export interface Prompt {
  text: string;
  /** Overrides --max-tokens for this prompt. */
  maxTokens?: number;
}

/** A ready request: its api, model, whether it streams, and the serialised body (encoded once, sent many times). */
export interface Prepared {
  /** `images`: an image generation of a replay (never streamed). */
  api: TextApi | 'images';
  model: string;
  stream: boolean;
  path: string;
  body: Buffer;
}

/** What the bodies are built from. */
export interface WorkloadOptions {
  model: string;
  stream: boolean;
  maxTokens: number;
  prompts: Prompt[];
}

const WORDS =
  'the quick brown fox jumps over a lazy dog while seven wizards quietly judge boxing matches near rivers under pale moonlight and curious otters paint silver clouds'.split(
    ' ',
  );

/** `--prompt-words n`: `count` deterministic prompts of n words each (different, so no cache answers them all). */
export function generatedPrompts(words: number, count = 64): Prompt[] {
  const out: Prompt[] = [];
  for (let k = 0; k < count; k++) {
    const w: string[] = [];
    for (let i = 0; i < words; i++) w.push(WORDS[(k * 7 + i * 13 + i * i) % WORDS.length] as string);
    out.push({ text: w.join(' ') });
  }
  return out;
}

/** Most prompt lines read from --prompts. */
const MAX_PROMPTS = 100_000;

/**
 * Parses the text of `--prompts <file.jsonl>`: one JSON value per line, either a string or
 * `{"prompt": "…", "max_tokens"?: n}`. Blank lines are skipped; a bad line is a UsageError naming its number.
 */
export function parsePrompts(text: string, path: string): Prompt[] {
  const out: Prompt[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length && out.length < MAX_PROMPTS; i++) {
    const line = (lines[i] as string).trim();
    if (line !== '') out.push(promptOf(line, `--prompts: ${path} line ${i + 1}`));
  }
  if (out.length === 0) throw new UsageError(`--prompts: ${path} holds no prompt`, { field: '--prompts' });
  return out;
}

function promptOf(line: string, where: string): Prompt {
  const bad = (rule: string): never => {
    throw new UsageError(`${where}: ${rule}`, { field: '--prompts' });
  };
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return bad('not JSON (each line is "text" or {"prompt": "text"})');
  }
  if (typeof v === 'string') return { text: v };
  if (v === null || typeof v !== 'object' || typeof (v as { prompt?: unknown }).prompt !== 'string')
    return bad('needs a string or {"prompt": "text"}');
  const o = v as { prompt: string; max_tokens?: unknown };
  if (o.max_tokens === undefined) return { text: o.prompt };
  if (typeof o.max_tokens !== 'number' || !Number.isInteger(o.max_tokens) || o.max_tokens < 1)
    return bad('max_tokens must be a positive integer');
  return { text: o.prompt, maxTokens: o.max_tokens };
}

/** The body of one request. */
export function buildBody(api: TextApi, prompt: Prompt, o: WorkloadOptions): Record<string, unknown> {
  const maxTokens = prompt.maxTokens ?? o.maxTokens;
  switch (api) {
    case 'chat':
      return {
        model: o.model,
        messages: [{ role: 'user', content: prompt.text }],
        max_tokens: maxTokens,
        ...(o.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      };
    case 'responses':
      return {
        model: o.model,
        input: [{ role: 'user', content: [{ type: 'input_text', text: prompt.text }] }],
        max_output_tokens: maxTokens,
        ...(o.stream ? { stream: true } : {}),
      };
    case 'messages':
      return {
        model: o.model,
        max_tokens: maxTokens,
        messages: [{ role: 'user', content: prompt.text }],
        ...(o.stream ? { stream: true } : {}),
      };
    case 'embeddings':
      return { model: o.model, input: [prompt.text] };
  }
}

const SCHEMAS: Record<TextApi, z.ZodType> = {
  chat: chatCreateParamsSchema,
  responses: responseCreateParamsSchema,
  messages: messageCreateParamsSchema,
  embeddings: embeddingCreateParamsSchema,
};

/** Every body the run will send for `api` (one per prompt), checked against the contract unless `validate` is off. */
export function prepare(api: TextApi, o: WorkloadOptions, validate: boolean): Prepared[] {
  const stream = api !== 'embeddings' && o.stream;
  return o.prompts.map((p, i) => {
    const body = buildBody(api, p, { ...o, stream });
    if (validate && (i === 0 || p.maxTokens !== undefined)) {
      const r = check(SCHEMAS[api], body);
      if (!r.ok) {
        throw new UsageError(`${api} request: ${r.violation.field}: ${r.violation.message}`, {
          field: r.violation.field,
        });
      }
    }
    return { api, model: o.model, stream, path: API_PATH[api], body: Buffer.from(JSON.stringify(body)) };
  });
}

/** One entry of `--mix`. */
export interface MixEntry {
  api: TextApi;
  weight: number;
  /** `<api>@<model>`: this api's own model (e.g. an embeddings model next to a chat model). */
  model?: string;
}

/** `--mix chat=3,messages=1,embeddings@text-embedding-v4=1`: apis with positive weights. */
export function parseMix(text: string): MixEntry[] {
  const out: MixEntry[] = [];
  for (const part of text.split(',')) {
    const m = /^\s*([a-z]+)(?:@([^=\s]+))?\s*=\s*(\d+(?:\.\d+)?)\s*$/.exec(part);
    if (!m) {
      throw new UsageError(`--mix: "${part}" is not <api>[@<model>]=<weight> (e.g. chat=3,messages=1)`, {
        field: '--mix',
      });
    }
    const api = m[1] as TextApi;
    if (!(TEXT_APIS as readonly string[]).includes(api)) {
      throw new UsageError(`--mix: "${m[1]}" is not one of ${TEXT_APIS.join(', ')}`, { field: '--mix' });
    }
    if (out.some((x) => x.api === api)) {
      throw new UsageError(`--mix: ${api} is given twice`, { field: '--mix' });
    }
    const weight = Number(m[3]);
    if (!(weight > 0))
      throw new UsageError(`--mix: the weight of ${api} must be above 0`, { field: '--mix' });
    out.push(m[2] !== undefined ? { api, weight, model: m[2] } : { api, weight });
  }
  return out;
}
