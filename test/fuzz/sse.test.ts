import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createParser } from 'eventsource-parser';
import { decodeSse, decodeSseBatches, type SseEvent } from '../../src/client/sse.js';

/** Fixed seed and bounded runs: the suite is deterministic and fast. */
const RUNS = { seed: 42, numRuns: 200 } as const;

async function decode(chunks: readonly Uint8Array[]): Promise<SseEvent[]> {
  async function* gen(): AsyncGenerator<Uint8Array> {
    for (const c of chunks) yield c;
  }
  const out: SseEvent[] = [];
  for await (const e of decodeSse(gen())) out.push(e);
  return out;
}

/** Text of one field value: any code point (multi-byte UTF-8 included) but no line break. */
const fieldText = fc.string({ unit: 'binary', maxLength: 12 }).map((s) => s.replace(/[\r\n]/g, '_'));

/** One event as the model sees it: an optional name and one or more data lines. */
interface ModelEvent {
  event: string | undefined;
  lines: string[];
}

const modelEvent: fc.Arbitrary<ModelEvent> = fc.record({
  // A name starting with a space would lose it ("event: " strips one space): not a valid stream for the model.
  event: fc.option(
    fieldText.filter((s) => s.length > 0 && !s.startsWith(' ')),
    { nil: undefined },
  ),
  lines: fc.array(fieldText, { minLength: 1, maxLength: 3 }),
});

/** Serialisation choices that must not change the decoded events. */
const style = fc.record({
  eol: fc.constantFrom('\n', '\r\n', '\r'),
  comments: fc.boolean(),
  retry: fc.boolean(),
});

function serialise(
  events: readonly ModelEvent[],
  s: { eol: string; comments: boolean; retry: boolean },
): string {
  let out = '';
  for (const e of events) {
    if (s.comments) out += `: keep-alive ${e.lines.length}${s.eol}`;
    if (e.event !== undefined) out += `event: ${e.event}${s.eol}`;
    if (s.retry) out += `retry: 1000${s.eol}`;
    for (const l of e.lines) out += `data: ${l}${s.eol}`;
    out += s.eol;
  }
  return out;
}

/** Cuts `bytes` at the given offsets (anywhere: inside a UTF-8 sequence, between CR and LF). */
function slice(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let at = 0;
  for (const p of points) {
    out.push(bytes.subarray(at, p));
    at = p;
  }
  out.push(bytes.subarray(at));
  return out;
}

describe('fuzz: decodeSse', () => {
  it('any slicing of a valid stream yields the events of the model', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(modelEvent, { maxLength: 6 }),
        style,
        fc.array(fc.nat(), { maxLength: 12 }),
        async (events, s, cuts) => {
          const bytes = new TextEncoder().encode(serialise(events, s));
          const decoded = await decode(slice(bytes, cuts));
          expect(decoded.map((e) => ({ event: e.event, data: e.data }))).toEqual(
            events.map((e) => ({ event: e.event, data: e.lines.join('\n') })),
          );
        },
      ),
      RUNS,
    );
  });

  it('any slicing of arbitrary bytes yields what the whole buffer yields', async () => {
    // Not necessarily a valid stream (stray CRs, BOMs, invalid UTF-8, no final blank line): slicing must still
    // never change the result.
    const piece = fc.oneof(
      fc.constantFrom('data: ', 'data:', 'event: x', 'id: 7', ': c', '\r', '\n', '\r\n', 'é', '😀', '\uFEFF'),
      fc.string({ unit: 'binary', maxLength: 6 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(piece, { maxLength: 30 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        async (pieces, cuts) => {
          const bytes = new TextEncoder().encode(pieces.join(''));
          expect(await decode(slice(bytes, cuts))).toEqual(await decode([bytes]));
        },
      ),
      RUNS,
    );
  });

  it('batches are the events in order, never empty, and match a reference TextDecoder + parser run', async () => {
    // The reference decodes the whole buffer with TextDecoder (WHATWG UTF-8 decode: BOM dropped, U+FFFD for
    // invalid bytes) and feeds eventsource-parser once: the streaming decoder must agree on any bytes.
    const piece = fc.oneof(
      fc.constantFrom('data: ', 'event: e', '\n', '\n\n', '\r\n', '\r', 'é', '😀', '\uFEFF'),
      fc.string({ unit: 'binary', maxLength: 6 }),
      fc.uint8Array({ maxLength: 4 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(piece, { maxLength: 30 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        async (pieces, cuts) => {
          const bytes = Buffer.concat(
            pieces.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))),
          );
          const reference: SseEvent[] = [];
          const parser = createParser({
            onEvent: (e) => reference.push({ event: e.event, data: e.data, id: e.id }),
          });
          const text = new TextDecoder().decode(bytes);
          parser.feed(text);
          if (text.endsWith('\r')) parser.feed('\n');
          async function* gen(): AsyncGenerator<Uint8Array> {
            for (const c of slice(bytes, cuts)) yield c;
          }
          const got: SseEvent[][] = [];
          for await (const b of decodeSseBatches(gen())) got.push(b);
          expect(got.every((b) => b.length > 0)).toBe(true);
          expect(got.flat()).toEqual(reference);
        },
      ),
      RUNS,
    );
  });
});
