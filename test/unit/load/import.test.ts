import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CSV_HEAD, csvLine, csvRow } from '../../../src/commands/load/csv.js';
import { importTrace, type ImportFormat, type ImportOptions } from '../../../src/load/import.js';
import type { Outcome } from '../../../src/load/exchange.js';
import { readTraceLine, type TraceLine } from '../../../src/load/trace.js';
import { tempDir } from '../../helpers/tmp.js';

function file(text: string, name = 'trace'): string {
  const path = join(tempDir('gw-import-'), name);
  writeFileSync(path, text);
  return path;
}

async function all(format: ImportFormat, path: string, o: ImportOptions = {}): Promise<TraceLine[]> {
  const out: TraceLine[] = [];
  for await (const l of importTrace(format, path, o)) out.push(l);
  return out;
}

async function refusal(format: ImportFormat, path: string, o: ImportOptions = {}): Promise<string> {
  try {
    await all(format, path, o);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('accepted');
}

const outcome = (o: Partial<Outcome>): Outcome => ({
  api: 'chat',
  model: 'chat-3.7-plus',
  stream: true,
  ok: true,
  status: 200,
  startMs: 0,
  lagMs: 0.5,
  e2eMs: 100,
  itlMs: [],
  sent: true,
  ...o,
});

describe('gw load import gw-csv', () => {
  it('turns the rows of a --csv back into trace lines, in start order, that a replay accepts', async () => {
    // Rows are written as requests end: the one that started at 50 ms ended first.
    const rows = [
      csvRow(
        'rate=5/s',
        outcome({ startMs: 50, api: 'embeddings', model: 'text-embedding-v4', stream: false }),
      ),
      csvRow('rate=5/s', outcome({ startMs: 0, outputTokens: 12, requestId: '=cmd' })),
      csvRow('replay', {
        ...outcome({ startMs: 80.1234, api: 'messages', outputTokens: 3 }),
        session: 'c,1',
      }),
      csvRow('rate=5/s', outcome({ startMs: 90, ok: false, code: 'rate_limited', status: 429 })),
    ];
    const path = file(csvLine(CSV_HEAD) + rows.join(''));
    const lines = await all('gw-csv', path);
    expect(lines).toEqual([
      { t_ms: 0, api: 'chat', model: 'chat-3.7-plus', max_tokens: 12 },
      { t_ms: 50, api: 'embeddings', model: 'text-embedding-v4' },
      { t_ms: 80.123, api: 'messages', model: 'chat-3.7-plus', max_tokens: 3, session: 'c,1' },
      { t_ms: 90, api: 'chat', model: 'chat-3.7-plus' },
    ]);
    const d = { stream: true, maxTokens: 64, validate: true };
    lines.forEach((l, i) => expect(readTraceLine(JSON.stringify(l), i + 1, 't', d).tMs).toBe(l.t_ms));
  });

  it('takes --model for rows without one, and refuses a row naming its number and field', async () => {
    const old = CSV_HEAD.slice(0, 13);
    const path = file(`${old.join(',')}\nrate=1/s,5,chat,true,true,200,,,,,,,0\n`);
    expect(await refusal('gw-csv', path)).toMatch(/row 2: model: is empty .*give --model/);
    expect(await all('gw-csv', path, { model: 'm' })).toEqual([{ t_ms: 5, api: 'chat', model: 'm' }]);
    const bad = file(`${CSV_HEAD.join(',')}\nx,nope,chat\n`);
    expect(await refusal('gw-csv', bad)).toMatch(/row 2: start_ms: must be a number/);
    const api = file(`${CSV_HEAD.join(',')}\nx,1,fax\n`);
    expect(await refusal('gw-csv', api)).toMatch(/row 2: api: "fax" is not one of/);
    const quote = file(`${CSV_HEAD.join(',')}\nx,1,chat,"unterminated\n`);
    expect(await refusal('gw-csv', quote)).toMatch(/row \d+: \(the row\)/);
  });
});

describe('gw load import mooncake', () => {
  it('counts time from the first timestamp, lengths as words and max_tokens, the model and api given', async () => {
    const path = file(
      [
        '{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47]}',
        '',
        '{"timestamp": 30535, "input_length": 0, "output_length": 0, "hash_ids": []}',
        '{"timestamp": 30535, "input_length": 250000, "output_length": 7, "hash_ids": []}',
      ].join('\n'),
    );
    expect(await all('mooncake', path, { model: 'chat-3.7-plus' })).toEqual([
      { t_ms: 0, api: 'chat', model: 'chat-3.7-plus', input_words: 6955, max_tokens: 52 },
      { t_ms: 3053, api: 'chat', model: 'chat-3.7-plus', input_words: 1, max_tokens: 1 },
      { t_ms: 3053, api: 'chat', model: 'chat-3.7-plus', input_words: 100_000, max_tokens: 7 },
    ]);
    const emb = await all('mooncake', path, { model: 'text-embedding-v4', api: 'embeddings' });
    expect(emb[0]).toEqual({ t_ms: 0, api: 'embeddings', model: 'text-embedding-v4', input_words: 6955 });
  });

  it('refuses a run without --model, a bad line and time going back', async () => {
    const ok = file('{"timestamp": 1, "input_length": 2, "output_length": 3}\n');
    expect(await refusal('mooncake', ok)).toMatch(/--model: is required for mooncake/);
    const bad = file('{"timestamp": 1, "input_length": 2.5, "output_length": 3}\n');
    expect(await refusal('mooncake', bad, { model: 'm' })).toMatch(
      /line 1: input_length: must be an integer/,
    );
    const back = file(
      '{"timestamp": 9, "input_length": 2, "output_length": 3}\n{"timestamp": 8, "input_length": 2, "output_length": 3}\n',
    );
    expect(await refusal('mooncake', back, { model: 'm' })).toMatch(/line 2: timestamp: 8 is earlier/);
    expect(await refusal('mooncake', join(tempDir('gw-import-'), 'missing'), { model: 'm' })).toMatch(
      /import: /,
    );
  });
});
