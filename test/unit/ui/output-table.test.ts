import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Output, TABLE_DRAW_MAX, fitWidths, formatLocalTime } from '../../../src/ui/output.js';
import { Redactor } from '../../../src/ui/redact.js';

function setup(
  tty: boolean,
  color = false,
  columns?: number,
): { out: Output; text: () => string; err: () => string } {
  let text = '';
  let err = '';
  const stdout = Object.assign(
    new PassThrough(),
    tty ? { isTTY: true, ...(columns !== undefined ? { columns } : {}) } : {},
  );
  const stderr = new PassThrough();
  stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  stdout.write = ((chunk: string) => {
    text += chunk;
    return true;
  }) as typeof stdout.write;
  const out = new Output(
    { stdout, stderr, stdin: new PassThrough(), env: {} },
    { json: false, quiet: false, verbose: false, color },
    new Redactor(),
  );
  return { out, text: () => text, err: () => err };
}

/** Display width of a drawn line (box-drawing and ASCII characters are one column each). */
const width = (line: string): number => [...line].length;

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

  it('on an 80-column terminal: the widest column is cut with …, the kept ones (ids) stay whole', async () => {
    const long = 'a detail far longer than any terminal is wide, '.repeat(4);
    for (const color of [false, true]) {
      const { out, text } = setup(true, color, 80);
      await out.table(
        ['check', 'request id', 'detail'],
        [
          ['chat', 'req-0123456789abcdef0123', long],
          ['video', 'req-1', 'short'],
        ],
        { keep: [1] },
      );
      const lines = text()
        // eslint-disable-next-line no-control-regex
        .replace(/\x1b\[[0-9;]*m/g, '')
        .trimEnd()
        .split('\n');
      expect(Math.max(...lines.map(width))).toBeLessThanOrEqual(80);
      expect(lines.join('\n')).toContain('req-0123456789abcdef0123');
      expect(lines.find((l) => l.includes('chat'))).toMatch(/a detail far .*… │$/);
    }
  });

  it('past TABLE_DRAW_MAX rows the padded columns fit the width too', async () => {
    const rows = Array.from({ length: TABLE_DRAW_MAX + 1 }, (_, i) => [`id-${i}`, 'x'.repeat(200)]);
    const { out, text } = setup(true, false, 60);
    await out.table(['id', 'text'], rows, { keep: [0] });
    const lines = text().trimEnd().split('\n');
    expect(Math.max(...lines.map(width))).toBeLessThanOrEqual(60);
    expect(lines[1]).toMatch(/^id-0 +x+…$/);
  });

  it('off a terminal nothing is cut', async () => {
    const { out, text } = setup(false, false, 40);
    await out.table(['id', 'text'], [['a', 'y'.repeat(300)]]);
    expect(text()).toBe(`id\ttext\na\t${'y'.repeat(300)}\n`);
  });
});

describe('fitWidths', () => {
  it('cuts the widest columns to one level, never below the minimum nor the kept ones', () => {
    expect(fitWidths([10, 20, 30], 100)).toEqual([10, 20, 30]);
    expect(fitWidths([10, 20, 60], 60)).toEqual([10, 20, 30]);
    expect(fitWidths([10, 40, 60], 60)).toEqual([10, 25, 25]);
    expect(fitWidths([10, 40, 60], 60, [1])).toEqual([10, 40, 10]);
    expect(fitWidths([10, 40, 60], 20, [1])).toEqual([6, 40, 6]);
  });
});

describe('Output.aside and Output.time', () => {
  it('an aside (a summary) follows the table on a terminal and goes to stderr off one', () => {
    const tty = setup(true);
    tty.out.aside('OK: 6 checks');
    expect([tty.text(), tty.err()]).toEqual(['OK: 6 checks\n', '']);
    const pipe = setup(false);
    pipe.out.aside('OK: 6 checks');
    expect([pipe.text(), pipe.err()]).toEqual(['', 'OK: 6 checks\n']);
  });

  it('a time is local and absolute off a terminal; on a terminal with how long ago (a table cell: only that)', () => {
    const at = new Date(Date.UTC(2026, 10, 22, 13, 3, 5));
    const now = at.getTime() + 25_000;
    expect(setup(false).out.time(at, { now })).toBe(formatLocalTime(at));
    expect(setup(true).out.time(at.toISOString(), { now })).toBe(`${formatLocalTime(at)} (25 s ago)`);
    expect(setup(true).out.time(at, { now, brief: true })).toBe('25 s ago');
    expect(formatLocalTime(at)).toMatch(/^2026-11-22 \d\d:\d\d:05 [+-]\d\d:\d\d$/);
  });
});
