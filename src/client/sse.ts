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
  for await (const chunk of chunks) {
    parser.feed(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    while (queue.length > 0) yield queue.shift() as SseEvent;
  }
  const tail = decoder.decode();
  if (tail.length > 0) parser.feed(tail);
  while (queue.length > 0) yield queue.shift() as SseEvent;
}
