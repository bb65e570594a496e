/**
 * `gw __complete <what>`: the dynamic words completion scripts ask for (not listed in help). Reads local files
 * only, never the network, and never fails: a missing file just yields nothing.
 *   profiles          the profile names of the config file
 *   models            the model ids of the last `gw models` (cached in the state directory)
 *   ids <kind>        the ids in the journal of that kind (video, alpha, beta-task, beta-asset), newest first
 */
import { readConfigFile } from '../core/config.js';
import { Journal, type JournalKind } from '../core/journal.js';
import { stateDir } from '../core/paths.js';
import type { Io } from '../ui/io.js';
import { loadModelIds } from '../core/model-cache.js';
import { isCompletionWord } from '../core/completion.js';

const MAX_IDS = 200;

/** The words for `what`. */
export function completionWords(what: readonly string[], env: Record<string, string | undefined>): string[] {
  try {
    if (what[0] === 'profiles') return Object.keys(readConfigFile(env).profiles);
    if (what[0] === 'models') return loadModelIds(env);
    if (what[0] === 'ids') {
      const kind = what[1] as JournalKind | undefined;
      const ids = new Journal(stateDir(env))
        .list()
        .filter((e) => kind === undefined || e.kind === kind)
        .map((e) => e.id)
        .reverse();
      return [...new Set(ids)].slice(0, MAX_IDS);
    }
  } catch {
    // nothing to offer
  }
  return [];
}

/**
 * Prints the words, one per line; always exit 0. Only words of completion's strict character set are printed
 * (isCompletionWord): the rest came from a gateway or a file and is dropped, so shell syntax and escape
 * sequences never reach a shell's completion machinery or its list on the terminal.
 */
export function complete(what: readonly string[], io: Io): number {
  const words = completionWords(what, io.env).filter(isCompletionWord);
  if (words.length > 0) io.stdout.write(`${words.join('\n')}\n`);
  return 0;
}
