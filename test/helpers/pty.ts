import { spawn, type IPty } from 'node-pty';
import { GW_BIN, isolatedDirs } from './gw.js';

/** A gw process on a real pseudo-terminal, with helpers to wait for text and type answers. */
export interface PtySession {
  pty: IPty;
  /** Everything the terminal showed so far (ANSI sequences included). */
  output(): string;
  /** Resolves when `pattern` appears in the output (after the last match), rejects after `ms`. */
  expect(pattern: RegExp | string, ms?: number): Promise<void>;
  /** Types text (use `\r` for Enter). */
  type(text: string): void;
  /** Resolves with the exit code. */
  exited: Promise<number>;
}

/** Strips ANSI escape sequences from terminal output. */
export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]/g, '');
}

/** Spawns `bin/gw` on a pseudo-terminal. */
export function spawnPty(
  argv: string[],
  env: Record<string, string> = {},
  size: { cols?: number; rows?: number } = {},
): PtySession {
  const pty = spawn(process.execPath, [GW_BIN, ...argv], {
    name: 'xterm-256color',
    cols: size.cols ?? 120,
    rows: size.rows ?? 40,
    env: { PATH: process.env.PATH ?? '', TERM: 'xterm-256color', ...isolatedDirs(), ...env },
  });
  let out = '';
  let cursor = 0;
  const waiters: Array<() => void> = [];
  pty.onData((d) => {
    out += d;
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<number>((resolve) => pty.onExit((e) => resolve(e.exitCode)));
  return {
    pty,
    output: () => out,
    type: (text) => pty.write(text),
    exited,
    expect(pattern, ms = 15_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(`timed out waiting for ${String(pattern)}; screen:\n${stripAnsi(out).slice(-2000)}`),
            ),
          ms,
        );
        const check = (): void => {
          const rest = stripAnsi(out.slice(cursor));
          const hit = typeof pattern === 'string' ? rest.includes(pattern) : pattern.test(rest);
          if (hit) {
            clearTimeout(timer);
            cursor = out.length;
            resolve();
          } else waiters.push(check);
        };
        check();
      });
    },
  };
}
