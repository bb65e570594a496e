import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** One server-sent event: the `event:` name (undefined when absent) and its data text. */
export interface SseEvent {
  event: string | undefined;
  data: string;
  id: string | undefined;
}

/**
 * Decodes a byte stream of server-sent events into events, using eventsource-parser (WHATWG rules:
 * CRLF/LF/CR, comments, `data:` with or without a space, multi-line data). Bytes are decoded with a
 * streaming UTF-8 decoder so a character split across chunks is never corrupted. An incomplete event at the
 * end of the stream (no final blank line) is discarded, as browsers and the official SDKs do.
 */
export async function* decodeSse(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder('utf-8');
  const queue: SseEvent[] = [];
  const parser = createParser({
    onEvent(e: EventSourceMessage) {
      queue.push({ event: e.event, data: e.data, id: e.id });
    },
  });
  // A CR at the very end of the input is a complete line end, but the parser holds it back in case an LF
  // follows in the next chunk: remember it and confirm it once the stream is over.
  let endsWithCr = false;
  const feed = (text: string): void => {
    if (text.length === 0) return;
    parser.feed(text);
    endsWithCr = text.endsWith('\r');
  };
  for await (const chunk of chunks) {
    feed(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    while (queue.length > 0) yield queue.shift() as SseEvent;
  }
  feed(decoder.decode());
  if (endsWithCr) parser.feed('\n');
  while (queue.length > 0) yield queue.shift() as SseEvent;
}
