/**
 * Helpers of the `gw batch` end-to-end tests: a simulator with a known token and instant tasks, input lines,
 * reading JSONL files back, counting creates in the simulator's log, and waiting on the state log.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SimHandle, StartSimOptions } from '../../src/sim/server.js';
import { runGw, type GwResult } from './gw.js';
import { useSim } from './sim.js';

export const TOKEN = 'sk-batch-CANARY-5f3e9a1c77';
export const MARKS = [TOKEN, 'CANARY-5f3e9a1c77'];

/** A simulator that knows TOKEN, with video and beta tasks done at their first look. */
export async function batchSim(
  o: StartSimOptions = {},
): Promise<SimHandle & { env: Record<string, string> }> {
  const s = await useSim({
    tokens: { [TOKEN]: { tenant: 'default', models: '*' } },
    ...o,
    timings: { videoQueuedMs: 0, videoRunningMs: 0, betaQueuedMs: 0, betaRunningMs: 0, ...o.timings },
  });
  return Object.assign(s, { env: { GW_BASE_URL: s.baseUrl, GW_TOKEN: TOKEN } });
}

export type Line = { custom_id: string; method: 'POST'; url: string; body: Record<string, unknown> };

export const chat = (id: string): Line => ({
  custom_id: id,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model: 'chat-3.7-plus', messages: [{ role: 'user', content: `prompt ${id}` }] },
});

export const video = (id: string, seconds = 3, resolution = '720p'): Line => ({
  custom_id: id,
  method: 'POST',
  url: '/v1/videos',
  body: { model: 'clip-1.1-t2v', prompt: `prompt ${id}`, seconds, resolution },
});

export const beta = (id: string): Line => ({
  custom_id: id,
  method: 'POST',
  url: '/beta/api/v3/contents/generations/tasks',
  body: { model: 'gamma-video-2-0-fast', content: [{ type: 'text', text: `prompt ${id}` }] },
});

/** Writes `<dir>/jobs.jsonl` (a string is written as it is). */
export function writeInput(dir: string, lines: Array<Line | string>): string {
  const file = join(dir, 'jobs.jsonl');
  writeFileSync(file, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
  return file;
}

/** The records of a JSONL file (none when it is missing). */
export function jsonl(path: string): Array<Record<string, unknown>> {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** How many create requests the simulator received for each prompt (`prompt <custom_id>`). */
export function createsByPrompt(s: SimHandle, path: string, status?: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of s.requests) {
    if (r.method !== 'POST' || r.path !== path) continue;
    if (status !== undefined && r.status !== status) continue;
    const b = r.body as
      | { prompt?: string; messages?: Array<{ content: string }>; content?: Array<{ text?: string }> }
      | undefined;
    const p = b?.prompt ?? b?.messages?.[0]?.content ?? b?.content?.[0]?.text ?? '';
    out.set(p, (out.get(p) ?? 0) + 1);
  }
  return out;
}

/** Every file under a directory. */
export function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  return readdirSync(path).flatMap((name) => {
    const p = join(path, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

/** Resolves once the state log satisfies `pred` (polled on file changes; no fixed sleeps decide anything). */
export async function untilState(
  dir: string,
  pred: (records: Array<Record<string, unknown>>) => boolean,
): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (pred(jsonl(join(dir, 'state.jsonl')))) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the state log never reached the expected point');
}

/** gw in-process (main() with captured streams; the helpers' fast clock unless `clock` is 'real'). */
export function gw(
  argv: string[],
  env: Record<string, string>,
  home: Record<string, string>,
  o: { clock?: 'real'; signal?: AbortSignal; stdin?: string } = {},
): Promise<GwResult> {
  return runGw(argv, { env: { ...home, ...env }, ...o });
}
