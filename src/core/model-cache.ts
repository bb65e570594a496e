/**
 * The model ids of the last `gw models`, kept in the state directory so shell completion can offer them without
 * a network call. Best effort: a cache that cannot be written or read is simply absent.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stateDir } from './paths.js';

const FILE = 'models-cache.json';
/** At most this many ids are kept (a gateway could list any number). */
const MAX_IDS = 5000;

/** Saves the ids `gw models` just listed. */
export function saveModelIds(
  env: Record<string, string | undefined>,
  baseUrl: string,
  ids: readonly string[],
): void {
  try {
    const dir = stateDir(env);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = join(dir, `${FILE}.${process.pid}.tmp`);
    writeFileSync(
      tmp,
      `${JSON.stringify({ baseUrl, savedAt: new Date().toISOString(), ids: ids.slice(0, MAX_IDS) })}\n`,
    );
    renameSync(tmp, join(dir, FILE));
  } catch {
    // Completion falls back to no model suggestions.
  }
}

/** The cached ids, or none. */
export function loadModelIds(env: Record<string, string | undefined>): string[] {
  try {
    const doc = JSON.parse(readFileSync(join(stateDir(env), FILE), 'utf8')) as { ids?: unknown };
    return Array.isArray(doc.ids) ? doc.ids.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}
