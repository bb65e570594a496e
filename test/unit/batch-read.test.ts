/**
 * Reading a batch's files a read at a time (what lets `gw batch merge` go through a million lines without a
 * microtask per line): the same lines, the same records and the same refusals as one line at a time.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { IdSet } from '../../src/batch/ids.js';
import { checkedTextChunks, DamagedFileError, readRecordChunks, readRecords } from '../../src/batch/lines.js';
import { outputLineSchema } from '../../src/batch/output.js';
import { readLineChunks, readLines, type BadLine, type Line } from '../../src/core/lines.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function file(text: string | Buffer): string {
  const d = mkdtempSync(join(tmpdir(), 'gw-read-'));
  dirs.push(d);
  const path = join(d, 'results.jsonl');
  writeFileSync(path, text);
  return path;
}

const result = (id: string): string =>
  JSON.stringify({
    id: `batch_req_${id}`,
    custom_id: id,
    response: null,
    error: { code: 'x', message: 'y' },
  });

describe('reading batch files a read at a time', () => {
  it('gives the lines one at a time would, however the stream cuts them, and copes with a stream that reuses its memory', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(fc.string({ unit: 'grapheme-ascii', maxLength: 12 }), fc.constant('é\r'), fc.constant('')),
          {
            maxLength: 30,
          },
        ),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 6 }),
        async (texts, cuts) => {
          const bytes = Buffer.from(texts.join('\n'));
          // One buffer, refilled for every piece, as a stream that recycles a chunk's memory once it is asked for
          // the next one would (read straight from the generator: Readable.from would read ahead).
          const scratch = Buffer.alloc(16);
          async function* pieces(): AsyncGenerator<Buffer> {
            for (let at = 0, k = 0; at < bytes.length; k++) {
              const n = Math.min(cuts[k % cuts.length] as number, bytes.length - at);
              bytes.copy(scratch, 0, at, at + n);
              yield scratch.subarray(0, n);
              scratch.fill(0x78);
              at += n;
            }
          }
          const got: Array<Line | BadLine> = [];
          for await (const lines of readLineChunks(pieces() as unknown as Readable)) got.push(...lines);
          const want: Array<Line | BadLine> = [];
          for await (const l of readLines(Readable.from([bytes]))) want.push(l);
          expect(got).toEqual(want);
          const lines = texts.join('\n').split('\n');
          if (lines.at(-1) === '') lines.pop();
          expect(got.map((l) => ('text' in l ? l.text : l.bad))).toEqual(
            lines.map((t) => t.replace(/\r$/, '')),
          );
        },
      ),
    );
  });

  it('refuses what one line at a time refused, after the records before it', async () => {
    const lines = [result('a'), result('b'), '{"id":"batch_req_c","custom_id":7}', result('d')];
    const path = file(`${lines.join('\n')}\n`);
    const seen: string[] = [];
    const read = async (): Promise<void> => {
      for await (const r of readRecords(path, outputLineSchema, 'a batch output line'))
        seen.push(r.value.custom_id);
    };
    await expect(read()).rejects.toThrow(DamagedFileError);
    await expect(read()).rejects.toThrow(/line 3: is not a batch output line \(custom_id: /);
    expect(seen.slice(0, 2)).toEqual(['a', 'b']);
    const chunks = readRecordChunks(
      file(`${result('a')}\nnot json\n`),
      outputLineSchema,
      'a batch output line',
    );
    expect((await chunks.next()).value).toMatchObject([{ lineNo: 1, value: { custom_id: 'a' } }]);
    await expect(chunks.next()).rejects.toThrow(/line 2: is not JSON/);
    // A torn last line (a crash mid-write) is skipped, as before.
    const torn: string[] = [];
    for await (const r of readRecords(file(`${result('a')}\n{"id":`), outputLineSchema, 'x'))
      torn.push(r.value.custom_id);
    expect(torn).toEqual(['a']);
  });

  it('copies the texts of the records it checked up to the last one, blank lines left out', async () => {
    const path = file(`${result('a')}\n\n${result('b')}\n${result('c')}\n{"id":`);
    const texts: Array<{ lineNo: number; text: string }> = [];
    for await (const chunk of checkedTextChunks(path, 3)) texts.push(...chunk);
    expect(texts).toEqual([
      { lineNo: 1, text: result('a') },
      { lineNo: 3, text: result('b') },
    ]);
  });
});

describe('IdSet', () => {
  it('knows every id added, through its growth, and no other', () => {
    const ids = new IdSet(4);
    for (let i = 0; i < 5000; i++) expect(ids.add(`id-${i}`)).toBe(true);
    expect(ids.size).toBe(5000);
    for (let i = 0; i < 5000; i++) {
      expect(ids.has(`id-${i}`)).toBe(true);
      expect(ids.add(`id-${i}`)).toBe(false);
    }
    for (let i = 5000; i < 6000; i++) expect(ids.has(`id-${i}`)).toBe(false);
    expect(ids.size).toBe(5000);
  });
});
