/**
 * The lines of results.jsonl and errors.jsonl: the OpenAI Batch output format
 * (`{id, custom_id, response: {status_code, request_id, body}, error}`) plus gw's `task` (the final task record of
 * async items) and `files` (what was downloaded, with byte counts).
 */
import { createHash } from 'node:crypto';

/** A downloaded file of an item. */
export interface SavedFile {
  path: string;
  bytes: number;
}

/** One output line. */
export interface OutputLine {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string | null; body: unknown } | null;
  error: { code: string; message: string } | null;
  task?: unknown;
  files?: SavedFile[];
}

/** A stable id for an item's output line (the same custom_id always gets the same id). */
export function outputId(customId: string): string {
  return `batch_req_${createHash('sha256').update(customId).digest('hex').slice(0, 24)}`;
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
