import { createReadStream, createWriteStream } from 'node:fs';
import { rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
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
  const tmp = `${path}.tmp`;
  const out = createWriteStream(tmp, { mode: 0o600 });
  const rl = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  for await (const line of rl) {
    if (line.length === 0) continue;
    let id: string | undefined;
    try {
      id = (JSON.parse(line) as { custom_id?: string }).custom_id;
    } catch {
      id = undefined;
    }
    if (id !== undefined && ids.has(id)) continue;
    if (!out.write(`${line}\n`)) await once(out, 'drain');
  }
  await new Promise<void>((res, rej) => out.end((e?: Error | null) => (e ? rej(e) : res())));
  await rename(tmp, path);
}
