/**
 * Runs the `gw` of a bash script in-process: a bash function named `gw` hands each invocation (its arguments,
 * working directory, environment and standard input) to a loopback server in the test worker, which runs main()
 * with them and answers the exit status; the function then prints what gw wrote to stdout and stderr. Scripts keep
 * real shell semantics (pipes, `$(…)`, `&&`, redirections, exit statuses) without a Node start-up per command.
 */
import { createReadStream, createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { fastClock } from './clock.js';
import { enterCwd, STACK_TRACE } from './gw.js';
import { tempDir } from './tmp.js';

/** A running server and the bash prelude that defines `gw` for it. */
export interface GwServer {
  /** Bash text defining the `gw` function (put it first in the script). */
  prelude: string;
  /** How many gw invocations ran. */
  runs: number;
  /** Invocations that printed a stack trace (never acceptable). */
  stackTraces: string[];
  close(): Promise<void>;
}

function nulFields(text: string): string[] {
  const parts = text.split('\0');
  parts.pop(); // after the last NUL
  return parts;
}

function finish(s: WriteStream): Promise<void> {
  return new Promise((resolve, reject) => s.end((e?: Error | null) => (e ? reject(e) : resolve())));
}

/** Starts the server on 127.0.0.1 (port 0). */
export async function startGwServer(): Promise<GwServer> {
  const runsDir = tempDir('gw-runs-');
  const sockets = new Set<Socket>();
  const state: GwServer = {
    prelude: '',
    runs: 0,
    stackTraces: [],
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const run = async (dir: string): Promise<number> => {
    const [cwd, ...argv] = nulFields(readFileSync(join(dir, 'argv'), 'utf8'));
    const env: Record<string, string> = {};
    for (const kv of nulFields(readFileSync(join(dir, 'env'), 'utf8'))) {
      const eq = kv.indexOf('=');
      if (eq > 0) env[kv.slice(0, eq)] = kv.slice(eq + 1);
    }
    const stdout = createWriteStream(join(dir, 'out'));
    const stderr = createWriteStream(join(dir, 'err'));
    const stdin = createReadStream(join(dir, 'in'));
    const restore = enterCwd(cwd);
    let code: number;
    try {
      code = await main(argv, {
        stdout,
        stderr,
        stdin,
        env,
        signal: new AbortController().signal,
        clock: fastClock(),
      });
    } finally {
      restore();
      stdin.destroy();
      await Promise.all([finish(stdout), finish(stderr)]);
    }
    state.runs++;
    const err = readFileSync(join(dir, 'err'), 'utf8');
    if (STACK_TRACE.test(err)) state.stackTraces.push(`gw ${argv.join(' ')}\n${err}`);
    return code;
  };
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let line = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      line += chunk;
      const nl = line.indexOf('\n');
      if (nl === -1) return;
      run(line.slice(0, nl)).then(
        (code) => socket.end(`${code}\n`),
        (e: unknown) => socket.end(`70\n${e instanceof Error ? e.message : String(e)}\n`),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  state.prelude = `
gw() {
  local d fd code
  d=$(mktemp -d ${runsDir}/run.XXXXXX) || return 70
  cat > "$d/in"
  env -0 > "$d/env"
  printf '%s\\0' "$PWD" "$@" > "$d/argv"
  exec {fd}<>/dev/tcp/127.0.0.1/${port} || return 70
  printf '%s\\n' "$d" >&$fd
  read -r code <&$fd
  exec {fd}>&-
  cat "$d/out"
  cat "$d/err" >&2
  rm -rf "$d"
  return "\${code:-70}"
}
`;
  return state;
}
