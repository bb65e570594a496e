import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ProbeReport } from '../../src/probe/runner.js';
import { runGw, spawnGw } from '../helpers/gw.js';
import { useSim } from '../helpers/sim.js';
import { videoStore } from '../../src/sim/routes/videos.js';
import { tempDir } from '../helpers/tmp.js';

const BASE = ['models', 'chat', 'chat-stream', 'responses', 'messages', 'video'];

function junitPath(): string {
  return join(tempDir('gw-probe-'), 'out', 'probe.xml');
}

/** Runs `gw probe --json --junit <file>` in-process; returns the report, the JUnit text and the run. */
async function probe(
  args: string[],
  env: Record<string, string>,
): Promise<{ report: ProbeReport; junit: string; exitCode: number; stderr: string }> {
  const file = junitPath();
  const r = await runGw(['probe', '--json', '--junit', file, ...args], { env });
  let report: ProbeReport;
  try {
    report = JSON.parse(r.stdout) as ProbeReport;
  } catch {
    throw new Error(`not one JSON document on stdout (exit ${r.exitCode}):\n${r.stdout}\n${r.stderr}`);
  }
  return { report, junit: readFileSync(file, 'utf8'), exitCode: r.exitCode, stderr: r.stderr };
}

function check(report: ProbeReport, id: string): ProbeReport['checks'][number] {
  const c = report.checks.find((x) => x.id === id);
  if (c === undefined) throw new Error(`no check ${id} in ${JSON.stringify(report.checks)}`);
  return c;
}

/** The `<testcase name="id">…</testcase>` element of a JUnit file. */
function testcase(junit: string, id: string): string {
  const m = new RegExp(`<testcase [^>]*name="${id}"[^>]*>[\\s\\S]*?</testcase>`).exec(junit);
  if (!m) throw new Error(`no testcase ${id} in\n${junit}`);
  return m[0];
}

describe('gw probe --sim (the README quick start)', () => {
  it('prints six passing checks and exits 0, with no gateway or token configured', async () => {
    const r = await spawnGw(['probe', '--sim']);
    expect(r.exitCode, r.stderr).toBe(0);
    for (const id of BASE) expect(r.stdout).toMatch(new RegExp(`^${id}\\tpass\\t\\d`, 'm'));
    // Off a terminal stdout holds only the table; the summary is on stderr.
    expect(r.stderr).toMatch(/OK: 6 checks: 6 passed, 0 failed, 0 warned, 0 skipped in [\d.]+m?s/);
    // The price is a note on stderr, shown before the video is created; stdout carries only the report.
    expect(r.stderr).toContain('probe: creating a 3s 720p clip-1.1-t2v video (list price CNY 2.70)');
    expect(r.stdout).not.toContain('creating');
    expect(r.stdout).toMatch(/request id/);
    expect(r.stdout).toMatch(/req-sim-/);
  });

  it('--json prints one report document; --extended adds the contract checks', async () => {
    const file = junitPath();
    const r = await runGw(['probe', '--sim', '--extended', '--json', '--junit', file]);
    expect(r.exitCode, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as ProbeReport;
    expect(report.gateway).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(Date.parse(report.finishedAt)).toBeGreaterThanOrEqual(Date.parse(report.startedAt));
    expect(report.checks.map((c) => [c.id, c.status])).toEqual(
      [...BASE, 'model-not-found', 'invalid-duration', 'invalid-resolution', 'embeddings'].map((id) => [
        id,
        'pass',
      ]),
    );
    expect(report.summary).toEqual({ passed: 10, failed: 0, warned: 0, skipped: 0 });
    for (const c of report.checks) {
      expect(c.requestId).toMatch(/^req-sim-/);
      expect(c.latencyMs).toBeGreaterThan(0);
    }
    expect(check(report, 'chat-stream').ttftMs).toBeGreaterThan(0);
    expect(check(report, 'video').data).toMatchObject({
      model: 'clip-1.1-t2v',
      seconds: 3,
      resolution: '720p',
      listPrice: { currency: 'CNY', amount: 2.7 },
      state: 'completed',
    });
    expect(check(report, 'model-not-found').detail).toContain('404 model_not_found');
    expect(check(report, 'invalid-duration').detail).toMatch(/invalid_duration/);
    expect(check(report, 'invalid-resolution').detail).toMatch(/invalid_resolution/);
    const junit = readFileSync(file, 'utf8');
    expect(junit).toMatch(/<testsuites name="gw probe" tests="10" failures="0" errors="0" skipped="0"/);
    expect(junit).not.toContain('<failure');
  });

  it('--skip and --only select checks by id; an unknown id exits 2 naming the valid ones', async () => {
    const r = await runGw(['probe', '--sim', '--json', '--only', 'models', '--only', 'chat']);
    expect(r.exitCode).toBe(0);
    const report = JSON.parse(r.stdout) as ProbeReport;
    expect(report.checks.filter((c) => c.status !== 'skip').map((c) => c.id)).toEqual(['models', 'chat']);
    expect(report.summary.skipped).toBe(4);
    const bad = await runGw(['probe', '--sim', '--skip', 'vidoe']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('skip: "vidoe" is not a check (one of: models, chat, chat-stream');
    expect(bad.stdout).toBe('');
  });

  it('on a terminal, draws a live line per check on stderr and keeps stdout for the report', async () => {
    const r = await runGw(['probe', '--sim', '--only', 'models,chat'], { tty: true });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toMatch(/models +✔ \d+ visible/);
    expect(r.stderr).toMatch(/chat +✔ chat-3\.7-plus/);
    // The block erases itself at the end (cursor up over its lines, clear to the end of the screen).
    expect(r.stderr.endsWith('\u001b[6A\u001b[J')).toBe(true);
    expect(r.stdout).not.toContain('\u001b');
    expect(r.stdout).toMatch(/OK: 6 checks: 2 passed, 0 failed, 0 warned, 4 skipped/);
  });

  it('without --sim, no base URL is a configuration error (exit 3) and nothing runs', async () => {
    const r = await runGw(['probe']);
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain('no gateway base URL');
    expect(r.stdout).toBe('');
  });
});

describe('gw probe against a faulty gateway', () => {
  it('fails models when a planned model is invisible, explaining the documented causes', async () => {
    const sim = await useSim({
      tokens: { 'sk-narrow-000001': { tenant: 't', models: ['chat-3.7-plus', 'text-embedding-v4'] } },
    });
    const env = { GW_BASE_URL: sim.baseUrl, GW_TOKEN: 'sk-narrow-000001' };
    const { report, junit, exitCode } = await probe(
      ['--only', 'models', '--model', 'chat-3.7-plus', '--model', 'clip-1.1-t2v'],
      env,
    );
    expect(exitCode).toBe(1);
    const c = check(report, 'models');
    expect(c.status).toBe('fail');
    expect(c.detail).toContain('not listed: clip-1.1-t2v (2 visible)');
    expect(c.detail).toContain(
      "the token's permissions, the channel model configuration or the upstream account entitlement",
    );
    expect(testcase(junit, 'models')).toMatch(/<failure message="not listed: clip-1\.1-t2v/);
  });

  it('fails chat on a gateway error, showing its code, message and request id', async () => {
    const sim = await useSim();
    sim.sim.addFault({ route: 'POST /v1/chat/completions', kind: 'status', status: 500 });
    const { report, junit, exitCode } = await probe(['--only', 'chat'], sim.env);
    expect(exitCode).toBe(1);
    const c = check(report, 'chat');
    expect(c).toMatchObject({
      status: 'fail',
      error: { code: 'service_error', status: 500 },
      detail: expect.stringMatching(/^service_error: upstream failure \(simulated\) \(req-sim-\w+\)$/),
    });
    expect(c.requestId).toMatch(/^req-sim-/);
    expect(testcase(junit, 'chat')).toMatch(/<failure message="service_error: upstream failure/);
    expect(testcase(junit, 'chat')).toContain('type="service_error"');
  });

  it('fails chat-stream when the stream is cut before its finishing chunk', async () => {
    const sim = await useSim({ timings: { streamDelayMs: 5 } });
    sim.sim.addFault({ route: 'POST /v1/chat/completions', kind: 'drop', after: 2 });
    const { report, junit, exitCode } = await probe(['--only', 'chat-stream'], sim.env);
    expect(exitCode).toBe(1);
    const c = check(report, 'chat-stream');
    expect(c.status).toBe('fail');
    expect(c.detail).toMatch(
      /^(stream broke after 2 chunks, before a finishing chunk|the stream ended after 2 chunks without a finishing chunk)/,
    );
    expect(testcase(junit, 'chat-stream')).toContain('<failure message="');
  });

  it('fails a check whose answer carries no X-Gateway-Request-Id', async () => {
    const sim = await useSim();
    sim.sim.addFault({ route: 'POST /v1/responses', kind: 'no-request-id' });
    const { report, junit, exitCode } = await probe(['--only', 'responses,messages'], sim.env);
    expect(exitCode).toBe(1);
    expect(check(report, 'responses')).toMatchObject({
      status: 'fail',
      detail: 'POST /v1/responses answered 200 without an X-Gateway-Request-Id header',
    });
    expect(check(report, 'responses').requestId).toBeUndefined();
    expect(check(report, 'messages').status).toBe('pass');
    expect(testcase(junit, 'responses')).toContain('without an X-Gateway-Request-Id header');
  });

  it('fails video when the task ends failed, with the task error', async () => {
    const sim = await useSim();
    // The probe writes its own prompt, so the sim's [sim:fail] trigger is set on every video it stores.
    const store = videoStore(sim.sim);
    const set = store.set.bind(store);
    store.set = (id, v) => set(id, Object.assign(v, { trigger: 'fail' as const }));
    const { report, junit, exitCode } = await probe(['--only', 'video'], sim.env);
    expect(exitCode).toBe(1);
    const c = check(report, 'video');
    expect(c).toMatchObject({
      status: 'fail',
      error: { code: 'upstream_task_failed' },
      data: { state: 'failed', listPrice: { currency: 'CNY', amount: 2.7 } },
    });
    expect(c.detail).toMatch(
      /^video_\w+ ended failed after [\d.]+m?s: upstream_task_failed: the upstream video task failed/,
    );
    expect(c.requestId).toMatch(/^req-sim-/);
    expect(testcase(junit, 'video')).toMatch(/<failure message="video_\w+ ended failed/);
  });

  it('exits 3 when the gateway refuses the token (every check fails with 401)', async () => {
    const sim = await useSim();
    const { report, exitCode } = await probe(['--skip', 'video'], { ...sim.env, GW_TOKEN: 'sk-wrong-0001' });
    expect(exitCode).toBe(3);
    expect(check(report, 'models')).toMatchObject({
      status: 'fail',
      error: { code: 'invalid_api_key', status: 401 },
    });
    expect(report.summary).toMatchObject({ failed: 5, skipped: 1 });
  });

  it('Ctrl-C stops a running probe with exit 130 and closes the in-process simulator', async () => {
    const ac = new AbortController();
    const sim = await useSim({ timings: { videoQueuedMs: 3_600_000 } });
    const run = runGw(['probe', '--only', 'video'], { env: sim.env, signal: ac.signal });
    // Abort once the video exists (the probe is then polling it).
    while (!sim.requests.some((r) => r.method === 'GET' && r.path.startsWith('/v1/videos/'))) {
      await new Promise((r) => setTimeout(r, 10));
    }
    ac.abort();
    const r = await run;
    expect(r.exitCode).toBe(130);
    expect(r.stdout).toBe('');
  });

  it('fails video when it does not end within --video-timeout', async () => {
    const sim = await useSim({ timings: { videoQueuedMs: 3_600_000 } });
    const { report, junit, exitCode } = await probe(['--only', 'video', '--video-timeout', '1s'], sim.env);
    expect(exitCode).toBe(1);
    const c = check(report, 'video');
    expect(c.status).toBe('fail');
    expect(c.detail).toMatch(/^video_\w+ still queued after 1\.0s \(--video-timeout\)$/);
    expect(c.error?.code).toBe('timeout');
    expect(testcase(junit, 'video')).toMatch(/<failure message="video_\w+ still queued/);
  });

  it('warns (exit 0) when a stream arrives in one burst, and passes a stream that trickles', async () => {
    const sim = await useSim({ timings: { streamDelayMs: 10 } });
    const normal = await probe(['--only', 'chat-stream'], sim.env);
    expect(normal.exitCode).toBe(0);
    expect(check(normal.report, 'chat-stream').status).toBe('pass');
    sim.sim.addFault({ route: 'POST /v1/chat/completions', kind: 'burst' });
    const { report, junit, exitCode } = await probe(['--only', 'chat-stream'], sim.env);
    expect(exitCode).toBe(0);
    const c = check(report, 'chat-stream');
    expect(c.status).toBe('warn');
    expect(c.detail).toMatch(
      /^all \d+ chunks arrived in one burst \(first at \d+ms, last at \d+ms\): a proxy may be buffering the stream$/,
    );
    expect(report.summary).toMatchObject({ warned: 1, failed: 0 });
    expect(testcase(junit, 'chat-stream')).toContain('<system-out>warning: all');
    expect(testcase(junit, 'chat-stream')).not.toContain('<failure');
  });
});
