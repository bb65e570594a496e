/**
 * The verb declaration helper: flags parsed by the definition's zod schema (a failure is exit 2 naming the flag,
 * before the handler is even loaded), handlers loaded only when the verb runs, help and completion read the
 * definition, and every verb of gw is declared this way.
 */
import type { Command } from 'commander';
import { CommanderError } from 'commander';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { buildProgram, main, rootProgram } from '../../../src/cli/main.js';
import { createRuntime, type Runtime } from '../../../src/cli/context.js';
import { duration, int } from '../../../src/cli/flag-types.js';
import { declared, defineVerb, flag, verbCommand, type VerbHandler } from '../../../src/cli/verb.js';
import { completionScript } from '../../../src/core/completion.js';
import { UsageError } from '../../../src/core/errors.js';
import { loadVerb } from '../../../src/commands/load/index.js';
import { isolatedDirs } from '../../helpers/gw.js';

function io(): { io: Parameters<typeof main>[1] & object; out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let o = '';
  let e = '';
  stdout.on('data', (c: Buffer) => (o += c.toString('utf8')));
  stderr.on('data', (c: Buffer) => (e += c.toString('utf8')));
  return {
    io: { stdout, stderr, stdin: Readable.from([]), env: { NO_COLOR: '1', ...isolatedDirs() } },
    out: () => o,
    err: () => e,
  };
}

const flags = z.object({
  every: flag(duration('every').optional(), { flag: '--every <duration>', help: 'how often' }),
  count: flag(int('count', { min: 1, max: 9 }).default(3), { flag: '-n, --count <n>', help: 'how many' }),
  shape: flag(z.enum(['round', 'square']).optional(), { flag: '--shape <s>', help: 'the shape' }),
  loud: flag(z.boolean().optional(), { flag: '--loud', help: 'shout', negate: 'whisper' }),
  tag: flag(z.array(z.string()).default([]), {
    flag: '--tag <t>',
    help: 'a tag (repeatable)',
    repeat: 'csv',
  }),
});

/** A test verb whose handler module is a spy: it records whether it was loaded and with what. */
function testVerb(): {
  cmd: (rt: Runtime) => Command;
  load: ReturnType<typeof vi.fn>;
  run: ReturnType<typeof vi.fn>;
} {
  const run = vi.fn<VerbHandler<typeof flags, [string]>>(async () => 0);
  const load = vi.fn(async () => ({ default: run }));
  const spec = defineVerb<typeof flags, [string]>({
    name: 'thing',
    description: 'a thing',
    args: [{ name: '<name>', help: 'its name' }],
    flags,
    notes: 'Output: one line.',
    examples: ['gw thing a --every 5m', 'gw thing b --shape round'],
    handler: load,
  });
  return { cmd: (rt) => verbCommand(spec, rt), load, run };
}

async function runThing(argv: string[]): Promise<{
  code: number | undefined;
  error: unknown;
  load: ReturnType<typeof vi.fn>;
  run: ReturnType<typeof vi.fn>;
  stdout: string;
  stderr: string;
}> {
  const t = testVerb();
  const s = io();
  let code: number | undefined;
  const rt = createRuntime(s.io, new AbortController().signal, {
    onContext: () => {},
    onExit: (c) => (code = c),
  });
  const program = rootProgram().addCommand(t.cmd(rt));
  program.exitOverride();
  // Commander's own messages go to the run's streams, never the test runner's (a stray line in `npm test`).
  const output = {
    writeOut: (x: string) => s.io.stdout.write(x),
    writeErr: (x: string) => s.io.stderr.write(x),
  };
  program.configureOutput(output);
  for (const c of program.commands) c.exitOverride().configureOutput(output);
  let error: unknown;
  try {
    await program.parseAsync(['thing', ...argv], { from: 'user' });
  } catch (e) {
    error = e;
  }
  await new Promise((r) => setImmediate(r));
  return { code, error, load: t.load, run: t.run, stdout: s.out(), stderr: s.err() };
}

describe('verbCommand: flags parsed by the schema', () => {
  it('hands the handler typed values: durations in ms, integers, schema defaults, csv lists', async () => {
    const r = await runThing(['a', '--every', '1m30s', '--tag', 'x,y', '--tag', 'z', '--no-loud']);
    expect(r.error).toBeUndefined();
    expect(r.run).toHaveBeenCalledTimes(1);
    const [, got, name] = r.run.mock.calls[0] as [unknown, Record<string, unknown>, string];
    expect(name).toBe('a');
    expect(got).toEqual({ every: 90_000, count: 3, tag: ['x', 'y', 'z'], loud: false });
    expect(r.code).toBe(0);
  });

  it.each([
    [['--every', 'soon'], /^--every: "soon" is not a duration/],
    [['-n', 'two'], /^--count: "two" is not an integer/],
    [['-n', '12'], /^--count: must be an integer from 1 to 9/],
  ])('%j is a usage error naming the flag, and the handler is never loaded', async (argv, message) => {
    const r = await runThing(['a', ...argv]);
    expect(r.error).toBeInstanceOf(UsageError);
    expect((r.error as UsageError).exitCode).toBe(2);
    expect((r.error as UsageError).message).toMatch(message);
    expect(r.load).not.toHaveBeenCalled();
  });

  it('an enum flag is checked by its choices (exit 2), the handler not loaded', async () => {
    const leak = vi.spyOn(process.stderr, 'write');
    const r = await runThing(['a', '--shape', 'oval']).finally(() => leak.mockRestore());
    // Said on the run's own stderr, not the test runner's.
    expect(leak).not.toHaveBeenCalled();
    expect(r.stderr).toMatch(/argument 'oval' is invalid/);
    expect(r.error).toBeInstanceOf(CommanderError);
    expect((r.error as CommanderError).message).toMatch(/--shape.*Allowed choices are round, square/);
    expect(r.load).not.toHaveBeenCalled();
  });

  it('--help shows the flags, the default, notes and examples without loading the handler', async () => {
    const r = await runThing(['--help']);
    expect(r.load).not.toHaveBeenCalled();
    expect(r.stdout).toMatch(/-n, --count <n>\s+how many \(default: 3\)/);
    expect(r.stdout).toMatch(/--no-loud\s+whisper/);
    expect(r.stdout).toMatch(
      /Output: one line\.\n\nExamples:\n {2}gw thing a --every 5m\n {2}gw thing b --shape round/,
    );
  });

  it('a flag spelled unlike its schema key is refused when the verb is built', () => {
    const bad = z.object({ fooBar: flag(z.string().optional(), { flag: '--foo <x>', help: 'x' }) });
    const spec = defineVerb({
      name: 'bad',
      description: 'bad',
      flags: bad,
      handler: async () => ({ default: async () => {} }),
    });
    expect(() => verbCommand(spec, { io: io().io, action: () => async () => {} })).toThrow(
      /commander names foo/,
    );
  });
});

describe('completion reads the definitions', () => {
  it('lists a verb’s flags and the choices of its enum flags', () => {
    const t = testVerb();
    const root = rootProgram().addCommand(t.cmd({ io: io().io, action: () => async () => {} }));
    const script = completionScript('bash', root, { flags: {}, args: {} });
    expect(script).toContain('--every');
    expect(script).toContain('--no-loud');
    expect(script).toContain("'thing|--shape') printf '%s\\n' 'round' 'square'");
    expect(t.load).not.toHaveBeenCalled();
  });
});

describe('every verb of gw', () => {
  it('is declared with defineVerb (a lazy handler), and `--help` of each loads no handler', async () => {
    const rt: Runtime = { io: io().io, action: () => async () => {} };
    const program = await buildProgram(['completion'], rt);
    const leaves: string[] = [];
    const undeclared: string[] = [];
    const walk = (cmd: Command, path: string[]): void => {
      for (const sub of cmd.commands) {
        if (sub.name() === 'help') continue;
        const p = [...path, sub.name()];
        if (sub.commands.length > 0) walk(sub, p);
        // A verb is a command with an action (a group may be one too: `gw probe`, `gw load`).
        if ((sub as unknown as { _actionHandler: unknown })._actionHandler !== null) {
          leaves.push(p.join(' '));
          if (!declared.has(sub)) undeclared.push(p.join(' '));
        }
      }
    };
    walk(program, []);
    expect(leaves.length).toBeGreaterThan(40);
    expect(undeclared).toEqual([]);
  });

  it('a bad flag value of a real verb is exit 2 naming the flag, nothing sent (no gateway configured)', async () => {
    const s = io();
    const code = await main(['chat', '-m', 'x', '--temperature', 'warm', 'hi'], s.io);
    expect(code).toBe(2);
    expect(s.err()).toMatch(/error: invalid_input: --temperature: "warm" is not a number/);
  });
});

describe('gw load: every flag value and combination parsed before the handler loads', () => {
  async function runLoadVerb(
    argv: string[],
  ): Promise<{ error: unknown; load: ReturnType<typeof vi.fn>; run: ReturnType<typeof vi.fn> }> {
    const run = vi.fn(async () => 0);
    const load = vi.fn(async () => ({ default: run }));
    const s = io();
    const rt = createRuntime(s.io, new AbortController().signal, { onContext: () => {}, onExit: () => {} });
    const program = rootProgram().addCommand(verbCommand({ ...loadVerb, handler: load }, rt));
    program.exitOverride();
    for (const c of program.commands) c.exitOverride();
    let error: unknown;
    try {
      await program.parseAsync(['load', '-m', 'chat-3.7-plus', ...argv], { from: 'user' });
    } catch (e) {
      error = e;
    }
    return { error, load, run };
  }

  it.each([
    [['--rate', 'fast'], /^--rate: "fast" must be a number above 0/],
    [['--duration', 'soon'], /^--duration: "soon" is not a duration/],
    [['--sweep', 'users=1,2'], /^--sweep: "users=1,2" is not concurrency=/],
    [['--slo', 'speed<1s'], /^--slo: "speed<1s" has an unknown metric/],
    [['--stop-on', 'errors>5'], /^--stop-on: "errors>5" needs a percentage/],
    [['--mix', 'chat=0'], /^--mix: the weight of chat must be above 0/],
    [['--rate', '5', '--arrival', 'zipf'], /^--arrival: "zipf" is not poisson/],
    [['--api', 'video', '--budget', 'lots'], /^--budget: "lots" must be an amount and a currency/],
    [['--baseline', 'b.json', '--tolerance', 'much'], /^--tolerance: "much" must be a percentage/],
    [['--concurrency', '4', '--rate', '10'], /^--rate: cannot be combined with --concurrency/],
    [
      ['--api', 'video', '-m', 'clip-1.1-t2v', '--budget', '1CNY'],
      /^--budget: 1 CNY does not cover one video/,
    ],
  ])('%j: a usage error naming the flag, and the handler is never loaded', async (argv, message) => {
    const r = await runLoadVerb(argv);
    expect(r.error).toBeInstanceOf(UsageError);
    expect((r.error as UsageError).message).toMatch(message);
    expect(r.load).not.toHaveBeenCalled();
  });

  it('hands the handler typed values: durations in ms, numbers, the sweep, expressions, budgets, a fraction', async () => {
    const r = await runLoadVerb([
      '--sweep',
      'rate=10,20',
      '--duration',
      '1m30s',
      '--slo',
      'ttft.p95<800ms',
      '--baseline',
      'b.json',
      '--tolerance',
      '5%',
    ]);
    expect(r.error).toBeUndefined();
    const got = (r.run.mock.calls[0] as unknown[])[1] as Record<string, unknown>;
    expect(got).toMatchObject({
      duration: 90_000,
      sweep: { parameter: 'rate', values: [10, 20] },
      slo: { text: 'ttft.p95<800ms', saturation: false },
      tolerance: 0.05,
    });
    const video = await runLoadVerb(['--api', 'video', '-m', 'clip-1.1-t2v', '--budget', '20CNY']);
    expect(((video.run.mock.calls[0] as unknown[])[1] as { budget: unknown }).budget).toEqual(
      new Map([['CNY', 20]]),
    );
  });
});
