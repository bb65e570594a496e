/**
 * What `gw batch retry` changes on disk once it is certain to run: the old lines of the items sent again leave
 * errors.jsonl (rewritten whole: a copy, then a rename).
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readRecords, rewrite } from './lines.js';
import { outputLineSchema } from './output.js';
import { ERRORS_FILE } from './state.js';

/** Rewrites errors.jsonl without the lines of `ids` (items about to be sent again), atomically. */
export async function dropErrorLines(dir: string, ids: ReadonlySet<string>): Promise<void> {
  if (ids.size === 0) return;
  const path = join(dir, ERRORS_FILE);
  try {
    await stat(path);
  } catch {
    return;
  }
  await rewrite(path, async (out) => {
    // A torn last line (a crash mid-write) is not kept: it would become a damaged line in the middle.
    for await (const { value, text } of readRecords(path, outputLineSchema, 'a batch output line')) {
      if (!ids.has(value.custom_id)) await out.write(`${text}\n`);
    }
  });
}
