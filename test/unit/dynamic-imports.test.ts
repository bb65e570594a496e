/**
 * `import()` only where loading late is the point (docs/architecture.md "Imports"): at verb boundaries (a verb's
 * lazy handler, the registry's command groups) and for heavy optional modules. Everything else is a static
 * import. A new dynamic import fails here until it is listed below with its reason.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', '..', 'src');

/** Packages heavy enough to load only when used (import time of each, measured on Node 20: 60–190 ms). */
const HEAVY_PACKAGES = new Set(['ora', '@inquirer/prompts', 'cli-table3', 'playwright-core']);

/** The HTML reports: their charts bring hdr-histogram (300 KB); loaded only for `--html`. */
const REPORTS = '../../report/index.js';

/** `file: [specifiers]`, each with why it loads late. */
const ALLOWED: Record<string, readonly string[]> = {
  // The hidden verb `gw __complete` (every Tab press) and the runtime of a verb that runs (not for help pages).
  'cli/main.ts': ['./complete.js', './context.js'],
  // The client brings undici (1.1 MB); prompts only for `gw login` at a terminal.
  'cli/context.ts': ['../client/gateway-client.js'],
  // Telemetry: the OTLP exporter (a worker thread with the OpenTelemetry SDK) and Prometheus remote write load
  // only for --otlp / --remote-write.
  'commands/shared/otlp.ts': ['../../core/otlp-thread.js'],
  // alpha's resource imports undici (FormData): a plan (`gw batch run --dry-run`) never loads it.
  'batch/endpoints.ts': ['../client/resources/alpha.js'],
  'commands/batch/status.run.ts': [REPORTS],
  'commands/load/merge.run.ts': [REPORTS],
  'commands/load/run.ts': [REPORTS, '../../load/remote-write.js'],
  'commands/probe/history.run.ts': [REPORTS],
  // `--every` brings the metrics endpoint (prom-client, 190 KB).
  'commands/probe/run.ts': [REPORTS, '../../probe/watch-command.js'],
  // The simulator: `gw probe --sim` starts the routes of its first checks first (its start-up is measured).
  'probe/sim.ts': [
    '../sim/server.js',
    '../sim/config.js',
    '../sim/routes/models.js',
    '../sim/routes/videos.js',
    '../sim/routes/text.js',
  ],
  'sim/server.ts': ['./routes/index.js'],
};

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

interface Site {
  file: string;
  specifier: string;
  /** The text before `import(` on its line (`handler: () => `, `load: () => `). */
  before: string;
}

/** Every `import(…)` expression of src/ (comment lines left out), with its specifier as written. */
function dynamicImports(): Site[] {
  const out: Site[] = [];
  for (const path of tsFiles(SRC)) {
    const file = relative(SRC, path).split(sep).join(posix.sep);
    const lines = readFileSync(path, 'utf8').split('\n');
    for (const line of lines) {
      if (/^\s*(\/\/|\/\*|\*)/.test(line)) continue;
      for (const m of line.matchAll(/\bimport\s*\(\s*(?:(['"`])([^'"`$]*)\1)?/g)) {
        const before = line.slice(0, m.index);
        // `typeof import('x')` / `import('x').T` in a type: not a load (consistent-type-imports forbids them).
        if (/typeof\s*$/.test(before)) continue;
        out.push({ file, specifier: m[2] ?? '<computed>', before });
      }
    }
  }
  return out;
}

/** True for a site at a verb boundary or listed above. */
function allowed(s: Site): boolean {
  // A verb's handler: `handler: () => import('./create.run.js')` in its definition.
  if (s.file.startsWith('commands/') && /\bhandler:\s*\(\)\s*=>\s*$/.test(s.before))
    return /^\.\/[\w.-]+\.js$/.test(s.specifier);
  // A command group of the registry: `load: () => import('../commands/video/index.js')`.
  if (s.file === 'cli/registry.ts' && /\bload:\s*\(\)\s*=>\s*$/.test(s.before))
    return /^\.\.\/commands\/[\w-]+\/index\.js$/.test(s.specifier);
  if (HEAVY_PACKAGES.has(s.specifier)) return true;
  return ALLOWED[s.file]?.includes(s.specifier) === true;
}

describe('dynamic imports', () => {
  const sites = dynamicImports();

  it('only at verb boundaries and for heavy optional modules', () => {
    const others = sites.filter((s) => !allowed(s)).map((s) => `${s.file}: import('${s.specifier}')`);
    expect(others).toEqual([]);
  });

  it('finds the boundaries (the scan is not blind)', () => {
    expect(sites.filter((s) => s.before.includes('handler:')).length).toBeGreaterThan(40);
    expect(sites.filter((s) => s.file === 'cli/registry.ts').length).toBeGreaterThan(15);
  });

  it('every listed site still exists (the list does not outlive the code)', () => {
    const stale = Object.entries(ALLOWED).flatMap(([file, specs]) =>
      specs
        .filter((spec) => !sites.some((s) => s.file === file && s.specifier === spec))
        .map((s) => `${file}: ${s}`),
    );
    expect(stale).toEqual([]);
  });
});
