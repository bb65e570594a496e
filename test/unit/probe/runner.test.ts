import { describe, expect, it } from 'vitest';
import type { Exchange, GatewayClient } from '../../../src/client/gateway-client.js';
import { GatewayError } from '../../../src/client/errors.js';
import { UsageError } from '../../../src/core/errors.js';
import { errorShapeProblems, type Check, type CheckContext } from '../../../src/probe/checks.js';
import {
  exitCodeOf,
  finalize,
  isBurst,
  planModels,
  runChecklist,
  selectChecks,
  type CheckOutcome,
  type ChecklistOptions,
  type Selection,
} from '../../../src/probe/runner.js';

const check = (id: string, run: Check['run']): Check => ({ id, title: id, run });
const x = (over: Partial<Exchange> = {}): Exchange => ({
  method: 'POST',
  path: '/v1/chat/completions',
  status: 200,
  ms: 5,
  requestId: 'req-1',
  attempt: 0,
  ...over,
});

describe('selectChecks', () => {
  it('lists the six base checks in checklist order; --extended adds four', () => {
    expect(selectChecks({ extended: false, only: [], skip: [] }).listed.map((c) => c.id)).toEqual([
      'models',
      'chat',
      'chat-stream',
      'responses',
      'messages',
      'video',
    ]);
    const ext = selectChecks({ extended: true, only: [], skip: [] });
    expect(ext.listed.map((c) => c.id).slice(6)).toEqual([
      'model-not-found',
      'invalid-duration',
      'invalid-resolution',
      'embeddings',
    ]);
    expect(ext.run.size).toBe(10);
  });

  it('reports --skip and unselected (--only) checks as skipped', () => {
    const s = selectChecks({ extended: false, only: [], skip: ['video'] });
    expect(s.run.has('video')).toBe(false);
    expect(s.skipReason.get('video')).toBe('skipped (--skip)');
    const o = selectChecks({ extended: false, only: ['chat'], skip: [] });
    expect([...o.run]).toEqual(['chat']);
    expect(o.skipReason.get('models')).toBe('not selected (--only)');
  });

  it('runs an extended check named by --only without --extended', () => {
    const s = selectChecks({ extended: false, only: ['embeddings'], skip: [] });
    expect([...s.run]).toEqual(['embeddings']);
  });

  it('rejects an unknown id with a UsageError naming the valid ids', () => {
    const e = (() => {
      try {
        selectChecks({ extended: false, only: [], skip: ['vidoe'] });
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    expect(e).toBeInstanceOf(UsageError);
    expect((e as UsageError).exitCode).toBe(2);
    expect((e as UsageError).message).toContain('skip: "vidoe" is not a check');
    expect((e as UsageError).message).toContain('models, chat, chat-stream, responses, messages, video');
    expect(() => selectChecks({ extended: false, only: ['nope'], skip: [] })).toThrow(/only: "nope"/);
  });
});

describe('planModels', () => {
  const all = selectChecks({ extended: true, only: [], skip: [] }).run;

  it('defaults to the documents’ example models and expects every model in use', () => {
    const p = planModels({}, undefined, all);
    expect(p).toMatchObject({
      chatModel: 'chat-3.7-plus',
      responsesModel: 'chat-3.7-plus',
      messagesModel: 'chat-3.7-plus',
      videoModel: 'clip-1.1-t2v',
      embeddingModel: 'text-embedding-v4',
    });
    expect(p.models).toEqual(['chat-3.7-plus', 'clip-1.1-t2v', 'text-embedding-v4']);
  });

  it('takes flags over the profile, and --model adds planned models', () => {
    const p = planModels(
      { models: ['x-1'], chatModel: 'chat-flag', videoModel: 'vid-2.7-t2v' },
      { chatModel: 'chat-profile', messagesModel: 'msg-profile', embeddingModel: 'emb-p', models: ['y'] },
      all,
    );
    expect(p).toMatchObject({
      chatModel: 'chat-flag',
      responsesModel: 'chat-flag',
      messagesModel: 'msg-profile',
      videoModel: 'vid-2.7-t2v',
      embeddingModel: 'emb-p',
    });
    expect(p.models).toEqual(['x-1', 'chat-flag', 'msg-profile', 'vid-2.7-t2v', 'emb-p']);
    expect(planModels({}, { models: ['y'] }, new Set(['models'])).models).toEqual(['y']);
  });

  it('does not expect the model of a skipped check', () => {
    const s = selectChecks({ extended: false, only: [], skip: ['video'] });
    expect(planModels({}, undefined, s.run).models).toEqual(['chat-3.7-plus']);
  });
});

describe('finalize (rules every check shares)', () => {
  const c = check('chat', () => Promise.resolve({ status: 'pass', detail: '' }));

  it('fails a check whose answer had no X-Gateway-Request-Id', () => {
    const r = finalize(c, { status: 'pass', detail: 'fine' }, 12, [x({ requestId: undefined })]);
    expect(r.status).toBe('fail');
    expect(r.detail).toBe('POST /v1/chat/completions answered 200 without an X-Gateway-Request-Id header');
    expect(r.requestId).toBeUndefined();
  });

  it('ignores answers from another origin (a CDN is not the gateway) and connection failures', () => {
    const r = finalize(c, { status: 'pass', detail: 'fine' }, 12, [
      x(),
      x({ path: 'http://cdn.example/v.mp4', requestId: undefined }),
      x({ status: undefined, requestId: undefined }),
    ]);
    expect(r).toMatchObject({ status: 'pass', requestId: 'req-1', latencyMs: 12 });
  });

  it('turns a passing stream whose chunks arrived in one burst into a warning naming the times', () => {
    const outcome: CheckOutcome = {
      status: 'pass',
      detail: 'ok',
      ttftMs: 412.3,
      stream: { chunks: 12, firstMs: 412.3, lastMs: 412.9 },
    };
    const r = finalize(c, outcome, 413, [x()]);
    expect(r.status).toBe('warn');
    expect(r.detail).toBe(
      'all 12 chunks arrived in one burst (first at 412ms, last at 413ms): a proxy may be buffering the stream',
    );
    expect(r.ttftMs).toBe(412.3);
  });

  it('keeps a spread-out stream, a short one, and a failure as they are', () => {
    expect(isBurst({ chunks: 12, firstMs: 10, lastMs: 130 })).toBe(false);
    expect(isBurst({ chunks: 2, firstMs: 10, lastMs: 10 })).toBe(false);
    expect(isBurst({ chunks: 3, firstMs: 10, lastMs: 10.5 })).toBe(true);
    const failed = finalize(
      c,
      { status: 'fail', detail: 'no finish', stream: { chunks: 5, firstMs: 1, lastMs: 1 } },
      2,
      [x()],
    );
    expect(failed.status).toBe('fail');
  });
});

interface FakeClient {
  emit(x: Exchange): void;
}

function options(listed: Check[], over: Partial<ChecklistOptions> = {}): ChecklistOptions {
  const selection: Selection = {
    listed,
    run: new Set(listed.map((c) => c.id)),
    skipReason: new Map(),
  };
  let t = 0;
  return {
    gateway: 'http://gw.test',
    selection,
    plan: {
      models: [],
      chatModel: 'c',
      responsesModel: 'c',
      messagesModel: 'c',
      videoModel: 'v',
      embeddingModel: 'e',
    },
    client: ({ onExchange }) => Promise.resolve({ emit: onExchange } as unknown as GatewayClient),
    signal: new AbortController().signal,
    videoTimeoutMs: 1000,
    videoPoll: { initialMs: 10, maxMs: 10 },
    note: () => {},
    now: () => (t += 5),
    clock: () => new Date('2026-03-01T10:00:00Z'),
    ...over,
  };
}

/** Makes the check's client report one answer; `null` = an answer without the request-id header. */
async function answer(ctx: CheckContext, rid: string | null = 'req-x'): Promise<void> {
  const client = (await ctx.client()) as unknown as FakeClient;
  client.emit(x({ requestId: rid ?? undefined }));
}

describe('runChecklist', () => {
  it('runs checks concurrently and reports them in checklist order', async () => {
    // `a` can only finish after `b` started: a sequential runner would never end.
    let release!: () => void;
    const bStarted = new Promise<void>((r) => (release = r));
    const finished: string[] = [];
    const a = check('a', async (ctx) => {
      await bStarted;
      await answer(ctx, 'req-a');
      return { status: 'pass', detail: 'a ok' };
    });
    const b = check('b', async (ctx) => {
      release();
      await answer(ctx, 'req-b');
      return { status: 'pass', detail: 'b ok' };
    });
    const report = await runChecklist(options([a, b], { onFinish: (r) => finished.push(r.id) }));
    expect(finished).toEqual(['b', 'a']);
    expect(report.checks.map((c) => [c.id, c.status, c.requestId])).toEqual([
      ['a', 'pass', 'req-a'],
      ['b', 'pass', 'req-b'],
    ]);
    expect(report).toMatchObject({
      gateway: 'http://gw.test',
      startedAt: '2026-03-01T10:00:00.000Z',
      summary: { passed: 2, failed: 0, warned: 0, skipped: 0 },
    });
    expect(exitCodeOf(report)).toBe(0);
  });

  it('turns a thrown gateway error into a failure with its code, message and request id', async () => {
    const c = check('chat', async (ctx) => {
      await answer(ctx, 'req-9');
      throw new GatewayError({
        status: 500,
        code: 'service_error',
        message: 'upstream failure (req-9)',
        requestId: 'req-9',
      });
    });
    const report = await runChecklist(options([c]));
    expect(report.checks[0]).toMatchObject({
      status: 'fail',
      requestId: 'req-9',
      detail: 'service_error: upstream failure (req-9)',
      error: { code: 'service_error', message: 'upstream failure (req-9)', status: 500, requestId: 'req-9' },
    });
    expect(exitCodeOf(report)).toBe(1);
  });

  it('exits 3 when the gateway refused the token, and 0 with only warnings and skips', async () => {
    const refused = check('models', () =>
      Promise.reject(new GatewayError({ status: 401, code: 'invalid_api_key', message: 'unknown token' })),
    );
    expect(exitCodeOf(await runChecklist(options([refused])))).toBe(3);
    const warn = check('s', async (ctx) => {
      await answer(ctx);
      return { status: 'pass', detail: '', stream: { chunks: 4, firstMs: 5, lastMs: 5 } };
    });
    const o = options([warn, check('skipme', () => Promise.reject(new Error('must not run')))]);
    o.selection.run.delete('skipme');
    o.selection.skipReason.set('skipme', 'skipped (--skip)');
    const r = await runChecklist(o);
    expect(r.checks.map((c) => c.status)).toEqual(['warn', 'skip']);
    expect(r.summary).toEqual({ passed: 0, failed: 0, warned: 1, skipped: 1 });
    expect(exitCodeOf(r)).toBe(0);
  });

  it('fails a passing check whose answer lacked the request-id header', async () => {
    const c = check('chat', async (ctx) => {
      await answer(ctx, null);
      return { status: 'pass', detail: 'fine' };
    });
    const r = await runChecklist(options([c]));
    expect(r.checks[0]?.status).toBe('fail');
    expect(r.checks[0]?.detail).toContain('without an X-Gateway-Request-Id header');
  });

  it('passes notes, progress and created tasks through to the caller', async () => {
    const notes: string[] = [];
    const updates: string[] = [];
    const created: string[] = [];
    const c = check('video', async (ctx) => {
      ctx.note('price first');
      ctx.created('video', 'video_1', 'v', 'req-1');
      ctx.update('queued');
      await answer(ctx);
      return { status: 'pass', detail: 'done' };
    });
    await runChecklist(
      options([c], {
        note: (t) => notes.push(t),
        onUpdate: (_c, t) => updates.push(t),
        onCreated: (_k, id) => created.push(id),
      }),
    );
    expect([notes, updates, created]).toEqual([['price first'], ['queued'], ['video_1']]);
  });

  it('starts a slow check first and the others at its first answer, in checklist order in the report', async () => {
    const events: string[] = [];
    const fast = check('fast', async (ctx) => {
      events.push('fast runs');
      await answer(ctx, 'req-f');
      return { status: 'pass', detail: 'f' };
    });
    const slow: Check = {
      ...check('slow', async (ctx) => {
        events.push('slow runs');
        await new Promise((r) => setTimeout(r, 5));
        events.push('slow answers');
        await answer(ctx, 'req-s');
        await new Promise((r) => setTimeout(r, 5));
        return { status: 'pass', detail: 's' };
      }),
      slow: true,
    };
    const prepare = (c: Check): Promise<void> => {
      events.push(`prepare ${c.id}`);
      return Promise.resolve();
    };
    const report = await runChecklist(options([fast, slow], { headStartMs: 60_000, prepare }));
    expect(events).toEqual(['prepare slow', 'slow runs', 'slow answers', 'prepare fast', 'fast runs']);
    expect(report.checks.map((c) => [c.id, c.status])).toEqual([
      ['fast', 'pass'],
      ['slow', 'pass'],
    ]);
  });

  it('starts the others after the head start when the slow check has no answer yet', async () => {
    let release!: () => void;
    const othersRan = new Promise<void>((r) => (release = r));
    const slow: Check = {
      ...check('slow', async (ctx) => {
        await othersRan;
        await answer(ctx);
        return { status: 'pass', detail: 's' };
      }),
      slow: true,
    };
    const other = check('other', async (ctx) => {
      release();
      await answer(ctx);
      return { status: 'pass', detail: 'o' };
    });
    const r = await runChecklist(options([slow, other], { headStartMs: 1 }));
    expect(r.summary.passed).toBe(2);
  });

  it("awaits prepare() before the check's clock starts: its time is not the check's latency", async () => {
    const order: string[] = [];
    let t = 0;
    const c: Check = {
      ...check('chat', async (ctx) => {
        order.push('run');
        await answer(ctx);
        t += 7;
        return { status: 'pass', detail: '' };
      }),
      family: 'text',
    };
    const r = await runChecklist(
      options([c], {
        now: () => t,
        prepare: async (check) => {
          order.push(`prepare ${check.family ?? ''}`);
          await new Promise<void>((resolve) => setImmediate(resolve));
          t += 1000; // registering an in-process simulator's routes is not the gateway's latency
          order.push('prepared');
        },
      }),
    );
    expect(order).toEqual(['prepare text', 'prepared', 'run']);
    expect(r.checks[0]?.latencyMs).toBe(7);
  });

  it('fails the check whose prepare() fails, never runs it, and still reports the others', async () => {
    const ran: string[] = [];
    const run =
      (id: string): Check['run'] =>
      async (ctx) => {
        ran.push(id);
        await answer(ctx);
        return { status: 'pass', detail: '' };
      };
    const r = await runChecklist(
      options([check('a', run('a')), check('b', run('b'))], {
        prepare: (c) =>
          c.id === 'a' ? Promise.reject(new Error('cannot register the routes')) : Promise.resolve(),
      }),
    );
    expect(r.checks.map((x) => [x.id, x.status, x.detail])).toEqual([
      ['a', 'fail', 'internal: cannot register the routes'],
      ['b', 'pass', ''],
    ]);
    expect(r.checks[0]?.latencyMs).toBe(0);
    expect(ran).toEqual(['b']);
    expect(exitCodeOf(r)).toBe(1);
  });
});

describe('contract helpers', () => {
  it('checks an error body against common.md §2.4', () => {
    const good = {
      error: {
        message: 'model x not found (req-7)',
        type: 'invalid_request_error',
        code: 'model_not_found',
        request_id: 'req-7',
      },
    };
    expect(errorShapeProblems(good, 'req-7')).toEqual([]);
    expect(errorShapeProblems(good, 'req-8')).toEqual([
      "error.request_id req-7 differs from the header's req-8",
    ]);
    expect(errorShapeProblems({ error: { ...good.error, message: 'model x not found' } }, 'req-7')).toEqual([
      'error.message does not end with the request id in parentheses',
    ]);
    expect(errorShapeProblems({ error: { message: 'm' } }, undefined)).toEqual([
      'error.request_id is missing',
      'error.type is missing',
      'error.code is missing',
    ]);
  });
});
