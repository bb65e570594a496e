/**
 * The layers of docs/architecture.md, checked without ESLint: every import of src/ (static, `export … from`,
 * dynamic `import('…')`, and `import('…').T` in types) is resolved to the top-level folder it reaches, and that
 * direction must be allowed. Fails even when someone disables the lint rule on a line.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', '..', 'src');

const BELOW_APP = ['ui', 'core', 'client', 'contract'];
const APP = ['commands', 'probe', 'batch', 'load', 'report'];

/**
 * Which layers each layer may import (its own files always). `index` is src/index.ts; `cli` is src/cli/, the
 * CLI machinery (main, context, verb, globals, registry, completion words). The engines (probe, batch, load) are
 * libraries: they never import the CLI (`commands/`, `cli/`).
 */
const ALLOWED: Record<string, readonly string[]> = {
  contract: [],
  client: ['contract'],
  core: ['client', 'contract'],
  ui: ['core', 'client', 'contract'],
  sim: ['contract'],
  // The library entry: the client, the contract and the engines (load, batch, probe).
  index: ['client', 'contract', 'load', 'batch', 'probe'],
  // HTML reports are drawn from JSON documents: the types of the probe, batch and load documents only (below).
  report: ['core', 'contract'],
  commands: ['cli', ...APP, ...BELOW_APP],
  probe: ['batch', 'load', 'report', ...BELOW_APP],
  batch: ['probe', 'load', 'report', ...BELOW_APP],
  load: ['probe', 'batch', 'report', ...BELOW_APP],
  cli: [...APP, ...BELOW_APP],
};

/** The features whose document types the reports may import (`import type` only: erased, no runtime cycle). */
const REPORTED = ['probe', 'batch', 'load'];

/** Narrow exceptions: the commands that start the simulator, and the reports' view of the documents' types. */
function excepted(from: string, layer: string, target: string, typeOnly: boolean): boolean {
  if (target === 'sim') return from === 'commands/sim/run.ts' || from === 'probe/sim.ts';
  return layer === 'report' && REPORTED.includes(target) && typeOnly;
}

interface Import {
  specifier: string;
  typeOnly: boolean;
  dynamic: boolean;
}

const STATIC = /^[ \t]*(import|export)\s+(type\s+)?(?:[^;'"`]*?\sfrom\s*)?(['"])([^'"]+)\3/gm;
const DYNAMIC = /\bimport\s*\(\s*(?:(['"`])([^'"`$]*)\1|([^)]*))/g;

/**
 * Every module specifier of one file, with whether it is type-only or dynamic. Regular expressions over the text
 * without its comment lines (a TypeScript parse of src/ takes seconds); the third test below keeps them honest.
 */
function importsOf(text: string): Import[] {
  const code = text
    .split('\n')
    .map((l) => (/^\s*(\/\/|\/\*|\*)/.test(l) ? '' : l))
    .join('\n');
  const out: Import[] = [];
  for (const m of code.matchAll(STATIC)) {
    out.push({ specifier: m[4] ?? '', typeOnly: m[2] !== undefined, dynamic: false });
  }
  for (const m of code.matchAll(DYNAMIC)) {
    // A computed specifier (a variable, a template with a substitution) cannot be checked: name the module.
    const specifier = m[2] ?? `<computed: ${(m[3] ?? '').trim()}>`;
    out.push({
      specifier,
      typeOnly: /^\s*\)\s*\./.test(code.slice((m.index ?? 0) + m[0].length)),
      dynamic: true,
    });
  }
  return out;
}

/** The layer of a path relative to src/ (posix): its top-level folder, or `index` for the library entry. */
function layerOf(rel: string): string {
  const [head = '', ...rest] = rel.split('/');
  return rest.length === 0 ? head.replace(/\.ts$/, '') : head;
}

/** The broken directions among `files` (path relative to src/, posix → text). */
function violations(files: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [from, text] of files) {
    const layer = layerOf(from);
    const allowed = ALLOWED[layer];
    if (allowed === undefined) {
      out.push(`${from}: src/${layer} is in no layer; add it to docs/architecture.md and this test`);
      continue;
    }
    for (const imp of importsOf(text)) {
      if (imp.specifier.startsWith('<computed')) {
        out.push(`${from}: import(${imp.specifier}) cannot be checked`);
        continue;
      }
      if (!imp.specifier.startsWith('.')) continue; // packages and node: builtins
      const target = posix.normalize(posix.join(posix.dirname(from), imp.specifier));
      if (target.startsWith('..')) {
        out.push(`${from}: ${imp.specifier} leaves src/`);
        continue;
      }
      const to = layerOf(target.replace(/\.js$/, '.ts'));
      // The program's entry (main) is imported by nothing in src/ but its own folder.
      if (target === 'cli/main.js' && layer !== 'cli') {
        out.push(`${from}: imports ${imp.specifier} (only src/cli/ may import the program's entry)`);
        continue;
      }
      if (to === layer || allowed.includes(to) || excepted(from, layer, to, imp.typeOnly)) continue;
      const how = imp.dynamic ? 'dynamically ' : imp.typeOnly ? 'types from ' : '';
      out.push(`${from}: imports ${how}${imp.specifier} (src/${layer} may not import src/${to})`);
    }
  }
  return out;
}

function sources(dir: string, into = new Map<string, string>()): Map<string, string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) sources(p, into);
    else if (e.name.endsWith('.ts')) into.set(relative(SRC, p).split(sep).join('/'), readFileSync(p, 'utf8'));
  }
  return into;
}

describe('layers of src/ (docs/architecture.md)', () => {
  it('every import of src/, static or dynamic, goes in an allowed direction', () => {
    const files = sources(SRC);
    expect(files.size).toBeGreaterThan(100);
    expect(files.has('contract/validate.ts') && files.has('cli/main.ts') && files.has('index.ts')).toBe(true);
    expect(violations(files)).toEqual([]);
  });

  it('catches what it is meant to catch', () => {
    const bad = new Map<string, string>([
      ['contract/a.ts', "import { UsageError } from '../core/errors.js';"],
      ['client/b.ts', "export async function f() { return import('../core/download.js'); }"],
      ['core/c.ts', "export type { X } from '../ui/output.js';"],
      ['sim/d.ts', 'const m = await import(`../client/errors.js`);'],
      ['sim/routes/e.ts', "type T = import('../../core/errors.js').GwError;"],
      ['index.ts', "export { main } from './cli/main.js';"],
      ['batch/j.ts', "import type { Context } from '../cli/context.js';"],
      ['load/k.ts', "import { x } from '../commands/load/run.js';"],
      ['commands/l.ts', "import { main } from '../cli/main.js';"],
      ['report/f.ts', "import { run } from '../probe/runner.js';"],
      ['report/f2.ts', "import { batchStatus } from '../batch/status.js';"],
      ['report/f3.ts', "export async function f() { return import('../load/schema.js'); }"],
      ['report/f4.ts', "import type { GatewayClient } from '../client/gateway-client.js';"],
      ['commands/g.ts', "import '../sim/server.js';"],
      ['ui/h.ts', 'const m = await import(name);'],
      ['newfolder/i.ts', ''],
    ]);
    const v = violations(bad);
    expect(v).toHaveLength(bad.size);
    for (const file of bad.keys()) expect(v.some((line) => line.startsWith(`${file}:`))).toBe(true);
  });

  it('lets through what the layers allow', () => {
    const good = new Map<string, string>([
      ['client/resources/a.ts', "import { check } from '../../contract/validate.js';\nimport('node:dns');"],
      ['core/b.ts', "import { GatewayError } from '../client/errors.js';"],
      ['sim/routes/c.ts', "import { x } from '../server.js';\nimport { y } from '../../contract/beta.js';"],
      ['report/d.ts', "import type { ProbeReport } from '../probe/runner.js';\nimport('./load.js');"],
      [
        'report/d2.ts',
        "import type { StatusDoc } from '../batch/status.js';\nimport type { RunReport } from '../load/schema.js';",
      ],
      ['probe/sim.ts', "const m = await import('../sim/server.js');"],
      ['commands/e.ts', "import { run } from '../batch/run.js';\nimport { y } from '../core/x.js';"],
      ['commands/video/f.ts', "import type { Context } from '../../cli/context.js';"],
    ]);
    expect(violations(good)).toEqual([]);
  });
});
