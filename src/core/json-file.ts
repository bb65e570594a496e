/**
 * JSON documents given as files (`gw load merge`/`compare`/`--baseline`, `gw probe --baseline`, `--prices`): read
 * with the size cap and Ctrl-C of every local input, parsed, and checked against the schema of whoever wrote or
 * defines them. A file that is not JSON, or breaks the schema, is exit 2 naming the flag, the file and the first
 * field that breaks it, with the rule.
 */
import type * as z from 'zod';
import { formatPath } from '../contract/validate.js';
import { UsageError } from './errors.js';
import { LOCAL_LIMITS, parseLocalJson, readLocalText } from './local-file.js';

/** Reads `path` as JSON; `flag` names the argument or flag it came from. */
export async function readJsonFile(path: string, flag: string, signal?: AbortSignal): Promise<unknown> {
  const text = await readLocalText(path, { flag, field: flag, limit: LOCAL_LIMITS.body, signal });
  return parseLocalJson(text, { flag, path });
}

/** The document as `schema` reads it, or the UsageError naming the flag, the file, the field and the rule. */
export function checkJsonDocument<T>(schema: z.ZodType<T>, doc: unknown, path: string, flag: string): T {
  const r = schema.safeParse(doc);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = issue === undefined || issue.path.length === 0 ? '(the document)' : formatPath(issue.path);
  throw new UsageError(`${flag}: ${path}: ${field}: ${issue?.message ?? 'is invalid'}`, { field: flag });
}

/** Reads `path` and checks it against `schema` (see checkJsonDocument). */
export async function readJsonDocument<T>(
  path: string,
  schema: z.ZodType<T>,
  flag: string,
  signal?: AbortSignal,
): Promise<T> {
  return checkJsonDocument(schema, await readJsonFile(path, flag, signal), path, flag);
}
