/**
 * The lines of results.jsonl and errors.jsonl: the OpenAI Batch output format
 * (`{id, custom_id, response: {status_code, request_id, body}, error}`) plus gw's `task` (the final task record of
 * async items) and `files` (what was downloaded: paths relative to the batch directory, with byte counts). Their
 * schema, next to their writer, is what every reader (resume, retry, merge, download) checks them against.
 */
import * as z from 'zod';

const savedFileSchema = z.object({ path: z.string(), bytes: z.number().int().nonnegative() });

/** A downloaded file of an item: `files/<name>`, relative to the batch directory. */
export type SavedFile = z.infer<typeof savedFileSchema>;

/** One output line, as read back (fields gw does not know are kept). */
export const outputLineSchema = z.looseObject({
  id: z.string(),
  custom_id: z.string(),
  response: z
    .looseObject({ status_code: z.number(), request_id: z.string().nullable(), body: z.unknown() })
    .nullable(),
  error: z.looseObject({ code: z.string(), message: z.string() }).nullable(),
  task: z.unknown().optional(),
  files: z.array(savedFileSchema).optional(),
});

/** One output line. */
export interface OutputLine {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string | null; body: unknown } | null;
  error: { code: string; message: string } | null;
  task?: unknown;
  files?: SavedFile[];
}

/** A stable id for an item's output line (the same custom_id always gets the same id): two FNV-1a hashes. */
export function outputId(customId: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ customId.length;
  for (let i = 0; i < customId.length; i++) {
    const c = customId.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  return `batch_req_${(a >>> 0).toString(16).padStart(8, '0')}${(b >>> 0).toString(16).padStart(8, '0')}`;
}

/**
 * The JSON text of an output line. `raw`: the answer's text as the gateway sent it, whose parse is
 * `l.response.body`; when it fits on one line it is written as it came instead of being serialised again (a
 * batch's results are mostly answers, and re-serialising each one was its largest single cost after the network).
 * An answer with a `\u` escape is serialised again: an escape can spell a secret the redactor would not see, and
 * JSON.stringify writes every character but control characters as itself.
 */
export function serializeLine(l: OutputLine, raw?: string): string {
  const body = raw?.trim();
  if (
    body === undefined ||
    body === '' ||
    l.response === null ||
    l.task !== undefined ||
    l.files !== undefined ||
    /[\n\r]/.test(body) ||
    body.includes('\\u')
  ) {
    return JSON.stringify(l);
  }
  const head = JSON.stringify({ status_code: l.response.status_code, request_id: l.response.request_id });
  return `{"id":${JSON.stringify(l.id)},"custom_id":${JSON.stringify(l.custom_id)},"response":${head.slice(0, -1)},"body":${body}},"error":${JSON.stringify(l.error)}}`;
}

/** Builds an output line. */
export function outputLine(
  customId: string,
  response: OutputLine['response'],
  error: OutputLine['error'],
  extra: { task?: unknown; files?: SavedFile[] | undefined } = {},
): OutputLine {
  const line: OutputLine = { id: outputId(customId), custom_id: customId, response, error };
  if (extra.task !== undefined) line.task = extra.task;
  if (extra.files !== undefined) line.files = extra.files;
  return line;
}

/** The file extension of an item's result, from its URL (default mp4). */
export function extensionOf(url: string): string {
  const m = /\.([a-z0-9]{2,5})(?:$|[?#])/i.exec(new URL(url, 'http://x').pathname);
  return (m?.[1] ?? 'mp4').toLowerCase();
}
