import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Output, TABLE_DRAW_MAX } from '../../../src/ui/output.js';
import { Redactor } from '../../../src/ui/redact.js';

function setup(tty: boolean, color = false): { out: Output; text: () => string } {
  let text = '';
  const stdout = Object.assign(new PassThrough(), tty ? { isTTY: true } : {});
  stdout.write = ((chunk: string) => {
    text += chunk;
    return true;
  }) as typeof stdout.write;
  const out = new Output(
    { stdout, stderr: new PassThrough(), stdin: new PassThrough(), env: {} },
    { json: false, quiet: false, verbose: false, color },
    new Redactor(),
  );
  return { out, text: () => text };
}

describe('Output.table', () => {
  it('off a terminal: a header and tab-separated columns; tabs and newlines in cells become spaces', async () => {
    const { out, text } = setup(false, true);
    await out.table(
      ['id', 'note'],
      [
        ['a', 'x\ty'],
        ['b', 'two\nlines'],
        ['c', undefined],
      ],
    );
    expect(text()).toBe('id\tnote\na\tx y\nb\ttwo lines\nc\t\n');
  });

  it('on a terminal: drawn with borders; no colour codes when colour is off', async () => {
    const { out, text } = setup(true);
    await out.table(['id'], [['a']]);
    expect(text()).toMatch(/│ id │/);
    expect(text()).not.toContain('\x1b[');
  });

  it('prints 200 000 rows on a terminal and off it (no argument-spread limits)', async () => {
    const rows = Array.from({ length: 200_000 }, (_, i) => [`id-${i}`, i]);
    for (const tty of [true, false]) {
      const { out, text } = setup(tty);
      await out.table(['id', 'n'], rows);
      const lines = text().trimEnd().split('\n');
      expect(lines).toHaveLength(200_001);
      expect(lines.at(-1)).toMatch(/^id-199999\s+199999$/);
    }
    expect(rows.length).toBeGreaterThan(TABLE_DRAW_MAX);
  });
});
