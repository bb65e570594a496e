/**
 * Optimised WebAssembly for the commands that send requests for a long time (`gw load`, `gw batch`).
 *
 * undici parses HTTP with llhttp compiled to WebAssembly. The launcher (bin/gw.js) keeps V8 on its baseline
 * compiler (Liftoff) because a short command otherwise waits at exit for optimising jobs it never profits from.
 * A command that parses tens of thousands of answers does profit from the parser tiered up by TurboFan. V8 reads
 * the flags when a module is compiled, and undici compiles llhttp at its first connection, so this must run before
 * the command's first request.
 *
 * `--liftoff-only` also switched off tier-up itself (V8 declares it with negative implications on
 * `--wasm-tier-up` and `--wasm-dynamic-tiering`), and clearing the flag at run time does not restore them: both are
 * set again explicitly. Without them the parser stayed on Liftoff (seen in a `perf` profile of `gw load`).
 */
import { setFlagsFromString } from 'node:v8';

/** The V8 flags that undo the launcher's `--liftoff-only` and its implications. */
export const WASM_TIER_FLAGS = ['--no-liftoff-only', '--wasm-tier-up', '--wasm-dynamic-tiering'] as const;

/** Lets V8 tier hot WebAssembly up to optimised code from here on (undici's parser compiled after this). */
export function optimiseWasm(): void {
  for (const flag of WASM_TIER_FLAGS) setFlagsFromString(flag);
}
