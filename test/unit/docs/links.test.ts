import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const DOCS = readdirSync(join(ROOT, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`);
/** What the package ships (package.json `files`): a user's copy of the docs can only link to these. */
const SHIPPED = /^(bin|dist|docs)\/|^(README\.md|LICENSE)$/;

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchors(file: string): Set<string> {
  const text = readFileSync(join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1] as string)));
}

/** Relative links of a Markdown file: [target file (repository path), anchor]. */
function links(file: string): Array<{ target: string; anchor?: string; raw: string }> {
  const text = readFileSync(join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  const out: Array<{ target: string; anchor?: string; raw: string }> = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const raw = m[1] as string;
    if (/^(https?:|mailto:)/.test(raw)) continue;
    const [path, anchor] = raw.split('#') as [string, string | undefined];
    const target = path === '' ? file : normalize(join(dirname(file), path)).replace(/\\/g, '/');
    out.push(anchor === undefined ? { target, raw } : { target, anchor, raw });
  }
  return out;
}

describe('links of the README and docs/', () => {
  it.each(['README.md', ...DOCS])('%s: every relative link names a file and a heading that exist', (file) => {
    const broken = links(file)
      .filter(
        (l) =>
          !existsSync(join(ROOT, l.target)) ||
          (l.anchor !== undefined && l.target.endsWith('.md') && !anchors(l.target).has(l.anchor)),
      )
      .map((l) => l.raw);
    expect(broken).toEqual([]);
  });

  it.each(DOCS)('%s: links only to what the package ships', (file) => {
    const outside = links(file)
      .map((l) => relative(ROOT, join(ROOT, l.target)).replace(/\\/g, '/'))
      .filter((t) => !SHIPPED.test(t));
    expect(outside).toEqual([]);
  });
});
