/**
 * The batch input: OpenAI Batch input format, one request per line, read as a stream (memory does not grow with
 * the file). Parsing and the checks of one line live here; the contract rules are in endpoints.ts.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { BATCH_URLS, endpointFor, modelOf, type Endpoint } from './endpoints.js';

/** One request of the file. */
export interface BatchLine {
  /** 1-based line number in the file. */
  lineNo: number;
  customId: string;
  url: string;
  body: Record<string, unknown>;
  endpoint: Endpoint;
  model: string;
}

/** One problem of one line. */
export interface LineProblem {
  lineNo: number;
  customId?: string | undefined;
  field: string;
  message: string;
}

/** Lines of a file (or standard input) with their numbers; blank lines are skipped but counted. */
export async function* readLines(
  source: string | Readable,
): AsyncGenerator<{ lineNo: number; text: string }> {
  const input = typeof source === 'string' ? createReadStream(source, { highWaterMark: 256 * 1024 }) : source;
  const rl = createInterface({ input, crlfDelay: Infinity });
  let lineNo = 0;
  try {
    for await (const text of rl) {
      lineNo++;
      if (text.trim().length === 0) continue;
      yield { lineNo, text };
    }
  } finally {
    rl.close();
    if (typeof source === 'string') input.destroy();
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

/** Parses the envelope of one line (not the body's contract rules). */
export function parseLine(lineNo: number, text: string): BatchLine | LineProblem {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return { lineNo, field: 'line', message: `is not valid JSON (${why})` };
  }
  if (!isObject(v)) return { lineNo, field: 'line', message: 'must be a JSON object' };
  const customId = v.custom_id;
  if (typeof customId !== 'string' || customId.length === 0) {
    return { lineNo, field: 'custom_id', message: 'is required: a non-empty string' };
  }
  if (customId.length > 512 || /[\\/\0]|^\.\.?$/.test(customId)) {
    return {
      lineNo,
      customId,
      field: 'custom_id',
      message:
        'must be at most 512 characters without "/", "\\" or NUL, and not "." or ".." (it names files)',
    };
  }
  if (v.method !== undefined && v.method !== 'POST') {
    return {
      lineNo,
      customId,
      field: 'method',
      message: 'must be "POST" (every batch endpoint is a create)',
    };
  }
  if (typeof v.url !== 'string') {
    return { lineNo, customId, field: 'url', message: `is required: one of ${BATCH_URLS.join(', ')}` };
  }
  const url = pathOf(v.url);
  const endpoint = endpointFor(url);
  if (endpoint === undefined) {
    return { lineNo, customId, field: 'url', message: `"${v.url}" is not one of ${BATCH_URLS.join(', ')}` };
  }
  if (!isObject(v.body)) return { lineNo, customId, field: 'body', message: 'is required: a JSON object' };
  if (v.body.stream === true && endpoint.kind === 'sync') {
    return {
      lineNo,
      customId,
      field: 'body.stream',
      message: 'must not be true: a batch stores whole answers (drop "stream")',
    };
  }
  return { lineNo, customId, url, body: v.body, endpoint, model: modelOf(url, v.body) };
}

/** True when parseLine found a problem. */
export function isProblem(x: BatchLine | LineProblem): x is LineProblem {
  return !('endpoint' in x);
}
