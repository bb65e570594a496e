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

/** A line of the event stream exceeded the cap. */
export class SseLineTooLongError extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(`an event-stream line is longer than ${limit} characters`);
    this.name = 'SseLineTooLongError';
    this.limit = limit;
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
  // Characters since the last line end: the parser buffers an unfinished line, so an endless `data:` line would
  // grow without bound.
  let lineChars = 0;
  const feed = (text: string): void => {
    if (text.length === 0) return;
    const lastEnd = Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r'));
    lineChars = lastEnd < 0 ? lineChars + text.length : text.length - lastEnd - 1;
    if (lineChars > maxLineChars) throw new SseLineTooLongError(maxLineChars);
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
