import { rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/client/errors.js';
import { parsePositiveDuration } from '../../../src/core/duration.js';
import { InterruptedError, UsageError } from '../../../src/core/errors.js';
import { LOCAL_LIMITS, readLocalFile } from '../../../src/core/local-file.js';
import { MAX_RETRY_AFTER_MS, poll } from '../../../src/client/poll.js';
import { fakeClock } from '../../helpers/clock.js';
import { tempDir } from '../../helpers/tmp.js';

const dir = tempDir('gw-bounds-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('polling bounds', () => {
  it('caps an absurd Retry-After at the maximum, and by the time left', async () => {
    for (const [timeoutMs, expected] of [
      [undefined, MAX_RETRY_AFTER_MS],
      [10_000, 10_000],
    ] as const) {
      const c = fakeClock();
      let n = 0;
      await poll({
        fetch: () => {
          if (n++ === 0) {
            const e = new GatewayError({ status: 429, code: 'rate_limit_exceeded', message: 'slow' });
            e.retryAfterMs = 1e12;
            return Promise.reject(e);
          }
          return Promise.resolve('done');
        },
        done: () => true,
        timeoutMs,
        sleep: c.sleep,
        now: c.now,
      }).catch(() => undefined);
      expect(c.sleeps[0]).toBe(expected);
    }
  });

  it('--timeout 0 and --interval 0 are refused (exit 2)', () => {
    expect(() => parsePositiveDuration('0', 'timeout')).toThrow(UsageError);
    expect(() => parsePositiveDuration('0ms', 'interval')).toThrow(/interval: "0ms" must be more than zero/);
    expect(parsePositiveDuration('500ms', 'interval')).toBe(500);
  });
});

describe('local files are read within a limit', () => {
  const opts = { flag: '--image', field: 'image', limit: LOCAL_LIMITS.image };

  it('a 450 MB file is refused from its size, naming the limit, before any read', async () => {
    const big = join(dir, 'big.png');
    writeFileSync(big, '');
    truncateSync(big, 450 * 1024 * 1024);
    const e = await readLocalFile(big, opts).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UsageError);
    expect((e as UsageError).message).toBe('--image: "' + big + '" is 450 MiB; the limit is 32 MiB');
  });

  it('/dev/zero (a device of no stated size) stops at the limit', async () => {
    await expect(readLocalFile('/dev/zero', { ...opts, limit: 1_000_000 })).rejects.toThrow(
      /larger than the limit; the limit is 1000000 bytes/,
    );
  });

  it('a directory or a missing file is a UsageError naming the path; an abort is InterruptedError', async () => {
    await expect(readLocalFile(dir, opts)).rejects.toThrow(/it is a directory/);
    await expect(readLocalFile(join(dir, 'nope'), opts)).rejects.toThrow(/nope.*ENOENT/);
    const ac = new AbortController();
    ac.abort();
    await expect(readLocalFile('/dev/zero', { ...opts, signal: ac.signal })).rejects.toBeInstanceOf(
      InterruptedError,
    );
  });
});
