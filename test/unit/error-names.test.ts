/**
 * One error family with unique names: no two error classes exported from src/ share a name. The client's errors
 * (library) and the CLI's (exit codes) are different classes; if they shared a name, importing the wrong one would
 * compile and silently break `instanceof`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', '..', 'src');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Every exported class of src/: its name, its base class, the file declaring it. */
function exportedClasses(): Array<{ name: string; base: string; file: string }> {
  const out: Array<{ name: string; base: string; file: string }> = [];
  for (const file of tsFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(
      /^export\s+(?:abstract\s+)?class\s+(\w+)(?:<[^>]*>)?\s+extends\s+([\w.]+)/gm,
    )) {
      out.push({ name: m[1] ?? '', base: m[2] ?? '', file: relative(SRC, file) });
    }
  }
  return out;
}

/** The names of the error classes: those extending Error (or DOMException), directly or through another. */
function errorNames(classes: ReturnType<typeof exportedClasses>): Set<string> {
  const errors = new Set(['Error', 'DOMException']);
  for (let grew = true; grew;) {
    grew = false;
    for (const c of classes) {
      if (!errors.has(c.name) && errors.has(c.base)) {
        errors.add(c.name);
        grew = true;
      }
    }
  }
  errors.delete('Error');
  errors.delete('DOMException');
  return errors;
}

describe('error classes', () => {
  it('no two exported error classes across src/ share a name', () => {
    const classes = exportedClasses();
    const names = errorNames(classes);
    // The two families are both there (a renamed base class would make this test vacuous).
    expect(names).toContain('GatewayError');
    expect(names).toContain('GwError');
    expect(names).toContain('TimeoutError');
    expect(names).toContain('TimeLimitError');
    const files = new Map<string, string[]>();
    for (const c of classes) if (names.has(c.name)) files.set(c.name, [...(files.get(c.name) ?? []), c.file]);
    const shared = [...files].filter(([, where]) => where.length > 1);
    expect(shared).toEqual([]);
  });
});
