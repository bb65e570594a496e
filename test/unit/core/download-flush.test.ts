/**
 * A download starts writing its part back to disk while the bytes arrive, so the fsync before the rename has little
 * left to do; and a write-back that fails on the way fails the download. The file system's fdatasync is observed
 * (and, for the failure, made to fail) through a mock of node:fs that otherwise calls the real one.
 */
import type * as Fs from 'node:fs';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { download, partPath, type DownloadAnswer } from '../../../src/core/download.js';
import { GwError } from '../../../src/core/errors.js';
import { tempDir } from '../../helpers/tmp.js';

/** What the mocked fdatasync does: the real call, or an I/O error. */
const flush = vi.hoisted(() => ({ fail: false, calls: [] as number[], bytes: 0 }));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof Fs>();
  const fdatasync = (fd: number, cb: (e: NodeJS.ErrnoException | null) => void): void => {
    flush.calls.push(flush.bytes);
    if (flush.fail) {
      setImmediate(() => cb(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })));
      return;
    }
    fs.fdatasync(fd, cb);
  };
  return { ...fs, fdatasync, default: { ...fs, fdatasync } };
});

afterEach(() => {
  flush.fail = false;
  flush.calls = [];
  flush.bytes = 0;
});

const MIB = 1024 * 1024;
const SIZE = 40 * MIB;

/** An answer of SIZE bytes in 1 MiB chunks. */
function answer(): DownloadAnswer {
  const chunk = Buffer.alloc(MIB, 0x5a);
  let sent = 0;
  const body = new Readable({
    read() {
      sent += MIB;
      this.push(chunk);
      if (sent >= SIZE) this.push(null);
    },
  });
  return { status: 200, headers: { 'content-length': String(SIZE), etag: '"v1"' }, body };
}

describe('download write-back', () => {
  it('flushes the part to disk while it downloads, not only once the last byte is in', async () => {
    const file = join(tempDir('gw-dlf-'), 'out.mp4');
    const r = await download({
      open: () => Promise.resolve(answer()),
      file,
      onProgress: (n) => (flush.bytes = n),
    });
    expect(r.bytes).toBe(SIZE);
    expect(statSync(file).size).toBe(SIZE);
    expect(flush.calls.length).toBeGreaterThan(0);
    expect(flush.calls[0]).toBeLessThan(SIZE);
  });

  it('a write-back error fails the download: nothing at the final path, the part kept', async () => {
    flush.fail = true;
    const file = join(tempDir('gw-dlf-'), 'out.mp4');
    const err = await download({ open: () => Promise.resolve(answer()), file }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GwError);
    expect((err as GwError).message).toContain('EIO');
    expect(existsSync(file)).toBe(false);
    expect(statSync(partPath(file)).size).toBe(SIZE);
  });
});
