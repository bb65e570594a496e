/**
 * Keeps a download's memory flat. Every socket read allocates a fresh buffer (Node's net layer; undici's body
 * chunks are views of them, and no public option of either reuses one), so a 1 GiB download makes 1 GiB of
 * short-lived buffers. V8 frees them only when it collects, and it lets them pile up to about 40-64 MB first (its
 * external-memory trigger): the peak resident set of `gw video download` was 105-112 MB for 1 GiB, of which
 * ~68 MB is the program itself (undici's entry and zod). A young-generation collection after every 8 MiB received
 * frees them while they are still young: measured 81-88 MB for the same download, and no slower (a scavenge of a
 * small young generation takes well under a millisecond; 128 of them per GiB).
 *
 * When V8 will not expose its collector (./gc.ts), downloads work as before, with V8's own pacing.
 */
import { exposedGc } from './gc.js';

/** Bytes received between two collections. */
export const COLLECT_EVERY_BYTES = 8 * 1024 * 1024;

/**
 * A counter to call with every chunk's length: it runs a young-generation collection each time another
 * `every` bytes went by. A no-op when V8 will not expose its collector.
 */
export function collector(every = COLLECT_EVERY_BYTES): (bytes: number) => void {
  const gc = exposedGc();
  if (gc === undefined) return () => undefined;
  let since = 0;
  return (bytes) => {
    since += bytes;
    if (since < every) return;
    since = 0;
    gc({ type: 'minor' });
  };
}
