/**
 * Global flags and a verb's own flag of the same name. The root program has `--timeout` (the request timeout) and
 * five verbs declare their own `--timeout` (a wait's or a run's limit). Commander hands a flag that both declare
 * to the root wherever it is written, unless the root parses its options positionally: these cases pin down
 * which value lands where, as the handlers read them (the context's globals, the verb's parsed flags).
 */
import type { Command } from 'commander';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { buildProgram, main, VERSION } from '../../../src/cli/main.js';
import { createRuntime, type Context, type GlobalOptions } from '../../../src/cli/context.js';
import { declared, parseFlags } from '../../../src/cli/verb.js';
import { isolatedDirs } from '../../helpers/gw.js';

const STOP = new Error('parsed');

/** Parses argv as main() does and returns what the verb's handler would see, without running it. */
async function parsed(argv: string[]): Promise<{
  globals: GlobalOptions;
  flags: Record<string, unknown>;
  requestTimeoutMs: number;
}> {
  const io = {
    stdout: new PassThrough(),
    stderr: new PassThrough(),
    stdin: Readable.from([]),
    env: { NO_COLOR: '1', ...isolatedDirs() },
  };
  let ctx: Context | undefined;
  const rt = createRuntime(io, new AbortController().signal, {
    onContext: (c) => {
      ctx = c;
      throw STOP;
    },
    onExit: () => {},
  });
  const program = await buildProgram(argv, rt);
  const quiet = (c: Command): void => {
    c.exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
    for (const s of c.commands) quiet(s);
  };
  quiet(program);
  await expect(program.parseAsync([...argv], { from: 'user' })).rejects.toBe(STOP);
  if (ctx === undefined) throw new Error('no context');
  // The command that ran: follow the command names in argv down the tree.
  let leaf: Command = program;
  for (const word of argv) leaf = leaf.commands.find((c) => c.name() === word) ?? leaf;
  const spec = declared.get(leaf);
  const flags = spec !== undefined ? parseFlags(spec, leaf) : {};
  const requestTimeoutMs = ctx.settings().timeoutMs;
  await ctx.close();
  return { globals: ctx.globals, flags, requestTimeoutMs };
}

describe("a verb's own --timeout and the global --timeout", () => {
  it.each([
    ['video wait', ['video', 'wait', 'video_1']],
    ['beta task wait', ['beta', 'task', 'wait', 'cgt-1']],
    ['beta asset wait', ['beta', 'asset', 'wait', 'asset-1', '-m', 'gamma-video-2-0']],
    ['batch run', ['batch', 'run', 'jobs.jsonl', '--out', 'out']],
    ['batch retry', ['batch', 'retry', 'out']],
  ])('%s --timeout after the verb is its own limit, not the request timeout', async (_name, argv) => {
    for (const spelling of [['--timeout', '90s'], ['--timeout=90s']]) {
      const r = await parsed([...argv, ...spelling]);
      expect(r.flags.timeout).toBe('90s');
      expect(r.globals.timeout).toBeUndefined();
      expect(r.requestTimeoutMs).toBe(60_000);
    }
  });

  it('--timeout before the command is the global one (the request timeout; waits fall back to it)', async () => {
    const r = await parsed(['--timeout', '5s', 'video', 'wait', 'video_1']);
    expect(r.globals.timeout).toBe('5s');
    expect(r.flags.timeout).toBeUndefined();
    expect(r.requestTimeoutMs).toBe(5_000);
  });

  it('both: the global before the command, the verb’s own after it, each where it belongs', async () => {
    const r = await parsed(['--timeout', '5s', 'video', 'wait', 'video_1', '--timeout', '10m', '--json']);
    expect(r.globals.timeout).toBe('5s');
    expect(r.globals.json).toBe(true);
    expect(r.flags.timeout).toBe('10m');
    expect(r.requestTimeoutMs).toBe(5_000);
  });

  it('a command without its own --timeout still takes the global one after its name', async () => {
    const r = await parsed(['models', '--timeout', '2s', '--json']);
    expect(r.globals.timeout).toBe('2s');
    expect(r.globals.json).toBe(true);
    expect(r.requestTimeoutMs).toBe(2_000);
  });
});

describe('global flags written after the command name', () => {
  it.each([
    [['models', '--json', '--quiet']],
    [['video', 'wait', 'video_1', '--json', '--quiet']],
    [['video', '--json', '--quiet', 'wait', 'video_1']],
    [['--json', 'video', 'wait', 'video_1', '--quiet']],
    [['batch', 'status', 'out', '--quiet', '--json']],
    [['probe', 'history', '--json', '--quiet']],
    [['load', 'merge', 'a.json', 'b.json', '--json', '--quiet']],
  ])('%j', async (argv) => {
    const r = await parsed(argv);
    expect(r.globals).toMatchObject({ json: true, quiet: true, verbose: false, color: true, validate: true });
  });

  it('value flags and negations too: --profile, --base-url, --no-color, --no-validate', async () => {
    const r = await parsed([
      'video',
      'wait',
      'video_1',
      '--base-url',
      'http://127.0.0.1:9',
      '--no-color',
      '--no-validate',
      '--verbose',
    ]);
    expect(r.globals).toMatchObject({
      baseUrl: 'http://127.0.0.1:9',
      color: false,
      validate: false,
      verbose: true,
    });
  });
});

describe('gw load and its merge/compare: a flag both declare goes to the one written before', () => {
  it('compare --tolerance and merge --out after the subcommand are the subcommand’s own', async () => {
    const c = await parsed(['load', 'compare', 'a.json', 'b.json', '--tolerance', '5%']);
    expect(c.flags.tolerance).toBe(0.05);
    const m = await parsed(['load', 'merge', 'a.json', 'b.json', '--out', 'all.json']);
    expect(m.flags.out).toBe('all.json');
  });

  it("written before the subcommand's name, they are parsed by the subcommand's schema", async () => {
    const c = await parsed(['load', '--tolerance', '5%', 'compare', 'a.json', 'b.json']);
    expect(c.flags.tolerance).toBe(0.05);
    const m = await parsed(['load', '--out', 'all.json', '--html', 'r.html', 'merge', 'a.json', 'b.json']);
    expect(m.flags).toEqual({ out: 'all.json', html: 'r.html', allowMissing: false });
    await expect(parsed(['load', '--tolerance', 'lots', 'compare', 'a.json', 'b.json'])).rejects.toThrow(
      /^--tolerance: "lots" must be a percentage/,
    );
  });
});

describe('--version after a command name', () => {
  it.each([[['models', '--version']], [['video', 'wait', 'video_1', '-V']]])(
    '%j prints the version and exits 0, as before the command name',
    async (argv) => {
      let out = '';
      const stdout = new PassThrough();
      stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
      const code = await main(argv, {
        stdout,
        stderr: new PassThrough(),
        stdin: Readable.from([]),
        env: { NO_COLOR: '1', ...isolatedDirs() },
        signal: new AbortController().signal,
      });
      expect(code).toBe(0);
      expect(out).toBe(`${VERSION}\n`);
    },
  );
});
