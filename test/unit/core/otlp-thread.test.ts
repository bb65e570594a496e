/**
 * The OTLP export on its worker thread (the npm build) and on the command's own thread (the single executable):
 * the same spans and GenAI metrics reach the collector either way, and closing waits for the last export.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RequestSpan } from '../../../src/client/trace.js';
import { startOtlpExport } from '../../../src/core/otlp-thread.js';
import { startOtlpReceiver } from '../../helpers/otlp.js';

const WORKER = join(import.meta.dirname, '..', '..', '..', 'dist', 'otlp-worker.js');
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

function span(i: number): RequestSpan {
  return {
    traceId: TRACE,
    spanId: (i + 1).toString(16).padStart(16, '0'),
    method: 'POST',
    path: '/v1/chat/completions',
    origin: 'http://127.0.0.1:8787',
    startUnixMs: Date.now(),
    durationMs: 12,
    status: 200,
    model: 'chat-3.7-plus',
    ttftMs: 3,
    chunkGapsMs: [1, 2],
    inputTokens: 5,
    outputTokens: 7,
  };
}

describe('startOtlpExport', () => {
  it.each([
    ['on a worker thread', WORKER],
    ['on this thread', undefined],
  ])('%s: every span and the GenAI metrics by the time close() returns', async (_, file) => {
    if (file !== undefined) expect(existsSync(file), 'npm run build writes dist/otlp-worker.js').toBe(true);
    const rx = await startOtlpReceiver();
    const warnings: string[] = [];
    const otlp = startOtlpExport(
      {
        endpoints: { traces: `${rx.url}/v1/traces`, metrics: `${rx.url}/v1/metrics` },
        warn: (t) => warnings.push(t),
      },
      file,
    );
    for (let i = 0; i < 3000; i++) otlp.record(span(i));
    await otlp.close();
    expect(warnings).toEqual([]);
    expect(rx.spans).toHaveLength(3000);
    expect(new Set(rx.spans.map((s) => s.traceId))).toEqual(new Set([TRACE]));
    expect(rx.metricNames).toContain('gen_ai.client.operation.time_per_output_chunk');
    expect(rx.metricNames).toContain('gen_ai.client.token.usage');
  });
});
