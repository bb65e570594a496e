import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { StringDecoder } from 'node:string_decoder';

/** One server-sent event: the `event:` name (undefined when absent) and its data text. */
export interface SseEvent {
  event: string | undefined;
  data: string;
  id: string | undefined;
}

/** Longest line of an event stream gw accepts (characters); a longer one ends the stream with an error. */
export const MAX_SSE_LINE_CHARS = 8 * 1024 * 1024;

/**
 * Longest unfinished event gw accepts (characters since the last blank line): an event of many `data:` lines that
 * never ends would otherwise grow the parser's data buffer without bound, line cap or not.
 */
export const MAX_SSE_EVENT_CHARS = 16 * 1024 * 1024;

/** A line, or an unfinished event, of the event stream exceeded its cap. */
export class SseLineTooLongError extends Error {
  readonly limit: number;
  constructor(limit: number, what: 'line' | 'event' = 'line') {
    super(`an event-stream ${what} is longer than ${limit} characters`);
    this.name = 'SseLineTooLongError';
    this.limit = limit;
  }
}

const isEol = (c: number): boolean => c === 10 || c === 13;

/**
 * Bounds what an event-stream parser holds: the characters since the last line end (an endless line) and since
 * the last blank line (an endless event). `feed()` each decoded text before the parser sees it; it throws
 * SseLineTooLongError past either cap. Counting is by characters of text, a chunk at a time (a few string scans
 * per network read).
 */
export class SseBound {
  #line = 0;
  #event = 0;
  /** The last text ended with a line end: a line end at the start of the next one closes the event. */
  #afterEol = false;
  /** ...and that line end was a CR, which an LF at the start of the next text completes (CRLF), not repeats. */
  #afterCr = false;

  constructor(
    readonly maxLineChars: number = MAX_SSE_LINE_CHARS,
    readonly maxEventChars: number = MAX_SSE_EVENT_CHARS,
  ) {}

  feed(text: string): void {
    const n = text.length;
    if (n === 0) return;
    const lastEnd = Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r'));
    this.#line = lastEnd < 0 ? this.#line + n : n - lastEnd - 1;
    if (this.#line > this.maxLineChars) throw new SseLineTooLongError(this.maxLineChars);
    // Where the last blank line in this text ends. A blank line is a line end right after another (LF, CR or
    // CRLF each); CR then LF is one line end (CRLF), so LF LF, LF CR and CR CR are the only pairs to look for.
    const pair = Math.max(text.lastIndexOf('\n\n'), text.lastIndexOf('\n\r'), text.lastIndexOf('\r\r'));
    let blankEnd = pair >= 0 ? pair + 2 : 0;
    if (blankEnd === 0 && this.#afterEol) {
      // Across the previous text's end: its line end, then one at the start of this text.
      const c0 = text.charCodeAt(0);
      if (c0 === 13 || (c0 === 10 && !this.#afterCr)) blankEnd = 1;
    }
    this.#event = blankEnd > 0 ? n - blankEnd : this.#event + n;
    if (this.#event > this.maxEventChars) throw new SseLineTooLongError(this.maxEventChars, 'event');
    const last = text.charCodeAt(n - 1);
    this.#afterEol = isEol(last);
    this.#afterCr = last === 13;
  }
}

/**
 * Decodes a byte stream of server-sent events into batches: every event completed by one input chunk (one network
 * read), in order, as one array; chunks that complete no event yield nothing. Parsing uses eventsource-parser
 * (WHATWG rules: CRLF/LF/CR, comments, `data:` with or without a space, multi-line data). Bytes are decoded once,
 * with a streaming UTF-8 decoder, so a character split across chunks is never corrupted. An incomplete event at the
 * end of the stream (no final blank line) is discarded, as browsers and the official SDKs do.
 *
 * Batches exist for speed: a consumer that handles a whole read synchronously pays one promise per read instead of
 * one per event (a 50 000-event stream arrives in a few hundred reads).
 */
export async function* decodeSseBatches(
  chunks: AsyncIterable<Uint8Array | string>,
  maxLineChars: number = MAX_SSE_LINE_CHARS,
  maxEventChars: number = MAX_SSE_EVENT_CHARS,
): AsyncGenerator<SseEvent[]> {
  // node's StringDecoder keeps a character split across chunks whole, like TextDecoder's stream mode, at a third
  // of the cost per read; it does not drop a leading byte order mark, so that is done here (WHATWG "UTF-8 decode").
  const decoder = new StringDecoder('utf8');
  let first = true;
  let batch: SseEvent[] = [];
  const parser = createParser({
    // The parser's message is a fresh object with exactly these three keys (unset ones undefined): kept as is
    // rather than copied, one allocation less per event.
    onEvent: (e: EventSourceMessage) => batch.push(e as SseEvent),
  });
  // A CR at the very end of the input is a complete line end, but the parser holds it back in case an LF
  // follows in the next chunk: remember it and confirm it once the stream is over.
  let endsWithCr = false;
  // The parser buffers an unfinished line and an unfinished event: an endless one would grow without bound.
  const bound = new SseBound(maxLineChars, maxEventChars);
  const feed = (text: string): void => {
    if (text.length === 0) return;
    bound.feed(text);
    if (first) {
      first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (text.length === 0) return;
    }
    parser.feed(text);
    endsWithCr = text.endsWith('\r');
  };
  const take = (): SseEvent[] => {
    const out = batch;
    batch = [];
    return out;
  };
  for await (const chunk of chunks) {
    feed(typeof chunk === 'string' ? chunk : decoder.write(chunk));
    if (batch.length > 0) yield take();
  }
  feed(decoder.end());
  if (endsWithCr) parser.feed('\n');
  if (batch.length > 0) yield take();
}

/** Decodes a byte stream of server-sent events into events, one at a time (see decodeSseBatches). */
export async function* decodeSse(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  for await (const batch of decodeSseBatches(chunks)) for (const ev of batch) yield ev;
}
