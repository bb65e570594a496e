/**
 * Finished requests on their way to the OTLP export's thread, in columns: their numbers in typed arrays that move
 * to the other thread without a copy, the strings a run repeats (trace id, method, path, origin, model, error
 * code) as numbers into a table both sides keep, span and request ids as plain strings. Posting RequestSpan
 * objects cost ~1 µs a request to clone on the measuring thread and ~3 µs to rebuild on the other; this shape
 * costs ~0.2 µs on each (node:v8 serialize/deserialize of 2048 rows).
 */
import type { RequestSpan } from '../client/trace.js';

// The numbers of a row (NaN: absent).
const START = 0;
const DURATION = 1;
const STATUS = 2;
const TTFT = 3;
const INPUT = 4;
const CACHED = 5;
const OUTPUT = 6;
const GAPS_FROM = 7;
const GAPS_TO = 8;
const NUMS = 9;
// The table entries of a row (-1: absent).
const TRACE = 0;
const METHOD = 1;
const PATH = 2;
const ORIGIN = 3;
const MODEL = 4;
const ERROR = 5;
const REFS = 6;

/**
 * Past this many strings the table starts again with the next batch: paths with ids in them (a video task's
 * polls) or a trace naming many models must not grow it for the whole run.
 */
const MAX_STRINGS = 4096;
/** A batch is full at this many chunk gaps (8 MB), whatever its number of rows. */
const MAX_GAPS = 1 << 20;

/** One batch of rows as it crosses to the other thread. */
export interface SpanBatch {
  count: number;
  /** The table starts again (empty) with this batch. */
  reset: boolean;
  /** Strings first used in this batch, numbered on from the table's size. */
  strings: string[];
  nums: Float64Array;
  refs: Int32Array;
  spanIds: string[];
  requestIds: Array<string | undefined>;
  /** The chunk gaps of every row, one row after another (where a row's start and end is among its numbers). */
  gaps: Float64Array;
}

/** Collects rows (the measuring thread) up to `capacity` of them; `take` hands the batch over. */
export class SpanBatcher {
  readonly #capacity: number;
  readonly #table = new Map<string, number>();
  #reset = false;
  #strings: string[] = [];
  #count = 0;
  #nums: Float64Array;
  #refs: Int32Array;
  #spanIds: string[] = [];
  #requestIds: Array<string | undefined> = [];
  #gaps = new Float64Array(1024);
  #gapCount = 0;

  constructor(capacity: number) {
    this.#capacity = capacity;
    this.#nums = new Float64Array(capacity * NUMS);
    this.#refs = new Int32Array(capacity * REFS);
  }

  get count(): number {
    return this.#count;
  }

  /** No room for another row (post the batch before the next `add`). */
  get full(): boolean {
    return this.#count >= this.#capacity || this.#gapCount >= MAX_GAPS;
  }

  add(s: RequestSpan): void {
    const row = this.#count++;
    const n = row * NUMS;
    const nums = this.#nums;
    nums[n + START] = s.startUnixMs;
    nums[n + DURATION] = s.durationMs;
    nums[n + STATUS] = s.status ?? NaN;
    nums[n + TTFT] = s.ttftMs ?? NaN;
    nums[n + INPUT] = s.inputTokens ?? NaN;
    nums[n + CACHED] = s.cachedInputTokens ?? NaN;
    nums[n + OUTPUT] = s.outputTokens ?? NaN;
    nums[n + GAPS_FROM] = this.#gapCount;
    nums[n + GAPS_TO] = this.#addGaps(s.chunkGapsMs);
    const r = row * REFS;
    const refs = this.#refs;
    refs[r + TRACE] = this.#ref(s.traceId);
    refs[r + METHOD] = this.#ref(s.method);
    refs[r + PATH] = this.#ref(s.path);
    refs[r + ORIGIN] = this.#ref(s.origin);
    refs[r + MODEL] = s.model === undefined ? -1 : this.#ref(s.model);
    refs[r + ERROR] = s.errorCode === undefined ? -1 : this.#ref(s.errorCode);
    this.#spanIds.push(s.spanId);
    this.#requestIds.push(s.requestId);
  }

  #ref(text: string): number {
    let i = this.#table.get(text);
    if (i === undefined) {
      i = this.#table.size;
      this.#table.set(text, i);
      this.#strings.push(text);
    }
    return i;
  }

  /** Adds a row's gaps; returns where they end. */
  #addGaps(gaps: readonly number[] | undefined): number {
    if (gaps === undefined || gaps.length === 0) return this.#gapCount;
    if (this.#gapCount + gaps.length > this.#gaps.length) {
      const grown = new Float64Array(Math.max(this.#gaps.length * 2, this.#gapCount + gaps.length));
      grown.set(this.#gaps.subarray(0, this.#gapCount));
      this.#gaps = grown;
    }
    this.#gaps.set(gaps, this.#gapCount);
    this.#gapCount += gaps.length;
    return this.#gapCount;
  }

  /** The rows so far and the buffers to transfer with them (undefined when there are none); starts a new batch. */
  take(): { batch: SpanBatch; transfer: ArrayBuffer[] } | undefined {
    if (this.#count === 0) return undefined;
    const batch: SpanBatch = {
      count: this.#count,
      reset: this.#reset,
      strings: this.#strings,
      nums: this.#nums,
      refs: this.#refs,
      spanIds: this.#spanIds,
      requestIds: this.#requestIds,
      gaps: this.#gaps.slice(0, this.#gapCount),
    };
    this.#reset = this.#table.size > MAX_STRINGS;
    if (this.#reset) this.#table.clear();
    this.#strings = [];
    this.#count = 0;
    this.#nums = new Float64Array(this.#capacity * NUMS);
    this.#refs = new Int32Array(this.#capacity * REFS);
    this.#spanIds = [];
    this.#requestIds = [];
    this.#gapCount = 0;
    return { batch, transfer: [batch.nums.buffer, batch.refs.buffer, batch.gaps.buffer] as ArrayBuffer[] };
  }
}

/** The receiving side's copy of the table of strings. */
export class SpanStrings {
  #strings: string[] = [];

  /** Takes in a batch's new strings; true when the table started again (numbers read before are stale). */
  take(b: SpanBatch): boolean {
    if (b.reset) this.#strings = [];
    for (const text of b.strings) this.#strings.push(text);
    return b.reset;
  }

  /** The string numbered `i` (undefined for -1: absent). */
  get(i: number): string | undefined {
    return i < 0 ? undefined : this.#strings[i];
  }
}

/** A row as the receiving side reads it: strings as numbers into the table, absent numbers NaN. */
export interface SpanRow {
  trace: number;
  method: number;
  path: number;
  origin: number;
  /** -1 when absent. */
  model: number;
  error: number;
  spanId: string;
  requestId: string | undefined;
  startUnixMs: number;
  durationMs: number;
  status: number;
  ttftMs: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  /** Its chunk gaps: `batch.gaps` from `gapsFrom` up to `gapsTo`. */
  gapsFrom: number;
  gapsTo: number;
}

/** An empty row to read rows into (one per reader: no object per row). */
export function newSpanRow(): SpanRow {
  return {
    trace: -1,
    method: -1,
    path: -1,
    origin: -1,
    model: -1,
    error: -1,
    spanId: '',
    requestId: undefined,
    startUnixMs: 0,
    durationMs: 0,
    status: NaN,
    ttftMs: NaN,
    inputTokens: NaN,
    cachedInputTokens: NaN,
    outputTokens: NaN,
    gapsFrom: 0,
    gapsTo: 0,
  };
}

/** Reads row `row` of `b` into `out`. */
export function readSpanRow(b: SpanBatch, row: number, out: SpanRow): SpanRow {
  const n = row * NUMS;
  const r = row * REFS;
  const nums = b.nums;
  const refs = b.refs;
  out.trace = refs[r + TRACE] as number;
  out.method = refs[r + METHOD] as number;
  out.path = refs[r + PATH] as number;
  out.origin = refs[r + ORIGIN] as number;
  out.model = refs[r + MODEL] as number;
  out.error = refs[r + ERROR] as number;
  out.spanId = b.spanIds[row] as string;
  out.requestId = b.requestIds[row];
  out.startUnixMs = nums[n + START] as number;
  out.durationMs = nums[n + DURATION] as number;
  out.status = nums[n + STATUS] as number;
  out.ttftMs = nums[n + TTFT] as number;
  out.inputTokens = nums[n + INPUT] as number;
  out.cachedInputTokens = nums[n + CACHED] as number;
  out.outputTokens = nums[n + OUTPUT] as number;
  out.gapsFrom = nums[n + GAPS_FROM] as number;
  out.gapsTo = nums[n + GAPS_TO] as number;
  return out;
}
