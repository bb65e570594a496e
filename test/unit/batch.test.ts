import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { classify } from '../../src/batch/errors.js';
import { parseLine, isProblem } from '../../src/batch/input.js';
import { Limits, type Ticket } from '../../src/batch/limits.js';
import { outputId, outputLine, serializeLine } from '../../src/batch/output.js';
import { reconcile } from '../../src/batch/reconcile.js';
import { parseShard, shardOf } from '../../src/batch/shard.js';
import type { BatchState } from '../../src/batch/state.js';
import { BatchWriter, loadState } from '../../src/batch/state.js';
import { ConnectionError, GatewayError, RateLimitError, TimeoutError } from '../../src/client/errors.js';
import { estimateRequest, impliedSpend, parseBudget } from '../../src/contract/estimate.js';
import { TimeLimitError, UsageError } from '../../src/core/errors.js';

describe('batch estimator', () => {
  it('prices clip-1.1 by the second in CNY (0.90 at 720p, 1.20 at 1080p) and leaves the rest unpriced', () => {
    expect(
      estimateRequest('/v1/videos', { model: 'clip-1.1-t2v', seconds: 5, resolution: '720p' }),
    ).toMatchObject({
      priced: true,
      currency: 'CNY',
      amount: 4.5,
    });
    expect(estimateRequest('/v1/videos', { model: 'clip-1.1-t2v', seconds: 10 })).toMatchObject({
      amount: 12,
    });
    expect(estimateRequest('/v1/videos', { model: 'clip-1.1-t2v' }).priced).toBe(false);
    expect(estimateRequest('/v1/videos', { model: 'vid-2.7-t2v', seconds: 5 }).priced).toBe(false);
    const beta = estimateRequest('/beta/api/v3/contents/generations/tasks', {
      model: 'gamma-video-2-0-fast',
      content: [{ type: 'text', text: 'x' }],
    });
    expect(beta).toMatchObject({ priced: false, currency: 'USD' });
    expect(estimateRequest('/v1/chat/completions', { model: 'chat-3.7-plus' }).priced).toBe(false);
  });

  it('derives spend from what a finished task reports', () => {
    expect(impliedSpend('/v1/videos', { model: 'clip-1.1-t2v' }, { seconds: 4, resolution: '720p' })).toEqual(
      {
        currency: 'CNY',
        amount: 3.6,
      },
    );
    expect(
      impliedSpend(
        '/beta/api/v3/contents/generations/tasks',
        { model: 'gamma-video-2-0-fast', content: [{ type: 'text', text: 'x' }] },
        { usage: { completion_tokens: 1_000_000 } },
      ),
    ).toEqual({ currency: 'USD', amount: 5.6 });
  });

  it('parses budgets', () => {
    expect(parseBudget('50CNY')).toEqual({ amount: 50, currency: 'CNY' });
    expect(parseBudget('10.5 usd')).toEqual({ amount: 10.5, currency: 'USD' });
    expect(parseBudget('10EUR')).toBeUndefined();
    expect(parseBudget('CNY')).toBeUndefined();
  });
});

describe('batch lines', () => {
  it('checks the envelope: JSON, custom_id, method, url, body, no streaming', () => {
    expect(isProblem(parseLine(1, '{'))).toBe(true);
    expect(parseLine(2, '{"url":"/v1/embeddings","body":{}}')).toMatchObject([{ field: 'custom_id' }]);
    expect(parseLine(3, '{"custom_id":"a/b","url":"/v1/embeddings","body":{}}')).toMatchObject([
      { field: 'custom_id' },
    ]);
    expect(parseLine(4, '{"custom_id":"a","method":"GET","url":"/v1/embeddings","body":{}}')).toMatchObject([
      { field: 'method' },
    ]);
    expect(parseLine(5, '{"custom_id":"a","url":"/v1/files","body":{}}')).toMatchObject([{ field: 'url' }]);
    expect(
      parseLine(6, '{"custom_id":"a","url":"/v1/chat/completions","body":{"model":"m","stream":true}}'),
    ).toMatchObject([{ field: 'body.stream' }]);
    const ok = parseLine(
      7,
      '{"custom_id":"a","url":"https://gw.example.com/v1/videos","body":{"model":"clip-1.1-t2v"}}',
    );
    expect(ok).toMatchObject({ url: '/v1/videos', model: 'clip-1.1-t2v', lineNo: 7 });
    expect(parseLine(8, '{"custom_id":"a","url":"/alpha/v1/videos/image2video","body":{}}')).toMatchObject({
      model: 'alpha-v1',
    });
  });

  it('gives every custom_id a stable output id', () => {
    expect(outputId('fox-1')).toBe(outputId('fox-1'));
    expect(outputId('fox-1')).not.toBe(outputId('fox-2'));
    expect(outputId('fox-1')).toMatch(/^batch_req_[0-9a-f]{16}$/);
  });
});

describe('batch output lines', () => {
  const body = { id: 'c1', choices: [{ index: 0, message: { role: 'assistant', content: 'héllo "x"' } }] };
  const line = outputLine('c-1', { status_code: 200, request_id: 'req_1', body }, null);

  it('writes the answer as it came when it fits on one line, and is the same JSON as serialising it', () => {
    const raw = ` ${JSON.stringify(body, null, 1).replace(/\n/g, ' ')} `;
    const text = serializeLine(line, raw);
    expect(text).not.toMatch(/[\n\r]/);
    expect(text).toContain(raw.trim());
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(line)));
    expect(serializeLine(line, JSON.stringify(body))).toBe(JSON.stringify(line));
    const noId = outputLine('c-2', { status_code: 200, request_id: null, body }, null);
    expect(serializeLine(noId, JSON.stringify(body))).toBe(JSON.stringify(noId));
  });

  it('serialises again an answer spread over lines, an empty one, or a line with a task or files', () => {
    const multi = JSON.stringify(body, null, 2);
    expect(serializeLine(line, multi)).toBe(JSON.stringify(line));
    expect(serializeLine(line, '\r\n')).toBe(JSON.stringify(line));
    const task = outputLine('c-3', { status_code: 200, request_id: 'r', body }, null, { task: { id: 't' } });
    expect(serializeLine(task, JSON.stringify(body))).toBe(JSON.stringify(task));
    const failed = outputLine('c-4', null, { code: 'x', message: 'y' });
    expect(serializeLine(failed, '{}')).toBe(JSON.stringify(failed));
  });
});

describe('batch shards', () => {
  it('parses k/n and splits ids stably and completely', () => {
    expect(parseShard('2/3')).toEqual({ k: 2, n: 3 });
    expect(() => parseShard('0/3')).toThrow(UsageError);
    expect(() => parseShard('4/3')).toThrow(UsageError);
    expect(() => parseShard('x')).toThrow(UsageError);
    const counts = [0, 0, 0];
    for (let i = 0; i < 3000; i++) {
      const k = shardOf(`id-${i}`, 3);
      expect(k).toBe(shardOf(`id-${i}`, 3));
      counts[k - 1] = (counts[k - 1] ?? 0) + 1;
    }
    for (const c of counts) expect(c).toBeGreaterThan(800);
    expect(shardOf('fox-1', 1)).toBe(1);
  });
});

describe('batch send outcomes', () => {
  it('resends only what cannot have been created', () => {
    const rl = new GatewayError({
      status: 429,
      code: 'rate_limit_exceeded',
      message: 'slow down',
      retryAfterMs: 1500,
    });
    expect(classify(rl)).toMatchObject({ kind: 'rate-limited', retryAfterMs: 1500 });
    const refused = new ConnectionError('connection failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    });
    expect(classify(refused)).toMatchObject({ kind: 'not-sent', code: 'ECONNREFUSED' });
    const connectTimeout = new ConnectionError('x', {
      cause: Object.assign(new Error('Connect Timeout Error'), { code: 'UND_ERR_CONNECT_TIMEOUT' }),
    });
    expect(classify(connectTimeout).kind).toBe('not-sent');
    const closed = new ConnectionError('x', {
      cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
    });
    expect(classify(closed).kind).toBe('doubt');
    expect(classify(new TimeLimitError('no answer')).kind).toBe('doubt');
    expect(classify(new TimeoutError('no answer within 60s')).kind).toBe('doubt');
    expect(classify(new ConnectionError('refused', { code: 'connection_refused' })).kind).toBe('not-sent');
    expect(classify(new ConnectionError('closed', { code: 'connection_error' })).kind).toBe('doubt');
    expect(
      classify(
        new RateLimitError({ status: 429, code: 'rate_limit_exceeded', message: 'x', retryAfterMs: 20 }),
      ),
    ).toMatchObject({ kind: 'rate-limited', retryAfterMs: 20 });
    const bad = new GatewayError({ status: 400, code: 'invalid_duration', message: 'seconds' });
    expect(classify(bad)).toMatchObject({ kind: 'failed', status: 400, code: 'invalid_duration' });
    expect(classify(new GatewayError({ status: 401, code: 'invalid_api_key', message: 'x' })).kind).toBe(
      'auth',
    );
  });
});

describe('batch limits (AIMD)', () => {
  it('halves a model on 429, pauses it for Retry-After (capped), and climbs back by one per round of successes', async () => {
    let now = 0;
    const l = new Limits(8, () => now);
    expect(l.limitOf('m')).toBe(8);
    l.release(await l.acquire('m'), 'rate-limited', 2000);
    expect(l.limitOf('m')).toBe(4);
    l.release(await l.acquire('other'), 'ok'); // other models are not paused
    let got = false;
    const p = l.acquire('m').then((t) => ((got = true), t));
    await Promise.resolve();
    expect(got).toBe(false);
    expect(l.canSend('m')).toBe(false);
    now = 2000;
    l.release(await l.acquire('other'), 'other'); // any release re-checks the waiters
    l.release(await p, 'ok');
    expect(got).toBe(true);
    for (let i = 0; i < 3; i++) l.release(await l.acquire('m'), 'ok');
    expect(l.limitOf('m')).toBe(5);
    l.release(await l.acquire('m'), 'rate-limited', 10 * 60_000);
    expect(l.limitOf('m')).toBe(2);
    expect(l.pausedFor('m')).toBe(60_000);
  });

  it('halves once for the 429s of requests sent together, and every 429 extends the pause', () => {
    let now = 0;
    const l = new Limits(8, () => now);
    const tickets = Array.from({ length: 8 }, () => l.take('m'));
    l.release(tickets[0] as Ticket, 'ok');
    for (const t of tickets.slice(1, 4)) l.release(t, 'rate-limited', 200);
    expect(l.limitOf('m')).toBe(4);
    now = 50;
    l.release(tickets[4] as Ticket, 'rate-limited', 300);
    expect(l.pausedFor('m')).toBe(300);
    // A request sent after the decrease and refused halves again.
    now = 400;
    for (const t of tickets.slice(5)) l.release(t, 'other');
    l.release(l.take('m'), 'rate-limited', 100);
    expect(l.limitOf('m')).toBe(2);
    expect(l.acceptedOf('m')).toBe(1);
  });

  it('holds the global ceiling across models', async () => {
    const l = new Limits(2);
    const a = await l.acquire('a');
    await l.acquire('b');
    let third = false;
    const p = l.acquire('c').then(() => (third = true));
    await Promise.resolve();
    expect(third).toBe(false);
    l.release(a, 'ok');
    await p;
    expect(l.inFlight).toBe(2);
  });
});

describe('batch reconcile after a crash', () => {
  it('settles a followed task whose line reached results.jsonl before its state record; follows the others again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-reconcile-'));
    try {
      const rec = (o: Record<string, unknown>): string => JSON.stringify({ at: 1, ...o });
      const send = (id: string): string => rec({ e: 'send', id, url: '/v1/videos', model: 'clip-1.1-t2v' });
      const created = (id: string): string => rec({ e: 'created', id, task: `video_${id}`, kind: 'video' });
      // d1: created, its result line written, then the kill (no "done"). d2: created, followed, nothing written.
      // d3: its create in flight. d4: created, then its task failed (the errors line made it, the record not).
      writeFileSync(
        join(dir, 'state.jsonl'),
        [
          send('d1'),
          created('d1'),
          send('d2'),
          created('d2'),
          send('d3'),
          send('d4'),
          created('d4'),
          '',
        ].join('\n'),
      );
      const line = (id: string, error: { code: string; message: string } | null): string =>
        JSON.stringify(
          outputLine(id, error ? null : { status_code: 200, request_id: null, body: {} }, error),
        );
      const d1 = outputLine('d1', { status_code: 200, request_id: null, body: {} }, null, {
        task: {
          id: 'video_d1',
          status: 'completed',
          model: 'clip-1.1-t2v',
          seconds: '5',
          resolution: '720p',
        },
      });
      writeFileSync(join(dir, 'results.jsonl'), `${JSON.stringify(d1)}\n`);
      writeFileSync(
        join(dir, 'errors.jsonl'),
        `${line('d4', { code: 'video_failed', message: 'failed' })}\n`,
      );
      const state = (await loadState(dir)) as BatchState;
      const writer = await BatchWriter.open(dir);
      await reconcile(dir, state, writer, { resendInDoubt: false, now: Date.now });
      await writer.close();
      expect(Object.fromEntries(['d1', 'd2', 'd3', 'd4'].map((id) => [id, state.status.get(id)]))).toEqual({
        d1: 'done',
        d2: 'created',
        d3: 'doubt',
        d4: 'failed',
      });
      expect([...state.created.keys()]).toEqual(['d2']);
      // The settled task's spend, from its final record: 5 s of clip-1.1 at 720p.
      expect(state.implied.get('d1')).toEqual({ c: 'CNY', a: 4.5 });
      // The same, read back from the log: the settlements are durable.
      const again = (await loadState(dir)) as BatchState;
      expect(again.status.get('d1')).toBe('done');
      expect(again.status.get('d4')).toBe('failed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('batch trust (issue 27)', () => {
  it('a 502/503/504 or a 5xx that is not the gateway’s JSON error is in doubt; a JSON 500 failed', () => {
    for (const status of [502, 503, 504]) {
      const e = new GatewayError({ status, code: `http_${status}`, message: 'proxy', body: { error: {} } });
      expect(classify(e)).toMatchObject({ kind: 'doubt', code: `http_${status}` });
    }
    expect(classify(new GatewayError({ status: 500, code: 'http_500', message: 'html' })).kind).toBe('doubt');
    const json500 = new GatewayError({
      status: 500,
      code: 'internal_error',
      message: 'x',
      body: { error: {} },
    });
    expect(classify(json500).kind).toBe('failed');
  });

  it('an answer with \\u escapes is serialised again (an escape can spell a secret)', () => {
    const body = { content: 'sk-secret-token' };
    const line = outputLine('c-1', { status_code: 200, request_id: 'r', body }, null);
    const text = serializeLine(line, '{"content":"\\u0073k-secret-token"}');
    expect(text).toBe(JSON.stringify(line));
    expect(text).toContain('sk-secret-token');
  });

  it('reports every problem of a line, and holds custom_ids of downloading lines to the file-name budget', () => {
    const p = parseLine(1, '{"custom_id":"a/b","method":"GET","url":"/v1/files"}');
    expect(isProblem(p) ? p.map((x) => x.field) : p).toEqual(['custom_id', 'method', 'url', 'body']);
    const id = (n: number) => 'x'.repeat(n);
    const line = (cid: string, url: string) => JSON.stringify({ custom_id: cid, url, body: { model: 'm' } });
    expect(isProblem(parseLine(2, line(id(239), '/v1/videos')))).toBe(false);
    expect(isProblem(parseLine(3, line(id(240), '/v1/videos')))).toBe(true);
    expect(isProblem(parseLine(4, line(id(228), '/beta/api/v3/contents/generations/tasks')))).toBe(false);
    expect(isProblem(parseLine(5, line(id(229), '/beta/api/v3/contents/generations/tasks')))).toBe(true);
    expect(isProblem(parseLine(6, line(id(512), '/v1/chat/completions')))).toBe(false);
    expect(isProblem(parseLine(7, line(id(513), '/v1/chat/completions')))).toBe(true);
  });

  it('reads lines as bytes: BOM dropped on line 1, bad UTF-8 and overlong lines named, a torn last line marked', async () => {
    const { readLines } = await import('../../src/batch/lines.js');
    const input = Buffer.concat([
      Buffer.from('\uFEFFone\r\n'),
      Buffer.from([0x74, 0xff, 0x0a]),
      Buffer.from(`${'y'.repeat(40)}\n\n`),
      Buffer.from('torn'),
    ]);
    const got = [];
    for await (const l of readLines(Readable.from([input.subarray(0, 7), input.subarray(7)]), {
      maxBytes: 32,
    })) {
      got.push(l);
    }
    expect(got).toEqual([
      { lineNo: 1, text: 'one', terminated: true },
      { lineNo: 2, bad: 'utf8', terminated: true },
      { lineNo: 3, bad: 'too_long', terminated: true },
      { lineNo: 4, text: '', terminated: true },
      { lineNo: 5, text: 'torn', terminated: false },
    ]);
  });

  it('the tail repair never cuts before the last complete line, however long the torn one is', async () => {
    const { repairTail } = await import('../../src/batch/state.js');
    const dir = mkdtempSync(join(tmpdir(), 'gw-tail-'));
    try {
      const path = join(dir, 'results.jsonl');
      writeFileSync(path, `{"a":1}\n${'z'.repeat(3 * 1024 * 1024)}`);
      await repairTail(path);
      expect(readFileSync(path, 'utf8')).toBe('{"a":1}\n');
      writeFileSync(path, 'no newline at all');
      await repairTail(path);
      expect(readFileSync(path, 'utf8')).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
