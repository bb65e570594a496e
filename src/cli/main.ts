import { Command, CommanderError, Option } from 'commander';
import type { Context, Runtime } from './context.js';
import { shareGlobals } from './globals.js';
import { COMMANDS } from './registry.js';
import { ExitCode, GwError, InterruptedError, UsageError, isAbortError } from '../core/errors.js';
import { processIo, type Io } from '../ui/io.js';
import { Output } from '../ui/output.js';
import { Redactor } from '../ui/redact.js';
import { toGwError } from '../core/error-map.js';
import { fsError, isFsError } from '../core/fs-errors.js';

/** The version printed by `gw --version`. */
export const VERSION = '0.1.0';

const VALUE_GLOBALS = new Set(['--profile', '--base-url', '--timeout', '--ca-file', '--header', '-H']);

/** The top-level command named in argv (skipping global flags), or undefined. */
export function targetCommand(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--') return undefined;
    if (VALUE_GLOBALS.has(a)) {
      i++;
      continue;
    }
    if (a.startsWith('-')) continue;
    if (a === 'help') return argv[i + 1];
    return a;
  }
  return undefined;
}

/** The root program with the global flags of CLI.md. */
export function rootProgram(): Command {
  return new Command('gw')
    .description('Operate and acceptance-probe a unified model gateway.')
    .version(VERSION, '-V, --version')
    .option('--json', 'machine output on stdout', false)
    .option('--quiet', 'no progress or hints on stderr', false)
    .option('--verbose', 'the trace id, then one line per HTTP exchange on stderr (never the token)', false)
    .option('--no-color', 'no colour (also NO_COLOR)')
    .option('--profile <name>', 'profile to use (env GW_PROFILE)')
    .option('--base-url <url>', 'gateway base address, without /v1 (env GW_BASE_URL)')
    .option(
      '--timeout <duration>',
      'request timeout, more than 0, e.g. 30s, 2m (env GW_TIMEOUT); also the limit of a wait or batch run not given a --timeout of its own after its name',
    )
    .addOption(new Option('--no-validate', 'send requests even where they break a contract rule'))
    .option('--ca-file <pem>', 'also trust the CA certificates in this PEM file (env GW_CA_FILE)')
    .option(
      '-H, --header <Name: value>',
      "extra request header, repeatable, sent to the gateway's origin only (also env GW_HEADERS, one per line, and `headers` in a profile); 'Name:' with no value drops a profile's header",
      (v: string, acc: string[] | undefined) => [...(acc ?? []), v],
    )
    .option(
      '--header-override',
      'let --header replace a header gw sets itself (Authorization, Content-Type, Accept, Accept-Encoding, User-Agent, traceparent); Host, Content-Length and other framing headers are never replaced',
      false,
    )
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      `
Environment: GW_BASE_URL, GW_TOKEN, GW_PROFILE, GW_TIMEOUT, GW_CA_FILE, GW_HEADERS, GW_CONFIG_DIR, GW_STATE_DIR, NO_COLOR,
             HTTPS_PROXY, HTTP_PROXY, NO_PROXY (as curl), NODE_EXTRA_CA_CERTS.
Exit codes: 0 ok · 1 gateway error / task failed / probe failed · 2 invalid input (nothing sent)
            3 configuration or authentication · 4 timed out · 130 interrupted
Quick start: gw probe --sim`,
    );
}

/**
 * Builds the program, loading only the command group that runs (all of them for completion). Global flags work
 * before and after the command name; a verb's own flag of the same name (`--timeout`) stays the verb's.
 */
export async function buildProgram(argv: readonly string[], rt: Runtime): Promise<Command> {
  const program = rootProgram();
  const target = targetCommand(argv);
  const loadAll = target === 'completion';
  for (const entry of COMMANDS) {
    if (loadAll || entry.name === target) {
      const mod = await entry.load();
      const cmd = mod.default(rt);
      program.addCommand(cmd);
      if (cmd.description() === '') cmd.description(entry.summary);
    } else {
      program.command(entry.name).description(entry.summary);
    }
  }
  shareGlobals(program);
  return program;
}

/**
 * Routes commander's output to `io`. With `--json`, what commander would write to stderr (its parse errors and
 * the help shown after them) is held in `held` instead, so renderError() can print the `{"error": …}` document.
 */
function applyIo(cmd: Command, io: Io, held?: string[]): void {
  cmd.exitOverride();
  cmd.configureOutput({
    writeOut: (s) => io.stdout.write(s),
    writeErr: (s) => (held !== undefined ? held.push(s) : io.stderr.write(s)),
  });
  for (const sub of cmd.commands) applyIo(sub, io, held);
}

/** True when `--json` is among the flags (not after `--`, where it would be a prompt word). */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/** `gw help <name>` for a name that is not a command: a usage error (commander would show the root help, exit 0). */
function checkHelpTarget(argv: readonly string[]): void {
  const first = argv.findIndex((a, i) => !a.startsWith('-') && !VALUE_GLOBALS.has(argv[i - 1] ?? ''));
  if (first === -1 || argv[first] !== 'help') return;
  const name = argv[first + 1];
  if (name === undefined || name.startsWith('-') || COMMANDS.some((c) => c.name === name)) return;
  throw new UsageError(`help: "${name}" is not a gw command (run \`gw --help\` for the list)`, {
    field: 'command',
  });
}

/**
 * `gw help video create` as `gw video create --help`: commander's help command takes one name, so it printed the
 * group's help (`gw video`) for a verb.
 */
function helpAsFlag(argv: readonly string[]): readonly string[] {
  const at = argv.findIndex((a, i) => !a.startsWith('-') && !VALUE_GLOBALS.has(argv[i - 1] ?? ''));
  if (at === -1 || argv[at] !== 'help' || argv.length === at + 1) return argv;
  return [...argv.slice(0, at), ...argv.slice(at + 1), '--help'];
}

/**
 * Runs gw with `argv` (without node and script) and returns the exit code. Never calls process.exit:
 * bin/gw.js sets process.exitCode so stdout is always flushed. Every error is caught here, once.
 */
export async function main(argv: readonly string[], io: Io = processIo()): Promise<number> {
  // Shell completion asks for dynamic words on every Tab: answer without building the command tree.
  if (argv[0] === '__complete') return (await import('./complete.js')).complete(argv.slice(1), io);
  let signal = io.signal;
  let cleanup = (): void => {};
  let terminated = false;
  // SIGTERM ends like Ctrl-C (the resume command printed) but exits 143, as shells expect of a terminated job.
  const exitOf = (code: number): number =>
    terminated && code === ExitCode.interrupted ? ExitCode.terminated : code;
  if (signal === undefined && io.stdout === process.stdout) {
    const ac = new AbortController();
    signal = ac.signal;
    let hits = 0;
    const onSignal = (sig: NodeJS.Signals): void => {
      hits++;
      if (sig === 'SIGTERM') terminated = true;
      if (hits > 1) process.exit(terminated ? ExitCode.terminated : ExitCode.interrupted);
      ac.abort(new InterruptedError());
    };
    // `gw … | head`: once the reader is gone there is nowhere to print; stop quietly, as Unix tools do.
    // Created ids were journaled (fsynced) before they were printed, so nothing is lost.
    const onStdoutError = (e: NodeJS.ErrnoException): void => {
      if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw e;
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    process.stdout.on('error', onStdoutError);
    cleanup = () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      process.stdout.off('error', onStdoutError);
    };
  }
  signal ??= new AbortController().signal;

  let exitCode: number = ExitCode.ok;
  let ctx: Context | undefined;
  const hooks = { onContext: (c: Context) => (ctx = c), onExit: (code: number) => (exitCode = code) };
  const actionSignal = signal;
  // The context (output, config, journal, client factory) is loaded only when a command actually runs, so
  // `gw --help` and `gw <group> --help` never pay for it.
  const rt: Runtime = {
    io,
    action(handler) {
      return async (...args: unknown[]) => {
        const { createRuntime } = await import('./context.js');
        await createRuntime(io, actionSignal, hooks).action(handler)(...args);
      };
    },
  };
  const held = wantsJson(argv) ? ([] as string[]) : undefined;
  try {
    checkHelpTarget(argv);
    const words = helpAsFlag(argv);
    const program = await buildProgram(words, rt);
    applyIo(program, io, held);
    await program.parseAsync([...words], { from: 'user' });
    return exitOf(exitCode);
  } catch (e) {
    return exitOf(renderError(e, io, ctx, argv, held));
  } finally {
    cleanup();
  }
}

function renderError(
  e: unknown,
  io: Io,
  ctx: Context | undefined,
  argv: readonly string[],
  held?: string[],
): number {
  if (e instanceof CommanderError) {
    const ok =
      e.code === 'commander.helpDisplayed' ||
      e.code === 'commander.version' ||
      e.code === 'commander.help' ||
      e.code === 'commander.executeSubCommandAsync' ||
      e.exitCode === 0;
    if (held !== undefined) {
      // --json: a parse error becomes the same {"error": …} document as every other error; help is shown as is.
      if (ok) io.stderr.write(held.join(''));
      else {
        const message = e.message.replace(/^error: /, '');
        io.stderr.write(`${JSON.stringify(new UsageError(message, { code: 'invalid_input' }).toJSON())}\n`);
      }
    }
    // Otherwise commander already printed its message to stderr.
    return ok ? ExitCode.ok : ExitCode.usage;
  }
  const out =
    ctx?.out ??
    new Output(
      io,
      { json: argv.includes('--json'), quiet: argv.includes('--quiet'), verbose: false, color: false },
      (() => {
        const r = new Redactor();
        r.add(io.env.GW_TOKEN);
        return r;
      })(),
    );
  const known = toGwError(e);
  if (known !== undefined) {
    out.error(known);
    return known.exitCode;
  }
  // An ordinary condition that escaped a command: a file-system error (named, with its path and a hint), a
  // prompt closed by Ctrl-C (@inquirer's ExitPromptError), an aborted operation.
  if (isFsError(e)) {
    const mapped = fsError(e, { action: 'use' });
    out.error(mapped);
    return mapped.exitCode;
  }
  if (
    e instanceof Error &&
    (e.name === 'ExitPromptError' || e.name === 'AbortPromptError' || isAbortError(e))
  ) {
    out.error(new InterruptedError());
    return ExitCode.interrupted;
  }
  // Anything else is a bug in gw: say so, without a stack trace unless --verbose.
  const err = new GwError(e instanceof Error ? e.message : String(e), { code: 'internal' });
  out.error(err);
  if (argv.includes('--verbose') && e instanceof Error && e.stack) out.verbose(e.stack);
  return err instanceof UsageError ? ExitCode.usage : ExitCode.failure;
}
