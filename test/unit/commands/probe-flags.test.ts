/**
 * `gw probe`'s flags are parsed by its definition's schema: a bad value, or a flag without the one it belongs to,
 * is exit 2 naming the flag as typed, and the handler module is never loaded (nothing of the probe starts).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { rootProgram } from '../../../src/cli/main.js';
import { createRuntime } from '../../../src/cli/context.js';
import { verbCommand, type VerbHandler } from '../../../src/cli/verb.js';
import { probeVerb } from '../../../src/commands/probe/index.js';
import type { probeFlags } from '../../../src/commands/probe/flags.js';
import { UsageError } from '../../../src/core/errors.js';
import { isolatedDirs } from '../../helpers/gw.js';

/** Runs `gw probe <argv>` with a spy in place of the handler module. */
async function probeWith(
  argv: string[],
): Promise<{ error: unknown; load: ReturnType<typeof vi.fn>; flags: unknown }> {
  let flags: unknown;
  const run = vi.fn<VerbHandler<typeof probeFlags>>(async (_ctx, f) => {
    flags = f;
    return 0;
  });
  const load = vi.fn(async () => ({ default: run }));
  const io = {
    stdout: new PassThrough(),
    stderr: new PassThrough(),
    stdin: Readable.from([]),
    env: { NO_COLOR: '1', ...isolatedDirs() },
  };
  const rt = createRuntime(io, new AbortController().signal, { onContext: () => {}, onExit: () => {} });
  const program = rootProgram().addCommand(verbCommand({ ...probeVerb, handler: load }, rt));
  program.exitOverride();
  for (const c of program.commands) c.exitOverride();
  let error: unknown;
  try {
    await program.parseAsync(['probe', ...argv], { from: 'user' });
  } catch (e) {
    error = e;
  }
  return { error, load, flags };
}

describe('gw probe flags', () => {
  it.each([
    [['--video-timeout', 'soon'], '--video-timeout', /"soon" is not a duration/],
    [['--every', '0'], '--every', /must be more than zero/],
    [['--every', '1m', '--metrics-port', '70000'], '--metrics-port', /from 0 to 65535/],
    [
      ['--every', '1m', '--webhook', 'https://h.example/x', '--alert-after', 'x'],
      '--alert-after',
      /not an integer/,
    ],
    [['--every', '1m', '--webhook', 'ftp://h.example/x'], '--webhook', /must be an http\(s\) URL/],
    [['--slo', 'fast'], '--slo', /"fast" is not <measure>/],
    [['--warn-slo', 'ttft<soon'], '--warn-slo', /not a duration/],
    [['--only', 'vidoe'], '--only', /"vidoe" is not a check \(one of: models, chat/],
    [['--skip', 'chat,vidoe'], '--skip', /"vidoe" is not a check/],
    [['--all-models', '--kind', 'vidoe'], '--kind', /"vidoe" is not a kind/],
    [['--all-models', '--budget', '20'], '--budget', /must be an amount and a currency/],
    [['--all-models', '--model-timeout', 'x'], '--model-timeout', /not a duration/],
    [['--all-models', '--probe-image', 'http://example.com/a.png'], '--probe-image', /public https URL/],
    [['--all-models', '--kind', 'beta'], '--budget', /beta creates paid tasks/],
    [['--kind', 'chat'], '--kind', /only with --all-models/],
    [['--webhook', 'https://h.example/x'], '--webhook', /only with --every/],
    [['--every', '1m', '--alert-after', '2'], '--alert-after', /only with --webhook/],
    [['--all-models', '--only', 'chat'], '--only', /not with --all-models/],
    [['--every', '1m', '--junit', 'x.xml'], '--junit', /not with --every/],
    [['--every', '1m', '--html', 'x.html'], '--html', /not with --every/],
  ])('%j: exit 2 naming %s, the handler never loaded', async (argv, field, message) => {
    const r = await probeWith(argv);
    expect(r.error).toBeInstanceOf(UsageError);
    const e = r.error as UsageError;
    expect(e.exitCode).toBe(2);
    expect(e.message.startsWith(`${field}: `), e.message).toBe(true);
    expect(e.message).toMatch(message);
    expect(e.field).toBe(field);
    expect(r.load).not.toHaveBeenCalled();
  });

  it('hands the handler parsed values: durations in ms, bounds, budgets, kinds, ports', async () => {
    const r = await probeWith([
      '--all-models',
      '--kind',
      'chat,video',
      '--budget',
      '20CNY',
      '--slo',
      'ttft<2s',
    ]);
    expect(r.error).toBeUndefined();
    expect(r.flags).toMatchObject({
      allModels: true,
      kind: ['chat', 'video'],
      budget: new Map([['CNY', 20]]),
      slo: { ttft: 2000 },
      videoTimeout: 600_000,
      history: true,
    });
    const w = await probeWith(['--every', '30s', '--metrics-port', '0', '--webhook', 'https://h.example/x']);
    expect(w.flags).toMatchObject({ every: 30_000, metricsPort: 0, webhook: 'https://h.example/x' });
  });
});

describe('gw probe definition', () => {
  it('parses its flags without loading a family contract (the zod schemas of videos, tasks, text)', () => {
    const src = resolve(import.meta.dirname, '../../../src');
    const seen = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const code = readFileSync(file, 'utf8');
      // Static value imports only: `import type` is erased, `import()` loads later.
      for (const m of code.matchAll(/^import (?!type )[^'"]*?from '(\.[^']+)\.js';$/gm)) {
        visit(join(dirname(file), `${m[1]}.ts`));
      }
    };
    visit(join(src, 'commands/probe/index.ts'));
    const reached = [...seen].map((f) => f.slice(src.length + 1));
    expect(reached).toContain('commands/probe/flags.ts');
    expect(reached.filter((f) => /^contract\/(video|beta|text|alpha|estimate)\.ts$/.test(f))).toEqual([]);
  });
});
