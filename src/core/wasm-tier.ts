/**
 * Optimised WebAssembly for the commands that send requests for a long time (`gw load`, `gw batch`).
 *
 * undici parses HTTP with llhttp compiled to WebAssembly. The launcher (bin/gw.js) keeps V8 on its baseline
 * compiler (Liftoff) because a short command otherwise waits at exit for optimising jobs it never profits from.
 * A command that parses tens of thousands of answers does profit: the parser tiered up by TurboFan made `gw load`
 * of tiny requests ~9 % faster here (six interleaved pairs, each won; `gw batch`, bound by the simulator's own
 * work at a fifth of that rate, measured within noise). V8 reads the flag when a module is compiled, and undici
 * compiles llhttp at its first connection, so this must run before the command's first request.
 */
import { setFlagsFromString } from 'node:v8';

/** Lets V8 tier hot WebAssembly up to optimised code from here on (undici's parser compiled after this). */
export function optimiseWasm(): void {
  setFlagsFromString('--no-liftoff-only');
}
