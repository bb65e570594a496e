/**
 * V8's garbage collector, for `gw probe --every` (a days-long watch), the last place that paces collections
 * itself (downloads no longer do; this file goes when the probe stops). V8 exposes `gc` only with --expose-gc;
 * it is enabled here for new contexts. Undefined when that is refused (a future Node): callers then leave
 * collection to V8.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** A collection: `minor` is a young-generation scavenge, the default a full collection. */
export type Gc = (o?: { type?: 'major' | 'minor' }) => void;

let cached: Gc | null | undefined;

/** V8's `gc`, or undefined when it will not expose it. */
export function exposedGc(): Gc | undefined {
  if (cached !== undefined) return cached ?? undefined;
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    cached = typeof gc === 'function' ? (gc as Gc) : null;
  } catch {
    cached = null;
  }
  return cached ?? undefined;
}
