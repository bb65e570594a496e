import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runGw } from '../helpers/gw.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * One estimator: the `--dry-run` of a create command and the `--dry-run` of a one-line batch of the same request
 * give the same figure (in-process; nothing is sent, no token needed).
 */
interface BatchDryRun {
  estimated_total: Record<string, number>;
  unpriced: number;
}

async function batchDryRun(url: string, body: Record<string, unknown>): Promise<BatchDryRun> {
  const d = tempDir('gw-batch-est-');
  const file = join(d, 'jobs.jsonl');
  writeFileSync(file, JSON.stringify({ custom_id: 'one', method: 'POST', url, body }) + '\n');
  const r = await runGw(['batch', 'run', file, '--out', join(d, 'out'), '--dry-run', '--json']);
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  return JSON.parse(r.stdout) as BatchDryRun;
}

describe('the create commands and gw batch price a request with one estimator', () => {
  it.each([
    { seconds: 5, resolution: '720p', amount: 4.5 },
    { seconds: 10, resolution: '1080p', amount: 12 },
    { seconds: 5, resolution: undefined, amount: 6 }, // 1080p is the default resolution
  ])('gw video create --dry-run: $seconds s at $resolution', async ({ seconds, resolution, amount }) => {
    const flags = ['--seconds', String(seconds), ...(resolution ? ['--resolution', resolution] : [])];
    const one = await runGw([
      'video',
      'create',
      'a fox',
      '-m',
      'clip-1.1-t2v',
      ...flags,
      '--dry-run',
      '--json',
    ]);
    expect(one.exitCode).toBe(0);
    const single = JSON.parse(one.stdout) as {
      body: Record<string, unknown>;
      price: { amount: number };
    };
    expect(single.price.amount).toBe(amount);
    const batch = await batchDryRun('/v1/videos', single.body);
    expect(batch.estimated_total).toEqual({ CNY: amount });
    // The human line says the same figure.
    const human = await runGw(['video', 'create', 'a fox', '-m', 'clip-1.1-t2v', ...flags, '--dry-run']);
    expect(human.stdout).toContain(`price: CNY ${amount.toFixed(2)} (`);
  });

  it('gw video create --dry-run without --seconds: a price per second only, unpriced in a batch', async () => {
    const one = await runGw([
      'video',
      'create',
      'a fox',
      '-m',
      'clip-1.1-t2v',
      '--resolution',
      '720p',
      '--dry-run',
    ]);
    expect(one.exitCode).toBe(0);
    expect(one.stdout).toContain(
      "price: not known in advance: seconds not given: the gateway's default length applies (CNY 0.90/s)",
    );
    const batch = await batchDryRun('/v1/videos', {
      model: 'clip-1.1-t2v',
      prompt: 'a fox',
      resolution: '720p',
    });
    expect(batch).toMatchObject({ estimated_total: {}, unpriced: 1 });
  });

  it('gw beta task create --dry-run: the SKU price per million tokens, no fixed amount, unpriced in a batch', async () => {
    const one = await runGw([
      'beta',
      'task',
      'create',
      'a cat',
      '-m',
      'gamma-video-2-0-fast',
      '--resolution',
      '720p',
      '--dry-run',
      '--json',
    ]);
    expect(one.exitCode).toBe(0);
    const single = JSON.parse(one.stdout) as {
      body: Record<string, unknown>;
      price: { beta: { sku: { price: number } } };
    };
    expect(single.price.beta.sku).toMatchObject({ sku: 'gamma-video-2-0-fast-novideo', price: 5.6 });
    const batch = await batchDryRun('/beta/api/v3/contents/generations/tasks', single.body);
    expect(batch).toMatchObject({ estimated_total: {}, unpriced: 1 });
  });

  it('gw alpha i2v --dry-run says no list price is published, as a batch counts it unpriced', async () => {
    const argv = ['alpha', 'i2v', '--image', 'https://example.com/a.jpg', '--prompt', 'run', '--dry-run'];
    const one = await runGw(argv);
    expect(one.exitCode).toBe(0);
    expect(one.stdout).toContain(
      'price: not known in advance: no list price is published for image-to-video',
    );
    const single = await runGw([...argv, '--json']);
    const { body } = JSON.parse(single.stdout) as { body: Record<string, unknown> };
    const batch = await batchDryRun('/alpha/v1/videos/image2video', body);
    expect(batch).toMatchObject({ estimated_total: {}, unpriced: 1 });
  });
});
