import type { Readable, Writable } from 'node:stream';

/** A writable the CLI prints to; `isTTY` decides spinners and streaming defaults. */
export type OutStream = Writable & { isTTY?: boolean; columns?: number };

/** The process boundary of `main()`: tests pass their own streams and environment. */
export interface Io {
  stdout: OutStream;
  stderr: OutStream;
  stdin: Readable & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  /** Aborted on Ctrl-C / SIGTERM. */
  signal?: AbortSignal;
}

/** The real process streams. */
export function processIo(signal?: AbortSignal): Io {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    // A getter: creating process.stdin costs a stream (~1.5 ms) that most commands never read.
    get stdin() {
      return process.stdin;
    },
    env: process.env,
    ...(signal ? { signal } : {}),
  };
}

/** Reads all of standard input as UTF-8 text. */
export async function readAll(stdin: Readable): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of stdin)
    parts.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(parts).toString('utf8');
}
