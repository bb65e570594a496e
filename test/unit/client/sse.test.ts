import { describe, expect, it } from 'vitest';
import { decodeSse, type SseEvent } from '../../../src/client/sse.js';

async function decode(chunks: Array<string | Uint8Array>): Promise<SseEvent[]> {
  async function* gen(): AsyncGenerator<string | Uint8Array> {
    for (const c of chunks) yield c;
  }
  const out: SseEvent[] = [];
  for await (const e of decodeSse(gen())) out.push(e);
  return out;
}

function bytesSplitEvery(text: string, n: number): Uint8Array[] {
  const b = Buffer.from(text, 'utf8');
  const out: Uint8Array[] = [];
  for (let i = 0; i < b.length; i += n) out.push(b.subarray(i, i + n));
  return out;
}

describe('decodeSse', () => {
  it('decodes event names and data, and ignores comments', async () => {
    const events = await decode([': ping\n\nevent: message_start\ndata: {"a":1}\n\n', 'data: [DONE]\n\n']);
    expect(events).toEqual([
      { event: 'message_start', data: '{"a":1}', id: undefined },
      { event: undefined, data: '[DONE]', id: undefined },
    ]);
  });

  it('accepts CRLF line endings, even with CR and LF in different chunks', async () => {
    const events = await decode(['data: one\r', '\n\r', '\ndata: two\r\n\r\n']);
    expect(events.map((e) => e.data)).toEqual(['one', 'two']);
  });

  it('accepts `data:` without a space and joins multi-line data with newlines', async () => {
    const events = await decode(['data:x\ndata: y\n\n']);
    expect(events[0]?.data).toBe('x\ny');
  });

  it('keeps multi-byte UTF-8 intact when a character is split across chunks', async () => {
    const text = 'data: {"t":"héllo 世界 🦊"}\n\n';
    for (const n of [1, 2, 3, 5, 7]) {
      const events = await decode(bytesSplitEvery(text, n));
      expect(events.map((e) => e.data)).toEqual(['{"t":"héllo 世界 🦊"}']);
    }
  });

  it('discards an incomplete event when the stream ends without a final blank line', async () => {
    const events = await decode(['data: complete\n\n', 'data: cut']);
    expect(events.map((e) => e.data)).toEqual(['complete']);
  });

  it('yields several events from one chunk', async () => {
    const events = await decode(['data: 1\n\ndata: 2\n\ndata: 3\n\n']);
    expect(events.map((e) => e.data)).toEqual(['1', '2', '3']);
  });
});
