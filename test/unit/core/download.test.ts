import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/client/errors.js';
import { GatewayClient } from '../../../src/client/gateway-client.js';
import {
  checkTarget,
  download,
  parseContentRange,
  partPath,
  type DownloadAnswer,
  outputPath,
} from '../../../src/core/download.js';
import { lockPath, metaPath, writeMeta } from '../../../src/core/download-part.js';
import { GwError, InterruptedError, UsageError } from '../../../src/core/errors.js';
import { tempDir } from '../../helpers/tmp.js';

const DATA = Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 7 + 3) & 0xff));
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

function dir(): string {
  return tempDir('gw-dl-');
}

/** A synthetic answer: `bytes` from `start`, optionally failing after `failAfter` bytes. */
function answer(
  o: { status?: number; start?: number; total?: number; failAfter?: number; lengthHeader?: number } = {},
): DownloadAnswer {
  const start = o.start ?? 0;
  const slice = DATA.subarray(start);
  const status = o.status ?? (start > 0 ? 206 : 200);
  const headers: DownloadAnswer['headers'] = {
    'content-length': String(o.lengthHeader ?? slice.length),
    etag: '"v1"',
  };
  if (status === 206)
    headers['content-range'] = `bytes ${start}-${DATA.length - 1}/${o.total ?? DATA.length}`;
  const body =
    o.failAfter === undefined
      ? Readable.from([slice.subarray(0, 40_000), slice.subarray(40_000)])
      : new Readable({
          read() {
            this.push(slice.subarray(0, o.failAfter));
            this.destroy(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }));
          },
        });
  return { status, headers, body };
}

describe('parseContentRange', () => {
  it('reads start, end and total', () => {
    expect(parseContentRange('bytes 10-99/100')).toEqual({ start: 10, end: 99, total: 100 });
    expect(parseContentRange('bytes 0-9/*')).toEqual({ start: 0, end: 9, total: undefined });
    expect(parseContentRange('nonsense')).toBeUndefined();
    expect(parseContentRange(undefined)).toBeUndefined();
  });
});

describe('download', () => {
  it('writes the exact bytes, hashes them when asked and leaves no .part', async () => {
    const file = join(dir(), 'out.mp4');
    const seen: number[] = [];
    const r = await download({
      open: () => Promise.resolve(answer()),
      file,
      sha256: true,
      onProgress: (n) => seen.push(n),
    });
    expect(r).toEqual({ path: file, bytes: DATA.length, sha256: sha(DATA), resumed: false });
    expect(readFileSync(file).equals(DATA)).toBe(true);
    expect(existsSync(partPath(file))).toBe(false);
    expect(seen.at(-1)).toBe(DATA.length);
  });

  it('computes no hash unless asked (the result has no sha256)', async () => {
    const file = join(dir(), 'out.mp4');
    const r = await download({ open: () => Promise.resolve(answer()), file });
    expect(r).toEqual({ path: file, bytes: DATA.length, resumed: false });
    expect(readFileSync(file).equals(DATA)).toBe(true);
  });

  it('refuses to overwrite an existing file without force, before opening anything', async () => {
    const file = join(dir(), 'out.mp4');
    writeFileSync(file, 'old');
    let opened = 0;
    const open = (): Promise<DownloadAnswer> => {
      opened++;
      return Promise.resolve(answer());
    };
    await expect(download({ open, file })).rejects.toBeInstanceOf(UsageError);
    await expect(checkTarget(file, false)).rejects.toThrow(/--force/);
    expect(opened).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe('old');
    await download({ open, file, force: true });
    expect(readFileSync(file).equals(DATA)).toBe(true);
  });

  it('keeps the .part after a dropped connection (nothing at the final path) and resumes it with Range', async () => {
    const file = join(dir(), 'out.mp4');
    const err = await download({ open: () => Promise.resolve(answer({ failAfter: 30_000 })), file }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(GwError);
    expect((err as GwError).code).toBe('download_incomplete');
    expect((err as GwError).hint).toContain('.part');
    expect(existsSync(file)).toBe(false);
    expect(readFileSync(partPath(file)).length).toBe(30_000);

    const ranges: Array<number | undefined> = [];
    const r = await download({
      open: (start) => {
        ranges.push(start);
        return Promise.resolve(answer({ start: start ?? 0 }));
      },
      file,
      sha256: true,
    });
    expect(ranges).toEqual([30_000]);
    expect(r.resumed).toBe(true);
    expect(r.sha256).toBe(sha(DATA));
    expect(r.bytes).toBe(DATA.length);
    expect(readFileSync(file).equals(DATA)).toBe(true);
    expect(existsSync(partPath(file))).toBe(false);
  });

  it('restarts cleanly when the server answers 200 to a Range request', async () => {
    const file = join(dir(), 'out.mp4');
    writeFileSync(partPath(file), Buffer.from('garbage that is not a prefix'));
    const r = await download({
      open: () => Promise.resolve(answer({ status: 200 })),
      file,
      sha256: true,
    });
    expect(r.resumed).toBe(false);
    expect(readFileSync(file).equals(DATA)).toBe(true);
    expect(r.sha256).toBe(sha(DATA));
  });

  it('restarts from zero when the server answers 416 to the Range request', async () => {
    const file = join(dir(), 'out.mp4');
    writeFileSync(partPath(file), DATA);
    writeMeta(partPath(file), { etag: '"v1"' });
    const ranges: Array<number | undefined> = [];
    const r = await download({
      open: (start) => {
        ranges.push(start);
        if (start !== undefined) {
          return Promise.reject(new GatewayError({ status: 416, code: 'http_416', message: 'range' }));
        }
        return Promise.resolve(answer());
      },
      file,
    });
    expect(ranges).toEqual([DATA.length, undefined]);
    expect(readFileSync(file).equals(DATA)).toBe(true);
    expect(r.resumed).toBe(false);
  });

  it('does not rename when fewer bytes arrive than Content-Length says', async () => {
    const file = join(dir(), 'out.mp4');
    const err = await download({
      open: () => Promise.resolve(answer({ lengthHeader: DATA.length + 10 })),
      file,
    }).catch((e: unknown) => e);
    expect((err as GwError).code).toBe('download_incomplete');
    expect((err as GwError).message).toContain(`received ${DATA.length} of ${DATA.length + 10}`);
    expect(existsSync(file)).toBe(false);
  });

  it('starts again when a 206 resumes at another offset', async () => {
    const file = join(dir(), 'out.mp4');
    writeFileSync(partPath(file), DATA.subarray(0, 100));
    writeMeta(partPath(file), { etag: '"v1"' });
    const ranges: Array<number | undefined> = [];
    const r = await download({
      open: (start) => {
        ranges.push(start);
        return Promise.resolve(answer(start !== undefined ? { start: 200 } : {}));
      },
      file,
    });
    expect(ranges).toEqual([100, undefined]);
    expect(r.resumed).toBe(false);
    expect(readFileSync(file).equals(DATA)).toBe(true);
  });

  it('writes to stdout for "-" without ending it', async () => {
    const sink = new PassThrough();
    const parts: Buffer[] = [];
    sink.on('data', (c: Buffer) => parts.push(c));
    const r = await download({
      open: () => Promise.resolve(answer()),
      file: '-',
      stdout: sink,
      sha256: true,
    });
    expect(r).toEqual({ path: '-', bytes: DATA.length, sha256: sha(DATA), resumed: false });
    expect(Buffer.concat(parts).equals(DATA)).toBe(true);
    expect(sink.writableEnded).toBe(false);
  });

  it('names a local write failure as such (not a dropped connection), with nothing at the final path', async () => {
    const file = join(dir(), 'no-such-dir', 'out.mp4');
    const e = await download({ open: () => Promise.resolve(answer()), file }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(GwError);
    expect((e as GwError).code).toBe('not_found');
    expect((e as GwError).message).toContain(join('no-such-dir'));
    expect((e as GwError).message).toContain('(ENOENT)');
    expect(existsSync(file)).toBe(false);
  });

  it('turns an abort into InterruptedError and keeps the part', async () => {
    const file = join(dir(), 'out.mp4');
    const ac = new AbortController();
    const body = new Readable({
      read() {
        this.push(DATA.subarray(0, 1000));
        ac.abort();
      },
    });
    const err = await download({
      open: () => Promise.resolve({ status: 200, headers: {}, body }),
      file,
      signal: ac.signal,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InterruptedError);
    expect(existsSync(file)).toBe(false);
  });
});

describe('download over HTTP (GatewayClient.raw)', () => {
  let server: Server | undefined;
  afterEach(async () => {
    const s = server;
    server = undefined;
    if (s) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });

  it('sends Range: bytes=N- for a kept part and gets the exact bytes', async () => {
    const ranges: Array<string | undefined> = [];
    let drop = true;
    server = createServer((req, res) => {
      ranges.push(req.headers.range);
      const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
      const start = m ? Number(m[1]) : 0;
      const headers: Record<string, string | number> = {
        'content-length': DATA.length - start,
        etag: '"abc"',
      };
      if (m) headers['content-range'] = `bytes ${start}-${DATA.length - 1}/${DATA.length}`;
      res.writeHead(m ? 206 : 200, headers);
      if (drop) {
        drop = false;
        res.write(DATA.subarray(0, 12_345));
        setTimeout(() => res.socket?.destroy(), 10);
        return;
      }
      res.end(DATA.subarray(start));
    });
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = new GatewayClient({ baseUrl: url, token: 't', sleep: () => Promise.resolve() });
    const file = join(dir(), 'v.mp4');
    const ifRange: Array<string | undefined> = [];
    server.on('request', (req: { headers: Record<string, string | undefined> }) =>
      ifRange.push(req.headers['if-range']),
    );
    const open = (_s: number | undefined, _signal: unknown, headers: Record<string, string>) =>
      client.raw({ path: '/file', headers });
    await expect(download({ open, file })).rejects.toMatchObject({ code: 'download_incomplete' });
    const r = await download({ open, file });
    await client.close();
    expect(ranges).toEqual([undefined, 'bytes=12345-']);
    expect(ifRange).toEqual([undefined, '"abc"']);
    expect(r.resumed).toBe(true);
    expect(readFileSync(file).equals(DATA)).toBe(true);
  });
});

describe('download: a .part belongs to one download, one writer', () => {
  /** A kept half part of `DATA`, recorded for `id` with ETag "v1". */
  function halfPart(file: string, id = 'video_1'): void {
    writeFileSync(partPath(file), DATA.subarray(0, 50_000));
    writeMeta(partPath(file), { id, url: '/v1/videos/video_1/content', etag: '"v1"' });
  }
  const identity = { id: 'video_1', url: '/v1/videos/video_1/content' };

  it('resumes only with If-Range carrying the recorded validator, then removes the sidecar', async () => {
    const file = join(dir(), 'out.mp4');
    halfPart(file);
    const sent: Array<Record<string, string>> = [];
    const r = await download({
      identity,
      file,
      open: (start, _s, headers) => {
        sent.push(headers);
        return Promise.resolve(answer({ start: start ?? 0 }));
      },
    });
    expect(sent).toEqual([{ range: 'bytes=50000-', 'if-range': '"v1"' }]);
    expect(r.resumed).toBe(true);
    expect(readFileSync(file).equals(DATA)).toBe(true);
    expect(existsSync(metaPath(partPath(file)))).toBe(false);
    expect(existsSync(lockPath(partPath(file)))).toBe(false);
  });

  it('never resumes a part recorded for another id (or with no record at all): starts over', async () => {
    for (const prepare of [
      (f: string) => halfPart(f, 'video_OTHER'),
      (f: string) => writeFileSync(partPath(f), DATA.subarray(0, 50_000)),
    ]) {
      const file = join(dir(), 'out.mp4');
      prepare(file);
      const sent: Array<Record<string, string>> = [];
      const r = await download({
        identity,
        file,
        open: (_start, _s, headers) => {
          sent.push(headers);
          return Promise.resolve(answer());
        },
      });
      expect(sent).toEqual([{}]);
      expect(r.resumed).toBe(false);
      expect(readFileSync(file).equals(DATA)).toBe(true);
    }
  });

  it('accepts a 206 only when Content-Range is exactly the rest of the file (start, end and total)', async () => {
    const bad = [
      `bytes 50000-60000/${DATA.length}`, // wrong end
      `bytes 50000-${DATA.length - 1}/${DATA.length + 5}`, // wrong total
      `bytes 50000-${DATA.length - 1}/*`, // unknown total
      'garbage',
    ];
    for (const range of bad) {
      const file = join(dir(), 'out.mp4');
      halfPart(file);
      const opened: Array<number | undefined> = [];
      const r = await download({
        identity,
        file,
        open: (start) => {
          opened.push(start);
          if (start === undefined) return Promise.resolve(answer());
          const a = answer({ start });
          a.headers['content-range'] = range;
          return Promise.resolve(a);
        },
      });
      expect(opened, range).toEqual([50_000, undefined]);
      expect(r.resumed).toBe(false);
      expect(readFileSync(file).equals(DATA)).toBe(true);
    }
  });

  it('a status other than 200/206 (204, 203, 206 unasked) is a clean error with nothing written', async () => {
    for (const status of [204, 203, 206, 302]) {
      const file = join(dir(), 'out.mp4');
      const e = await download({
        file,
        open: () => Promise.resolve({ status, headers: {}, body: Readable.from([Buffer.from('x')]) }),
      }).catch((x: unknown) => x);
      expect(e, String(status)).toBeInstanceOf(GwError);
      expect((e as GwError).code).toBe('download_status');
      expect((e as GwError).message).toContain(`HTTP ${status}`);
      expect(existsSync(file)).toBe(false);
    }
    const sink = new PassThrough();
    await expect(
      download({
        file: '-',
        stdout: sink,
        open: () => Promise.resolve({ status: 204, headers: {}, body: Readable.from([]) }),
      }),
    ).rejects.toMatchObject({ code: 'download_status' });
  });

  it("a second writer of the same part is refused while the first runs; a dead owner's lock is taken over", async () => {
    const file = join(dir(), 'out.mp4');
    let release: (() => void) | undefined;
    const slow = new Readable({ read() {} });
    const first = download({
      file,
      open: () => {
        release = () => {
          slow.push(DATA);
          slow.push(null);
        };
        return Promise.resolve({
          status: 200,
          headers: { 'content-length': String(DATA.length) },
          body: slow,
        });
      },
    });
    await new Promise((r) => setImmediate(r));
    const e = await download({ file, open: () => Promise.resolve(answer()) }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(GwError);
    expect((e as GwError).code).toBe('download_locked');
    expect((e as GwError).message).toContain(`pid ${process.pid}`);
    release?.();
    await first;
    expect(readFileSync(file).equals(DATA)).toBe(true);

    // A lock left by a crashed process (a pid that does not run) does not block for ever.
    const file2 = join(dir(), 'out.mp4');
    writeFileSync(lockPath(partPath(file2)), `999999999 ${(await import('node:os')).hostname()}\n`);
    await download({ file: file2, open: () => Promise.resolve(answer()) });
    expect(readFileSync(file2).equals(DATA)).toBe(true);
    expect(existsSync(lockPath(partPath(file2)))).toBe(false);
  });
});

describe('outputPath / checkTarget', () => {
  it('saves into a directory (existing, or written with a trailing slash) under the given name', () => {
    const d = dir();
    expect(outputPath(d, 'video_1.mp4')).toBe(join(d, 'video_1.mp4'));
    expect(outputPath(`${d}/`, 'video_1.mp4')).toBe(join(d, 'video_1.mp4'));
    expect(outputPath(join(d, 'x.mp4'), 'video_1.mp4')).toBe(join(d, 'x.mp4'));
    expect(outputPath('-', 'v.mp4')).toBe('-');
  });

  it('refuses an empty path, a missing directory, a parent that is a file, and a directory as a file name', async () => {
    const d = dir();
    expect(() => outputPath('')).toThrow(UsageError);
    expect(() => outputPath('', 'v.mp4')).toThrow(/empty/);
    expect(() => outputPath(join(d, 'missing', 'v.mp4'))).toThrow(/missing.*\(ENOENT\)/);
    expect(() => outputPath(join(d, 'missing') + '/', 'v.mp4')).toThrow(/mkdir -p|ENOENT/);
    writeFileSync(join(d, 'file'), 'x');
    expect(() => outputPath(join(d, 'file', 'v.mp4'))).toThrow(/not a directory/);
    await expect(checkTarget(d, false)).rejects.toThrow(/is a directory; give a file name/);
    await expect(checkTarget(d, false, { allowDirectory: true })).resolves.toBeUndefined();
    await expect(checkTarget('', false)).rejects.toBeInstanceOf(UsageError);
  });
});
