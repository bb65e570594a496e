/**
 * `gw load import`: traces people have, turned into gw's trace lines (trace.ts) for `gw load --replay`.
 *
 * - `gw-csv`: the `--csv` of an earlier `gw load` run. Each row is a request: its scheduled (open loop) or written
 *   (closed loop) start becomes `t_ms`, its api and model are kept, its output tokens become `max_tokens`, its
 *   session (a replay's) is kept. Rows are written as requests end, so they are put back in start order through
 *   a bounded window (REORDER rows); a row that starts before one already written is refused.
 * - `mooncake`: the JSONL traces of Mooncake (FAST '25): `{"timestamp", "input_length", "output_length",
 *   "hash_ids"}`, timestamps in ms. Lengths are tokens; gw's synthesised prompt words are one token each in
 *   common tokenizers, so `input_length` becomes `input_words` (at most 100 000) and `output_length` `max_tokens`.
 *   The format names no model or api: they are given (`model`, `api`, default chat).
 *
 * Both read the file as a stream (memory bounded by the window, not the file) and refuse a bad row naming its
 * number and field (exit 2).
 */
import { parse } from 'csv-parse';
import * as z from 'zod';
import { InterruptedError, UsageError } from '../core/errors.js';
import { badLineRule, isBad, openLocalStream, readLocalLines } from '../core/lines.js';
import { unreadable } from '../core/local-file.js';
import { TRACE_APIS, type TraceApi, type TraceLine } from './trace.js';

export const IMPORT_FORMATS = ['gw-csv', 'mooncake'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** What a format does not say. */
export interface ImportOptions {
  /** The model of every line (mooncake), or of rows without one (gw-csv). */
  model?: string | undefined;
  /** The api of every line (mooncake; default chat). */
  api?: TraceApi | undefined;
  signal?: AbortSignal | undefined;
}

/** Rows held to put gw's CSV back in start order (about 100 bytes each). */
export const REORDER = 100_000;
/** The longest CSV row read (gw writes rows of a few hundred bytes). */
const MAX_ROW = 1024 * 1024;
const MAX_WORDS = 100_000;
const REGULAR = 'an import reads a file';

/** A bad row of a CSV (`row`) or line of a JSONL file (`line`), by its 1-based number. */
function rowError(path: string, n: number, field: string, rule: string, unit = 'row'): UsageError {
  return new UsageError(`import: ${path} ${unit} ${n}: ${field}: ${rule}`, { field: '<file>' });
}

/** The trace lines of a file in `format`, in time order. */
export function importTrace(format: ImportFormat, path: string, o: ImportOptions): AsyncGenerator<TraceLine> {
  return format === 'gw-csv' ? fromGwCsv(path, o) : fromMooncake(path, o);
}

const mooncakeSchema = z.looseObject({
  timestamp: z.number({ error: 'must be a number (ms)' }).nonnegative('must be 0 or more'),
  input_length: z.int('must be an integer (tokens)').nonnegative('must be 0 or more'),
  output_length: z.int('must be an integer (tokens)').nonnegative('must be 0 or more'),
});

async function* fromMooncake(path: string, o: ImportOptions): AsyncGenerator<TraceLine> {
  const model = o.model;
  if (model === undefined)
    throw new UsageError('--model: is required for mooncake (its lines name no model)', { field: '--model' });
  let first: number | undefined;
  let prev = -Infinity;
  for await (const l of readLocalLines(path, {
    flag: 'import',
    field: '<file>',
    regular: REGULAR,
    signal: o.signal,
  })) {
    if (isBad(l)) throw rowError(path, l.lineNo, '(the line)', badLineRule(l), 'line');
    if (l.text.trim() === '') continue;
    let v: unknown;
    try {
      v = JSON.parse(l.text);
    } catch {
      throw rowError(path, l.lineNo, '(the line)', 'is not JSON', 'line');
    }
    const r = mooncakeSchema.safeParse(v);
    if (!r.success) {
      const issue = r.error.issues[0];
      throw rowError(
        path,
        l.lineNo,
        String(issue?.path[0] ?? '(the line)'),
        issue?.message ?? 'is invalid',
        'line',
      );
    }
    const m = r.data;
    if (m.timestamp < prev)
      throw rowError(
        path,
        l.lineNo,
        'timestamp',
        `${m.timestamp} is earlier than the line before (${prev})`,
        'line',
      );
    prev = m.timestamp;
    first ??= m.timestamp;
    const api = o.api ?? 'chat';
    yield {
      t_ms: m.timestamp - first,
      api,
      model,
      input_words: Math.min(MAX_WORDS, Math.max(1, m.input_length)),
      ...(api !== 'embeddings' && api !== 'video' && api !== 'images'
        ? { max_tokens: Math.max(1, m.output_length) }
        : {}),
    };
  }
}

/** One row of gw's --csv, as read (every cell text). */
type CsvRow = Record<string, string>;

/** The trace line of a row of gw's --csv. */
function lineOfRow(row: CsvRow, n: number, path: string, o: ImportOptions): TraceLine {
  const t = Number(row.start_ms);
  if (row.start_ms === undefined || row.start_ms === '' || !Number.isFinite(t))
    throw rowError(path, n, 'start_ms', 'must be a number (is this the --csv of gw load?)');
  const api = row.api as TraceApi;
  if (!(TRACE_APIS as readonly string[]).includes(api))
    throw rowError(path, n, 'api', `"${row.api ?? ''}" is not one of ${TRACE_APIS.join(', ')}`);
  const model = row.model !== undefined && row.model !== '' ? row.model : o.model;
  if (model === undefined)
    throw rowError(path, n, 'model', 'is empty (a run of --api video, or an older gw): give --model');
  const tokens = Number(row.output_tokens);
  const textApi = api === 'chat' || api === 'responses' || api === 'messages';
  return {
    t_ms: Math.max(0, Math.round(t * 1000) / 1000),
    api,
    model,
    ...(textApi && row.output_tokens !== '' && tokens >= 1 ? { max_tokens: Math.round(tokens) } : {}),
    ...(row.session !== undefined && row.session !== '' ? { session: row.session } : {}),
  };
}

async function* fromGwCsv(path: string, o: ImportOptions): AsyncGenerator<TraceLine> {
  const { stream, release } = await openLocalStream(path, {
    flag: 'import',
    field: '<file>',
    regular: REGULAR,
    signal: o.signal,
  });
  const parser = stream.pipe(
    parse({
      columns: true,
      skip_empty_lines: true,
      max_record_size: MAX_ROW,
      bom: true,
      relax_column_count: true,
    }),
  );
  const heap = new LineHeap();
  let last = -Infinity;
  let n = 1;
  const out = function* (all: boolean): Generator<TraceLine> {
    while (heap.size > (all ? 0 : REORDER)) {
      const line = heap.pop();
      last = line.t_ms;
      yield line;
    }
  };
  try {
    for await (const row of parser as AsyncIterable<CsvRow>) {
      n++;
      const line = lineOfRow(row, n, path, o);
      if (line.t_ms < last) {
        throw rowError(
          path,
          n,
          'start_ms',
          `${line.t_ms} is before rows already written (out of order beyond ${REORDER} rows)`,
        );
      }
      heap.push(line);
      yield* out(false);
    }
    yield* out(true);
  } catch (e) {
    if (e instanceof UsageError || e instanceof InterruptedError) throw e;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('CSV_'))
      throw rowError(path, n + 1, '(the row)', (e as Error).message);
    throw unreadable(e, path, { flag: 'import', field: '<file>' });
  } finally {
    release();
    parser.destroy();
  }
}

/** A binary min-heap of trace lines by t_ms (ties in arrival order). */
class LineHeap {
  readonly #a: Array<{ line: TraceLine; seq: number }> = [];
  #seq = 0;

  get size(): number {
    return this.#a.length;
  }

  #less(i: number, j: number): boolean {
    const x = this.#a[i] as { line: TraceLine; seq: number };
    const y = this.#a[j] as { line: TraceLine; seq: number };
    return x.line.t_ms < y.line.t_ms || (x.line.t_ms === y.line.t_ms && x.seq < y.seq);
  }

  #swap(i: number, j: number): void {
    const a = this.#a;
    [a[i], a[j]] = [a[j] as (typeof a)[number], a[i] as (typeof a)[number]];
  }

  push(line: TraceLine): void {
    this.#a.push({ line, seq: this.#seq++ });
    for (let i = this.#a.length - 1; i > 0;) {
      const p = (i - 1) >> 1;
      if (!this.#less(i, p)) break;
      this.#swap(i, p);
      i = p;
    }
  }

  pop(): TraceLine {
    const a = this.#a;
    const top = a[0] as { line: TraceLine };
    const end = a.pop() as (typeof a)[number];
    if (a.length > 0) {
      a[0] = end;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.#less(l, m)) m = l;
        if (r < a.length && this.#less(r, m)) m = r;
        if (m === i) break;
        this.#swap(i, m);
        i = m;
      }
    }
    return top.line;
  }
}
