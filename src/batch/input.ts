/**
 * The batch input: OpenAI Batch input format, one request per line, read as a stream (memory does not grow with
 * the file). Parsing and the checks of one line live here (every problem of a line, not only its first); the
 * contract rules are in endpoints.ts.
 */
import type { Readable } from 'node:stream';
import type { PriceTable } from '../contract/prices.js';
import { longestDownloadName, NAME_MAX_BYTES } from '../core/download.js';
import { BATCH_URLS, endpointFor, modelOf, type Endpoint, type EndpointKind } from './endpoints.js';
import { badLineRule, isBad, readLines } from './lines.js';
import { lineEstimate } from './spend.js';
import type { Money } from './state.js';

/** One request of the file. */
export interface BatchLine {
  /** 1-based line number in the file. */
  lineNo: number;
  customId: string;
  url: string;
  body: Record<string, unknown>;
  endpoint: Endpoint;
  model: string;
  /** The list price of the request (with --prices, its upper bound), when it is fixed in advance. */
  est: Money | undefined;
  /** Why it is not (est undefined). */
  unpriced?: string | undefined;
}

/** One problem of one line. */
export interface LineProblem {
  lineNo: number;
  customId?: string | undefined;
  field: string;
  message: string;
}

/** A line's text, or the problems that keep it from being read at all. */
export type InputLine = { lineNo: number; text: string } | { lineNo: number; problems: LineProblem[] };

/**
 * The non-blank lines of a batch file (or standard input) with their numbers; blank lines are counted.
 * `onChunk` sees every byte read, in order.
 */
export async function* inputLines(
  source: string | Readable,
  onChunk?: (bytes: Buffer) => void,
): AsyncGenerator<InputLine> {
  for await (const l of readLines(source, { onChunk })) {
    if (isBad(l)) {
      yield { lineNo: l.lineNo, problems: [{ lineNo: l.lineNo, field: 'line', message: badLineRule(l) }] };
      continue;
    }
    if (l.text.trim().length > 0) yield { lineNo: l.lineNo, text: l.text };
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A full `https://host/v1/…` URL is reduced to its path, as the OpenAI Batch API accepts only the path. */
function pathOf(url: string): string {
  if (/^https?:\/\//i.test(url)) {
    try {
      return new URL(url).pathname;
    } catch {
      return url;
    }
  }
  return url;
}

/**
 * What a custom_id may be. It names the files of a line that downloads (`files/<id>.<ext>`, a beta task's
 * `files/<id>.last_frame.<ext>`, each with `.part`, `.part.json` and `.part.lock` beside it while it downloads):
 * the longest of those names must fit the file system's NAME_MAX. The budget is counted in bytes of UTF-8.
 */
function customIdProblem(id: string, kind: EndpointKind | undefined): string | undefined {
  if (/[\\/\0]|^\.\.?$/.test(id)) {
    return 'must not hold "/", "\\" or NUL, nor be "." or ".." (it names files)';
  }
  if (kind === 'video' || kind === 'beta') {
    // The longest extension a result URL gives (extensionOf: 2 to 5 letters).
    const suffix = kind === 'beta' ? '.last_frame.xxxxx' : '.xxxxx';
    const extra = Buffer.byteLength(longestDownloadName(suffix));
    const bytes = Buffer.byteLength(id);
    if (bytes + extra > NAME_MAX_BYTES) {
      return `is ${bytes} bytes; a ${kind === 'beta' ? 'beta task' : 'video'} line names its files after it (files/<custom_id>${suffix.replace('xxxxx', '<ext>')}.part.lock while downloading), which must fit ${NAME_MAX_BYTES} bytes: at most ${NAME_MAX_BYTES - extra} bytes`;
    }
  } else if (id.length > 512) {
    return 'must be at most 512 characters';
  }
  return undefined;
}

/** The envelope's problems: custom_id, method, url, body. */
function envelopeProblems(
  v: Record<string, unknown>,
  endpoint: Endpoint | undefined,
): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const customId = v.custom_id;
  if (typeof customId !== 'string' || customId.length === 0) {
    out.push(['custom_id', 'is required: a non-empty string']);
  } else {
    const p = customIdProblem(customId, endpoint?.kind);
    if (p !== undefined) out.push(['custom_id', p]);
  }
  if (v.method !== undefined && v.method !== 'POST') {
    out.push(['method', 'must be "POST" (every batch endpoint is a create)']);
  }
  if (typeof v.url !== 'string') out.push(['url', `is required: one of ${BATCH_URLS.join(', ')}`]);
  else if (endpoint === undefined) out.push(['url', `"${v.url}" is not one of ${BATCH_URLS.join(', ')}`]);
  if (!isObject(v.body)) out.push(['body', 'is required: a JSON object']);
  else if (v.body.stream === true && endpoint?.kind === 'sync') {
    out.push(['body.stream', 'must not be true: a batch stores whole answers (drop "stream")']);
  }
  return out;
}

/**
 * Parses the envelope of one line (not the body's contract rules): the request, or every problem found. `prices`
 * (--prices) prices the models it names.
 */
export function parseLine(lineNo: number, text: string, prices?: PriceTable): BatchLine | LineProblem[] {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return [{ lineNo, field: 'line', message: `is not valid JSON (${why})` }];
  }
  if (!isObject(v)) return [{ lineNo, field: 'line', message: 'must be a JSON object' }];
  const url = typeof v.url === 'string' ? pathOf(v.url) : undefined;
  const endpoint = url !== undefined ? endpointFor(url) : undefined;
  const problems = envelopeProblems(v, endpoint);
  const customId = typeof v.custom_id === 'string' && v.custom_id !== '' ? v.custom_id : undefined;
  if (problems.length > 0 || endpoint === undefined || url === undefined || customId === undefined) {
    return problems.map(([field, message]) => ({ lineNo, customId, field, message }));
  }
  const body = v.body as Record<string, unknown>;
  const { est, reason } = lineEstimate(url, body, prices);
  return { lineNo, customId, url, body, endpoint, model: modelOf(url, body), est, unpriced: reason };
}

/** True when parseLine found problems. */
export function isProblem(x: BatchLine | LineProblem[]): x is LineProblem[] {
  return Array.isArray(x);
}
