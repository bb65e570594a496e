/**
 * Every example of `gw <command> --help`, pasted in order into one shell against `gw sim`, works: ids are chained
 * with shell variables, files the examples name are created first. Lines that cannot run unattended here are
 * listed in SKIP with the reason (a terminal, a server that runs until stopped, a real remote gateway).
 * The script runs in a real bash; its `gw` runs in-process (GW_EXAMPLES_SPAWN=1: the real bin/gw).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makePng } from '../helpers/images.js';
import { isolatedDirs, runBash, runGw } from '../helpers/gw.js';
import { INSTANT, useSim } from '../helpers/sim.js';
import { startGwServer } from '../helpers/gw-server.js';
import { tempDir } from '../helpers/tmp.js';

/** The help pages, in the order a user would try them (later ones use the ids earlier ones set). */
const PAGES = [
  [],
  ['models'],
  ['chat'],
  ['responses'],
  ['messages'],
  ['embed'],
  ['image'],
  ['image', 'generate'],
  ['image', 'edit'],
  ['video'],
  ['video', 'create'],
  ['video', 'wait'],
  ['video', 'get'],
  ['video', 'download'],
  ['alpha'],
  ['alpha', 'i2v'],
  ['beta', 'asset', 'group'],
  ['beta', 'asset', 'group', 'create'],
  ['beta', 'asset'],
  ['beta', 'asset', 'create'],
  ['beta', 'asset', 'upload'],
  ['beta', 'asset', 'list'],
  ['beta', 'asset', 'get'],
  ['beta', 'asset', 'wait'],
  ['beta'],
  ['beta', 'task'],
  ['beta', 'task', 'create'],
  ['beta', 'task', 'wait'],
  ['beta', 'task', 'get'],
  ['beta', 'task', 'list'],
  ['beta', 'task', 'download'],
  ['beta', 'task', 'delete'],
  ['history'],
  ['config'],
  ['doctor'],
  ['completion'],
  ['probe'],
  ['sim'],
  ['login'],
];

/** Lines that need what a test cannot give, with the reason. */
const SKIP: Array<[RegExp, string]> = [
  [/^gw sim\b/, 'runs until stopped'],
  [/:8787/, 'talks to a `gw sim` on its default port'],
  [/^gw login$|^gw --profile \w+ login$/, 'asks on a terminal'],
  [/gw login --base-url https:\/\/gw\.example\.com/, 'logs in to a remote gateway'],
  [/^gw beta asset upload\s*(#.*)?$/, 'asks on a terminal'],
  [/^source <\(|> ~\/|\$\{fpath/, 'installs into the shell'],
  [/^gw probe --extended|^gw probe --model/, 'probes run in their own tests'],
  [/--every\b|--webhook https:/, 'watches run until stopped and post to a remote webhook'],
  // "slower" is judged on one sample per cell, so on a loaded machine these exit 1 by the clock's luck; the
  // baseline is tested with fixed latencies in probe-acceptance.test.ts.
  [/--baseline\b/, 'compares latencies of two runs'],
];

function examples(help: string): string[] {
  const at = help.indexOf('\nExamples:\n');
  if (at === -1) return [];
  const lines: string[] = [];
  for (const l of help.slice(at + '\nExamples:\n'.length).split('\n')) {
    if (!l.startsWith('  ')) break;
    lines.push(l.trim());
  }
  return lines;
}

function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

describe('--help examples', () => {
  it('work when pasted in order against gw sim', { timeout: 240_000 }, async () => {
    // Instant tasks: every `--wait` ends on its first look instead of sleeping between polls.
    const sim = await useSim({ timings: INSTANT });
    const work = tempDir('gw-examples-');
    const png = makePng(640, 360);
    for (const f of ['first.png', 'mask.png', 'still.png']) writeFileSync(join(work, f), png);
    writeFileSync(join(work, 'request.json'), JSON.stringify({ image: 'https://example.com/a.png' }));
    writeFileSync(join(work, 'lines.txt'), 'first line\nsecond line\n');
    writeFileSync(join(work, 'sim.json'), '{}');
    const run: string[] = [];
    const skipped: string[] = [];
    for (const page of PAGES) {
      const help = await runGw([...page, '--help']);
      expect(help.exitCode).toBe(0);
      for (const line of examples(help.stdout)) {
        const why = SKIP.find(([re]) => re.test(line))?.[1];
        if (why !== undefined) skipped.push(`${line}  (${why})`);
        else run.push(line);
      }
    }
    expect(run.length).toBeGreaterThan(40);
    const script = run
      .map(
        (l) => `eval ${quote(l)} </dev/null >/dev/null 2>>err.txt || echo ${quote(`EXAMPLE FAILED: ${l}`)}`,
      )
      .join('\n');
    // Each `gw` of the script runs in this worker (see gw-server.ts): the shell is real, gw is main() without a
    // Node start-up per line. GW_EXAMPLES_SPAWN=1 runs the real bin/gw instead.
    const server = process.env.GW_EXAMPLES_SPAWN === '1' ? undefined : await startGwServer();
    const r = await runBash(`set -o pipefail\n${server?.prelude ?? ''}\n${script}\necho done`, {
      cwd: work,
      env: { ...isolatedDirs(), ...sim.env, HOME: work, TOKEN: sim.env.GW_TOKEN },
    });
    const failed = r.stdout.split('\n').filter((l) => l.startsWith('EXAMPLE FAILED'));
    const errors = await import('node:fs').then((fs) => fs.readFileSync(join(work, 'err.txt'), 'utf8'));
    expect(failed, errors).toEqual([]);
    expect(r.stdout).toContain('done');
    expect(skipped.length).toBeLessThan(18);
    if (server !== undefined) {
      await server.close();
      expect(server.stackTraces).toEqual([]);
      // Every example ran gw at least once through the server (a function the shell did not use runs nothing).
      expect(server.runs).toBeGreaterThanOrEqual(run.length);
    }
  });
});
