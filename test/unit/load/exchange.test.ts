import type { Dispatcher } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GatewayClient } from '../../../src/client/gateway-client.js';
import {
  exchange,
  Flight,
  MAX_ITL_GAPS,
  type Pending,
  type Sendable,
  type Target,
} from '../../../src/load/exchange.js';
import { parseExpr, perRequestTerms } from '../../../src/load/expr.js';
import { Recorder } from '../../../src/load/recorder.js';
import type { Prepared } from '../../../src/load/workload.js';

/**
 * A dispatcher that plays a chat stream on a script: each step sets the clock (performance.now()) and then calls
 * one of the handler's callbacks, so every timestamp exchange.ts takes is known exactly.
 */
function scripted(clock: { now: number }, steps: Array<[number, (h: Dispatcher.DispatchHandler) => void]>) {
  return {
    // The client composes its download dispatcher from this one at construction.
    compose() {
      return this;
    },
    dispatch(_opts: unknown, handler: Dispatcher.DispatchHandler): boolean {
      queueMicrotask(() => {
        for (const [at, step] of steps) {
          clock.now = at;
          step(handler);
        }
      });
      return true;
    },
  } as unknown as Dispatcher;
}

const frame = (content: string): Buffer =>
  Buffer.from(`data: {"choices":[{"index":0,"delta":{"content":"${content}"}}]}\n\n`);

function chatStream(written: number, first: number, second: number, end: number) {
  const controller = { abort: () => undefined } as unknown as Dispatcher.DispatchController;
  return (clock: { now: number }) =>
    scripted(clock, [
      [written, (h) => h.onRequestStart?.(controller, {})],
      [
        written + 1,
        (h) => h.onResponseStart?.(controller, 200, { 'content-type': 'text/event-stream' }, 'OK'),
      ],
      [first, (h) => h.onResponseData?.(controller, frame('Hello'))],
      [second, (h) => h.onResponseData?.(controller, frame(' world'))],
      [
        end,
        (h) => {
          h.onResponseData?.(
            controller,
            Buffer.from(
              'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}\n\ndata: [DONE]\n\n',
            ),
          );
          h.onResponseEnd?.(controller, {});
        },
      ],
    ]);
}

/** A controller that records the code of each abort. */
function recordingController(): { aborted: string[]; controller: Dispatcher.DispatchController } {
  const aborted: string[] = [];
  const controller = {
    abort: (e: Error & { code?: string }) => aborted.push(e.code ?? ''),
  } as unknown as Dispatcher.DispatchController;
  return { aborted, controller };
}

/** The clock every exchange of these tests reads (each scripted step sets it). */
const clock = { now: 0 };

/** The client's prepared request for a body (URL, headers, timeouts), as gw load sends it. */
function sendable(p: Prepared): Sendable {
  const client = new GatewayClient({ baseUrl: 'http://gateway.test', token: 'sk-test' });
  return { ...p, request: client.prepare({ method: 'POST', path: p.path, json: true, stream: p.stream }) };
}

const req = sendable({
  api: 'chat',
  model: 'm',
  stream: true,
  path: '/v1/chat/completions',
  body: Buffer.from('{}'),
});

/** A client whose connection pool is the scripted dispatcher, and the tests' clock. */
function target(dispatcher: Dispatcher): Target {
  return {
    client: new GatewayClient({ baseUrl: 'http://gateway.test', token: 'sk-test', dispatcher }),
    clock: { now: () => clock.now },
  };
}

describe('gw load timing of one request', () => {
  let flight: Flight | undefined;
  afterEach(() => {
    flight?.close();
    vi.restoreAllMocks();
  });

  it('closed loop: measures from the write of the request, not from its dispatch', async () => {
    flight = new Flight(new AbortController().signal);
    clock.now = 1000; // dispatched at 1000; undici writes it at 1040 (its connection was busy until then)
    const o = await exchange(target(chatStream(1040, 1090, 1100, 1110)(clock)), req, undefined, 900, flight);
    expect(o.ok).toBe(true);
    expect(o.ttftMs).toBe(50);
    expect(o.itlMs).toEqual([10]);
    expect(o.e2eMs).toBe(70);
    expect(o.startMs).toBe(140);
    expect(o.lagMs).toBe(0);
    expect(o.outputTokens).toBe(2);
  });

  it('open loop: measures from the scheduled start and counts the late write as lag', async () => {
    flight = new Flight(new AbortController().signal);
    clock.now = 1005; // scheduled at 1000, dispatched at 1005, written at 1040
    const o = await exchange(target(chatStream(1040, 1090, 1100, 1110)(clock)), req, 1000, 900, flight);
    expect(o.ok).toBe(true);
    expect(o.ttftMs).toBe(90);
    expect(o.e2eMs).toBe(110);
    expect(o.startMs).toBe(100);
    expect(o.lagMs).toBe(40);
  });

  it('decodes a character split across two reads', async () => {
    flight = new Flight(new AbortController().signal);
    const controller = { abort: () => undefined } as unknown as Dispatcher.DispatchController;
    const bytes = Buffer.from(
      'data: {"choices":[{"index":0,"delta":{"content":"é"}}]}\n\ndata: {"usage":{"completion_tokens":1}}\n\ndata: [DONE]\n\n',
    );
    const cut = bytes.indexOf(0xc3) + 1;
    clock.now = 0;
    const d = scripted(clock, [
      [0, (h) => h.onRequestStart?.(controller, {})],
      [1, (h) => h.onResponseStart?.(controller, 200, { 'content-type': 'text/event-stream' }, 'OK')],
      [5, (h) => h.onResponseData?.(controller, bytes.subarray(0, cut))],
      [7, (h) => h.onResponseData?.(controller, bytes.subarray(cut))],
      [8, (h) => h.onResponseEnd?.(controller, {})],
    ]);
    const o = await exchange(target(d), req, undefined, 0, flight);
    expect(o.ok).toBe(true);
    // The token's frame was complete only with the second read.
    expect(o.ttftMs).toBe(7);
    expect(o.outputTokens).toBe(1);
  });
});

describe('gw load reading the usage of a stream', () => {
  let flight: Flight | undefined;
  afterEach(() => flight?.close());

  /** Plays `events` (name, JSON data) as one messages stream. */
  async function messagesStream(events: Array<[string, object]>) {
    flight = new Flight(new AbortController().signal);
    const controller = { abort: () => undefined } as unknown as Dispatcher.DispatchController;
    const text = events.map(([ev, data]) => `event: ${ev}\ndata: ${JSON.stringify(data)}\n\n`).join('');
    const d = scripted(clock, [
      [0, (h) => h.onRequestStart?.(controller, {})],
      [1, (h) => h.onResponseStart?.(controller, 200, { 'content-type': 'text/event-stream' }, 'OK')],
      [2, (h) => h.onResponseData?.(controller, Buffer.from(text))],
      [3, (h) => h.onResponseEnd?.(controller, {})],
    ]);
    const messages = sendable({
      api: 'messages',
      model: 'm',
      stream: true,
      path: '/v1/messages',
      body: Buffer.from('{}'),
    });
    return exchange(target(d), messages, undefined, 0, flight);
  }

  it('messages: input and cache figures from message_start, the output from message_delta (as the wire sends them)', async () => {
    const o = await messagesStream([
      [
        'message_start',
        {
          type: 'message_start',
          message: {
            usage: {
              input_tokens: 70,
              output_tokens: 1,
              cache_creation_input_tokens: 5,
              cache_read_input_tokens: 40,
            },
          },
        },
      ],
      [
        'content_block_delta',
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
      ],
      [
        'message_delta',
        { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 15 } },
      ],
      ['message_stop', { type: 'message_stop' }],
    ]);
    // input_tokens is the gateway's total (cache reads and writes inside it); the cached part apart.
    expect(o).toMatchObject({ ok: true, inputTokens: 70, cachedTokens: 40, outputTokens: 15 });
  });

  it('messages: a message_delta that repeats the input with null cache fields keeps the earlier ones', async () => {
    const o = await messagesStream([
      [
        'message_start',
        { type: 'message_start', message: { usage: { input_tokens: 65, cache_read_input_tokens: 40 } } },
      ],
      [
        'message_delta',
        {
          type: 'message_delta',
          delta: {},
          usage: { input_tokens: 65, cache_read_input_tokens: null, output_tokens: 3 },
        },
      ],
      ['message_stop', { type: 'message_stop' }],
    ]);
    expect(o).toMatchObject({ ok: true, inputTokens: 65, cachedTokens: 40, outputTokens: 3 });
  });
});

describe('gw load reading a whole (non-streamed) answer', () => {
  let flight: Flight | undefined;
  afterEach(() => {
    flight?.close();
    vi.restoreAllMocks();
  });

  async function answer(status: number, body: string, split = false) {
    flight = new Flight(new AbortController().signal);
    const controller = { abort: () => undefined } as unknown as Dispatcher.DispatchController;
    const bytes = Buffer.from(body);
    const cut = split ? bytes.length >> 1 : bytes.length;
    const d = scripted(clock, [
      [0, (h) => h.onRequestStart?.(controller, {})],
      [1, (h) => h.onResponseStart?.(controller, status, { 'content-type': 'application/json' }, '')],
      [2, (h) => h.onResponseData?.(controller, bytes.subarray(0, cut))],
      [3, (h) => (cut < bytes.length ? h.onResponseData?.(controller, bytes.subarray(cut)) : undefined)],
      [4, (h) => h.onResponseEnd?.(controller, {})],
    ]);
    const plain = sendable({
      api: 'chat',
      model: 'm',
      stream: false,
      path: '/v1/chat/completions',
      body: Buffer.from('{}'),
    });
    return exchange(target(d), plain, undefined, 0, flight);
  }

  const ok = JSON.stringify({
    id: 'c1',
    choices: [{ index: 0, message: { role: 'assistant', content: 'say \\"completion_tokens\\": 99,' } }],
    usage: { prompt_tokens: 4, completion_tokens: 7, total_tokens: 11, completion_tokens_details: {} },
  });

  it('takes the output tokens from the usage of the answer, in one read or two', async () => {
    for (const split of [false, true]) {
      const o = await answer(200, ok, split);
      expect(o).toMatchObject({ ok: true, outputTokens: 7, e2eMs: 4 });
    }
    expect(await answer(200, ' {"usage": {"output_tokens" : 3 }} ')).toMatchObject({
      ok: true,
      outputTokens: 3,
    });
  });

  it('counts a body cut short, or not JSON, as malformed', async () => {
    for (const body of [
      '{"object": "list", "data": [ {"id": ',
      '<html>502</html>',
      '{"usage":{"completion_tokens":1}',
      '{"usage":{"completion_tokens":1},}',
    ]) {
      expect(await answer(200, body)).toMatchObject({ ok: false, code: 'malformed_body' });
    }
  });

  it('counts a failed status as a failure with its code, and an answer without usage as a success', async () => {
    const failed = '{"status":"failed","error":{"code":"upstream_error"},"usage":{"output_tokens":0}}';
    expect(await answer(200, failed)).toMatchObject({ ok: false, code: 'upstream_error' });
    const bare = await answer(200, '{"id":"c2","choices":[]}');
    expect(bare.ok).toBe(true);
    expect(bare.outputTokens).toBeUndefined();
    expect(await answer(429, '{"error":{"code":"rate_limit_exceeded"}}')).toMatchObject({
      ok: false,
      status: 429,
      code: 'rate_limit_exceeded',
    });
  });

  it('aborts the request on its connection when it is cancelled or its stream fails', async () => {
    const { aborted, controller } = recordingController();
    // Written, then silence: Ctrl-C (Flight.abortAll) ends it as cancelled and aborts it.
    flight = new Flight(new AbortController().signal);
    const silent = scripted(clock, [[0, (h) => h.onRequestStart?.(controller, {})]]);
    const pending = exchange(target(silent), req, undefined, 0, flight);
    await new Promise((r) => setTimeout(r, 0));
    flight.abortAll();
    expect(await pending).toMatchObject({ ok: false, code: 'interrupted', cancelled: true });
    expect(aborted).toEqual(['interrupted']);
    // A stream with an error event: a failure with the event's code, and the rest is not read.
    const failing = scripted(clock, [
      [0, (h) => h.onRequestStart?.(controller, {})],
      [1, (h) => h.onResponseStart?.(controller, 200, { 'content-type': 'text/event-stream' }, 'OK')],
      [2, (h) => h.onResponseData?.(controller, Buffer.from('data: {"error":{"code":"overloaded"}}\n\n'))],
    ]);
    flight.close();
    flight = new Flight(new AbortController().signal);
    expect(await exchange(target(failing), req, undefined, 0, flight)).toMatchObject({
      ok: false,
      code: 'overloaded',
    });
    expect(aborted).toEqual(['interrupted', 'overloaded']);
  });

  it('refuses an endless stream line or event (response_too_large) and stops reading it', async () => {
    const { aborted, controller } = recordingController();
    const line = Buffer.from(`data: ${'x'.repeat(1 << 20)}\n`);
    const endless = (chunk: Buffer) => {
      const steps: Array<[number, (h: Dispatcher.DispatchHandler) => void]> = [
        [0, (h) => h.onRequestStart?.(controller, {})],
        [1, (h) => h.onResponseStart?.(controller, 200, { 'content-type': 'text/event-stream' }, 'OK')],
      ];
      // 40 MiB of one unfinished event (or line), far past either cap.
      for (let i = 0; i < 40; i++) steps.push([2 + i, (h) => h.onResponseData?.(controller, chunk)]);
      return scripted(clock, steps);
    };
    for (const chunk of [line, Buffer.from('x'.repeat(1 << 20))]) {
      flight?.close();
      flight = new Flight(new AbortController().signal);
      const o = await exchange(target(endless(chunk)), req, undefined, 0, flight);
      expect(o).toMatchObject({ ok: false, code: 'response_too_large' });
    }
    expect(aborted).toEqual(['response_too_large', 'response_too_large']);
  });

  it('keeps at most MAX_ITL_GAPS gaps of a runaway stream, and its largest gap still decides goodput', async () => {
    const controller = { abort: () => undefined } as unknown as Dispatcher.DispatchController;
    const n = MAX_ITL_GAPS + 100;
    const steps: Array<[number, (h: Dispatcher.DispatchHandler) => void]> = [
      [0, (h) => h.onRequestStart?.(controller, {})],
      [1, (h) => h.onResponseStart?.(controller, 200, { 'content-type': 'text/event-stream' }, 'OK')],
    ];
    // A token every 1 ms, except one 500 ms gap after the kept ones.
    let t = 10;
    for (let i = 0; i < n; i++) {
      t += i === n - 10 ? 500 : 1;
      steps.push([t, (h) => h.onResponseData?.(controller, frame('x'))]);
    }
    steps.push([t + 1, (h) => h.onResponseData?.(controller, Buffer.from('data: [DONE]\n\n'))]);
    steps.push([t + 2, (h) => h.onResponseEnd?.(controller, {})]);
    flight = new Flight(new AbortController().signal);
    const o = await exchange(target(scripted(clock, steps)), req, undefined, 0, flight);
    expect(o.ok).toBe(true);
    expect(o.itlMs).toHaveLength(MAX_ITL_GAPS);
    expect(o.itlMaxMs).toBe(500);
    // Goodput with itl<100ms: the request is not good, though every kept gap was 1 ms.
    const strict = new Recorder(perRequestTerms(parseExpr('itl.max<100ms')));
    strict.add(o);
    expect(strict.ok).toBe(1);
    expect(strict.good).toBe(0);
    const loose = new Recorder(perRequestTerms(parseExpr('itl.max<1s')));
    loose.add(o);
    expect(loose.good).toBe(1);
  });
});

describe('gw load Flight (the requests in flight of a step)', () => {
  const made: Flight[] = [];
  afterEach(() => {
    for (const f of made.splice(0)) f.close();
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  /** A request that leaves the flight when it is cancelled, as an exchange does. */
  function request(flight: Flight, name: string, log: string[]) {
    const p: Pending = {
      cancel() {
        log.push(`cancel ${name}`);
        flight.delete(p);
      },
    };
    return p;
  }

  it('holds each request once, removes any of them, and ignores one it does not hold', () => {
    const flight = new Flight(new AbortController().signal);
    made.push(flight);
    const log: string[] = [];
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((n) => request(flight, n, log)) as [
      Pending,
      Pending,
      Pending,
      Pending,
    ];
    for (const p of [a, b, c, d]) flight.add(p);
    flight.add(b); // twice: still once
    expect(flight.size).toBe(4);
    flight.delete(b);
    flight.delete(d);
    flight.delete(a);
    flight.delete(a); // not held any more
    flight.delete(request(flight, 'never added', log));
    expect(flight.size).toBe(1);
    flight.add(a);
    flight.abortAll();
    expect(log.sort()).toEqual(['cancel a', 'cancel c']);
    expect(flight.size).toBe(0);
    expect(flight.aborted).toBe(true);
  });

  it('holds what a set would after any sequence of adds and removals (removal moves the last into the gap)', () => {
    const flight = new Flight(new AbortController().signal);
    made.push(flight);
    const log: string[] = [];
    const all = Array.from({ length: 40 }, (_, i) => request(flight, String(i), log));
    const model = new Set<Pending>();
    let x = 12345;
    const rand = (n: number): number => {
      x = (x * 1103515245 + 12345) % 2147483648;
      return x % n;
    };
    for (let step = 0; step < 2000; step++) {
      const p = all[rand(all.length)] as Pending;
      if (rand(3) === 0) {
        flight.delete(p);
        model.delete(p);
      } else {
        flight.add(p);
        model.add(p);
      }
      expect(flight.size).toBe(model.size);
    }
    flight.abortAll();
    const names = (ps: Iterable<Pending>): string[] =>
      [...ps].map((p) => `cancel ${all.indexOf(p)}`).sort((a, b) => a.localeCompare(b));
    expect(log.sort((a, b) => a.localeCompare(b))).toEqual(names(model));
    expect(flight.size).toBe(0);
  });

  it("cancels every request in flight when the step's signal aborts, and every one added after", () => {
    const ac = new AbortController();
    const flight = new Flight(ac.signal);
    made.push(flight);
    const log: string[] = [];
    const [a, b] = ['a', 'b'].map((n) => request(flight, n, log)) as [Pending, Pending];
    flight.add(a);
    flight.add(b);
    ac.abort();
    expect(log.sort()).toEqual(['cancel a', 'cancel b']);
    expect(flight.aborted).toBe(true);
    expect(flight.size).toBe(0);
  });
});
