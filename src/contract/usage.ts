/**
 * The one reader of the `usage` an answer reports (chat, responses, messages, embeddings spell it apart): pricing
 * (prices.ts), the load engine's token counts and the telemetry of every request read it here. Pure: no I/O.
 */

/**
 * The tokens of one answer. `input` counts every input token, those read from a cache included, as the
 * OpenTelemetry GenAI conventions define `gen_ai.usage.input_tokens`; `cached` is the part of it read from a cache.
 * A figure the usage does not give is absent (a stream's early report may give some only).
 */
export interface Tokens {
  input?: number | undefined;
  cached?: number | undefined;
  output?: number | undefined;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
}
function rec(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};
}

/** The tokens of a `usage` object of any text API (nothing for what is not one). */
export function tokensOf(usage: unknown): Tokens {
  const u = rec(usage);
  const out: Tokens = {};
  const output = num(u.completion_tokens) ?? num(u.output_tokens);
  if (output !== undefined) out.output = output;
  // The gateway's usage (chat, responses, embeddings and messages alike) gives the total input in
  // prompt_tokens / input_tokens, cache reads and writes inside it: unlike Anthropic's own API, whose messages
  // input_tokens leaves them out. An embeddings usage may give its total alone: without output tokens the total is
  // the input.
  const read = num(u.cache_read_input_tokens);
  const given =
    num(u.prompt_tokens) ?? num(u.input_tokens) ?? (output === undefined ? num(u.total_tokens) : undefined);
  const cached =
    num(rec(u.prompt_tokens_details).cached_tokens) ?? num(rec(u.input_tokens_details).cached_tokens) ?? read;
  if (given !== undefined) out.input = given;
  if (cached !== undefined) out.cached = given !== undefined ? Math.min(cached, given) : cached;
  return out;
}

/**
 * Adds a later report of the same answer's usage into `into`, field by field: a stream reports cumulative figures
 * (messages: `message_start`, then `message_delta`), and a field a later report leaves out or sends as null keeps
 * its earlier value.
 */
export function mergeUsage(into: Record<string, unknown>, report: unknown): void {
  for (const [k, v] of Object.entries(rec(report))) if (v !== null && v !== undefined) into[k] = v;
}
