import { describe, expect, it } from 'vitest';
import { decodeSse, decodeSseBatches, SseBound, type SseEvent } from '../../../src/client/sse.js';

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

describe('decodeSseBatches', () => {
  async function batches(chunks: Array<string | Uint8Array>): Promise<string[][]> {
    async function* gen(): AsyncGenerator<string | Uint8Array> {
      for (const c of chunks) yield c;
    }
    const out: string[][] = [];
    for await (const b of decodeSseBatches(gen())) out.push(b.map((e) => e.data));
    return out;
  }

  it('groups the events completed by one chunk, and yields nothing for a chunk that completes none', async () => {
    expect(await batches(['data: 1\n\ndata: 2\n\ndata: ', '3\n', '\ndata: 4\n\n', ': ping\n\n'])).toEqual([
      ['1', '2'],
      ['3', '4'],
    ]);
  });

  it('drops a leading byte order mark (as a UTF-8 decoder does), even split across chunks, and only there', async () => {
    const bom = Buffer.from('\uFEFFdata: a\n\ndata: \uFEFFb\n\n', 'utf8');
    expect(await batches([bom])).toEqual([['a', '\uFEFFb']]);
    expect(await batches([bom.subarray(0, 2), bom.subarray(2)])).toEqual([['a', '\uFEFFb']]);
  });

  it('replaces invalid UTF-8 with U+FFFD, as TextDecoder does', async () => {
    const bytes = Buffer.concat([
      Buffer.from('data: a'),
      Buffer.from([0xff, 0xe4, 0xb8]),
      Buffer.from('z\n\n'),
    ]);
    const expected = new TextDecoder().decode(bytes).slice('data: '.length, -2);
    expect(await batches([bytes.subarray(0, 8), bytes.subarray(8)])).toEqual([[expected]]);
  });

  it('confirms a CR at the very end of the stream as a line end', async () => {
    expect(await batches(['data: x\r\r'])).toEqual([['x']]);
  });
});

describe('SseBound: an endless line or event is refused, finished events never are', () => {
  const event = (i: number, eol: string): string =>
    `event: e${i}${eol}data: ${'x'.repeat(200)}${eol}data: ${i}${eol}${eol}`;
  const split = (text: string, n: number): string[] => {
    const out: string[] = [];
    for (let i = 0; i < text.length; i += n) out.push(text.slice(i, i + n));
    return out;
  };

  it('lets any number of finished events through, however the chunks fall (LF, CRLF, CR, mixed)', () => {
    for (const eol of ['\n', '\r\n', '\r']) {
      const text = Array.from({ length: 200 }, (_, i) => event(i, eol)).join('');
      for (const n of [1, 2, 3, 5, 7, 64, 1000]) {
        const b = new SseBound(300, event(199, eol).length + 2);
        expect(
          () => split(text, n).forEach((c) => b.feed(c)),
          `eol ${JSON.stringify(eol)}, chunks of ${n}`,
        ).not.toThrow();
      }
    }
    // Keep-alive comments only: each is its own (empty) event.
    const b = new SseBound(100, 100);
    expect(() => {
      for (let i = 0; i < 10_000; i++) b.feed(': keepalive\n\n');
    }).not.toThrow();
  });

  it('refuses one event of many data: lines that never ends', () => {
    const b = new SseBound(300, 10_000);
    let fed = 0;
    expect(() => {
      for (;;) {
        b.feed('data: 0123456789\n');
        fed += 17;
        if (fed > 1_000_000) break;
      }
    }).toThrow(/event-stream event is longer than 10000 characters/);
    expect(fed).toBeLessThanOrEqual(10_017);
  });

  it('refuses an endless line, and CR then LF across chunks is one line end, not a blank line', () => {
    const line = new SseBound(100, 10_000);
    expect(() => line.feed(`data: ${'a'.repeat(200)}`)).toThrow(
      /event-stream line is longer than 100 characters/,
    );
    // "data: x\r" + "\ndata: y\r" + "\n…": every chunk boundary splits a CRLF; none of them ends the event.
    const crlf = new SseBound(100, 50);
    expect(() => {
      for (let i = 0; i < 20; i++) crlf.feed(i === 0 ? 'data: x\r' : '\ndata: x\r');
    }).toThrow(/event is longer than 50/);
  });
});
