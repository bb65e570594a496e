import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Limits, type Ticket } from '../../src/batch/limits.js';
import { Scheduler, type Resend } from '../../src/batch/schedule.js';

/** An item of the input: its id and model. */
interface Item {
  id: string;
  model: string;
}

/** What the fake gateway saw. */
interface Trace {
  /** Every send: time, item, and whether it was the item's first. */
  sends: Array<{ at: number; n: number; id: string; model: string; first: boolean }>;
  /** Every 429 as the client received it: when, and the Retry-After it carried. */
  refusals: Array<{ at: number; n: number; id: string; model: string; retryAfterMs: number }>;
  created: Map<string, number>;
  gaveUp: Array<{ id: string; attempts: number }>;
}

/**
 * A gateway with a token bucket per model (like the simulator's `rateLimit`: `rate` requests a second, `burst`),
 * answering 429 with the milliseconds until a request would pass; the request reaches it `rtt / 2` after it is
 * sent and the answer comes back as long after. Fake timers: no real time passes.
 */
function gateway(o: { rate: number; burst: number; rtt: number; refuseAll?: string[] }) {
  const buckets = new Map<string, { tokens: number; at: number }>();
  const trace: Trace = { sends: [], refusals: [], created: new Map(), gaveUp: [] };
  const seen = new Set<string>();
  let n = 0; // the order of events, for events at the same instant
  const half = (): Promise<void> => new Promise((r) => setTimeout(r, o.rtt / 2));
  const limited = (model: string): number | undefined => {
    if (o.refuseAll?.includes(model)) return 500;
    const now = Date.now();
    const b = buckets.get(model) ?? { tokens: o.burst, at: now };
    b.tokens = Math.min(o.burst, b.tokens + ((now - b.at) / 1000) * o.rate);
    b.at = now;
    buckets.set(model, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return undefined;
    }
    return Math.max(1, Math.ceil(((1 - b.tokens) / o.rate) * 1000));
  };
  const send =
    (limits: Limits) =>
    async (item: Item, ticket: Ticket): Promise<Resend | undefined> => {
      trace.sends.push({ at: Date.now(), n: n++, id: item.id, model: item.model, first: !seen.has(item.id) });
      seen.add(item.id);
      await half();
      const wait = limited(item.model);
      if (wait === undefined) trace.created.set(item.id, (trace.created.get(item.id) ?? 0) + 1);
      await half();
      if (wait !== undefined) {
        trace.refusals.push({ at: Date.now(), n: n++, id: item.id, model: item.model, retryAfterMs: wait });
        limits.release(ticket, 'rate-limited', wait);
        return { rateLimited: true, waitMs: 0, code: 'rate_limit_exceeded', message: 'rate limit exceeded' };
      }
      limits.release(ticket, 'ok');
      return undefined;
    };
  return { trace, send };
}

/** Runs a scheduler over `items` against the fake gateway to the end, advancing the fake clock. */
async function run(
  items: Item[],
  o: {
    concurrency: number;
    maxAttempts: number;
    rate: number;
    burst: number;
    rtt: number;
    refuseAll?: string[];
  },
): Promise<Trace & { end: number }> {
  const limits = new Limits(o.concurrency);
  const g = gateway(o);
  const input = items[Symbol.iterator]();
  const s = new Scheduler<Item>(limits, o.maxAttempts, {
    model: (i) => i.model,
    next: () => Promise.resolve(input.next().value),
    admit: () => 'send',
    send: g.send(limits),
    giveUp: (item, attempts) => {
      g.trace.gaveUp.push({ id: item.id, attempts });
      return Promise.resolve();
    },
    stopped: () => false,
    room: () => true,
    fatal: (e) => {
      throw e;
    },
  });
  const started = Date.now();
  let done = false;
  const p = s.run().finally(() => (done = true));
  // Advance the fake clock until the scheduler is done (bounded: a scheduler that never ends fails the test).
  for (let i = 0; i < 100_000 && !done; i++) await vi.advanceTimersByTimeAsync(5);
  expect(done).toBe(true);
  await p;
  return { ...g.trace, end: Date.now() - started };
}

const items = (n: number, model = 'chat'): Item[] =>
  Array.from({ length: n }, (_, i) => ({ id: `${model}-${i}`, model }));

describe('batch scheduling under a rate limit (fake clock)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('gets every item through a tight limit with the default 8 attempts, each created once', async () => {
    // Eight in flight against one request each 200 ms: most sends are refused at first.
    const t = await run(items(40), { concurrency: 8, maxAttempts: 8, rate: 5, burst: 1, rtt: 10 });
    expect(t.refusals.length).toBeGreaterThan(0);
    expect(t.gaveUp).toEqual([]);
    expect(t.created.size).toBe(40);
    for (const n of t.created.values()) expect(n).toBe(1);
  });

  it('starts no send of a model while its lane is paused by a Retry-After', async () => {
    const t = await run(items(30), { concurrency: 8, maxAttempts: 8, rate: 5, burst: 1, rtt: 10 });
    expect(t.refusals.length).toBeGreaterThan(0);
    for (const r of t.refusals) {
      const early = t.sends.filter((s) => s.n > r.n && s.at < r.at + r.retryAfterMs);
      expect(early).toEqual([]);
    }
  });

  it('sends an item refused with 429 again before any new line of its model', async () => {
    const t = await run(items(30), { concurrency: 4, maxAttempts: 8, rate: 5, burst: 1, rtt: 10 });
    for (const r of t.refusals) {
      const resent = t.sends.find((s) => s.id === r.id && s.n > r.n);
      expect(resent).toBeDefined();
      const overtook = t.sends.filter((s) => s.first && s.n > r.n && s.n < (resent?.n ?? 0));
      expect(overtook).toEqual([]);
    }
  });

  it('ends the items of a lane that refuses everything after --max-attempts refusals in a row', async () => {
    const t = await run(items(3, 'shut'), {
      concurrency: 4,
      maxAttempts: 3,
      rate: 5,
      burst: 1,
      rtt: 10,
      refuseAll: ['shut'],
    });
    expect(t.created.size).toBe(0);
    expect(t.gaveUp.map((g) => g.id).sort()).toEqual(['shut-0', 'shut-1', 'shut-2']);
    for (const g of t.gaveUp) expect(g.attempts).toBe(3);
    // The first refusal is free (the lane may simply be busy); the next three count.
    for (const id of ['shut-0', 'shut-1', 'shut-2'])
      expect(t.sends.filter((s) => s.id === id)).toHaveLength(4);
  });

  it('does not hold back the lines of other models behind a paused one', async () => {
    const mixed = items(4, 'shut').flatMap((x, i) => [x, ...items(10, 'open').slice(i * 2, i * 2 + 2)]);
    const t = await run(mixed, {
      concurrency: 4,
      maxAttempts: 2,
      rate: 1000,
      burst: 100,
      rtt: 10,
      refuseAll: ['shut'],
    });
    expect([...t.created.keys()].filter((k) => k.startsWith('open'))).toHaveLength(8);
    // Every open line went out before the shut lane's first pause ended.
    const lastOpen = Math.max(...t.sends.filter((s) => s.model === 'open').map((s) => s.at));
    const firstRefusal = Math.min(...t.refusals.map((r) => r.at));
    expect(lastOpen).toBeLessThan(firstRefusal + 500);
  });

  it('counts every send of an item whose connection never opened, and gives up after --max-attempts', async () => {
    const limits = new Limits(4);
    const sends: number[] = [];
    const gaveUp: number[] = [];
    const input = items(1)[Symbol.iterator]();
    const s = new Scheduler<Item>(limits, 3, {
      model: (i) => i.model,
      next: () => Promise.resolve(input.next().value),
      admit: () => 'send',
      send: (_item, ticket) => {
        sends.push(Date.now());
        limits.release(ticket, 'other');
        return Promise.resolve({
          rateLimited: false,
          waitMs: 1000,
          code: 'ECONNREFUSED',
          message: 'refused',
        });
      },
      giveUp: (_item, attempts) => {
        gaveUp.push(attempts);
        return Promise.resolve();
      },
      stopped: () => false,
      room: () => true,
      fatal: (e) => {
        throw e;
      },
    });
    const p = s.run();
    await vi.advanceTimersByTimeAsync(5000);
    await expect(p).resolves.toEqual({ unsent: 0, refused: false });
    expect(gaveUp).toEqual([3]);
    expect(sends.map((t) => t - (sends[0] as number))).toEqual([0, 1000, 2000]);
  });

  it('stops submitting when the budget refuses, counting the lines read but not sent', async () => {
    const limits = new Limits(1);
    const sent: string[] = [];
    const input = items(5)[Symbol.iterator]();
    const s = new Scheduler<Item>(limits, 8, {
      model: (i) => i.model,
      next: () => Promise.resolve(input.next().value),
      admit: (item) => (item.id !== 'chat-2' ? 'send' : 'stop'),
      send: (item, ticket) => {
        sent.push(item.id);
        limits.release(ticket, 'ok');
        return Promise.resolve(undefined);
      },
      giveUp: () => Promise.resolve(),
      stopped: () => false,
      room: () => true,
      fatal: (e) => {
        throw e;
      },
    });
    const p = s.run();
    await vi.advanceTimersByTimeAsync(0);
    const r = await p;
    expect(sent).toEqual(['chat-0', 'chat-1']);
    expect(r.refused).toBe(true);
    // chat-2 and whatever was read ahead of it; the engine counts the rest of the input.
    expect(r.unsent + [...input].length).toBe(3);
  });
});
