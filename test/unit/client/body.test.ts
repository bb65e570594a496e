import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BodyTooLargeError, readText } from '../../../src/client/body.js';

describe('readText (a whole answer, bounded)', () => {
  it('joins the chunks as UTF-8, a character split across chunks included', async () => {
    const euro = Buffer.from('€');
    const body = Readable.from([
      Buffer.from('{"a":"'),
      euro.subarray(0, 1),
      euro.subarray(1),
      Buffer.from('"}'),
    ]);
    await expect(readText(body, 1024)).resolves.toBe('{"a":"€"}');
  });

  it('refuses an answer past the limit and stops reading it', async () => {
    const body = new PassThrough();
    const p = readText(body, 4);
    body.write('12345');
    await expect(p).rejects.toBeInstanceOf(BodyTooLargeError);
    expect(body.destroyed).toBe(true);
  });

  it('keeps the first bytes of an error body past the limit when truncating', async () => {
    const body = new PassThrough();
    const p = readText(body, 4, true);
    body.write('123456');
    await expect(p).resolves.toBe('1234');
  });

  it('rejects with the stream error of an answer cut by an error', async () => {
    const body = new PassThrough();
    const p = readText(body, 1024);
    body.write('{"partial"');
    body.destroy(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }));
    await expect(p).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
  });

  it('rejects an answer that closed before its end (a cut JSON document is no answer)', async () => {
    const body = new PassThrough();
    const p = readText(body, 1024);
    body.write('{"partial"');
    body.destroy();
    await expect(p).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
  });

  it('survives an error the stream emits after the answer was read', async () => {
    const body = new PassThrough({ autoDestroy: false });
    const p = readText(body, 1024);
    body.end('ok');
    await expect(p).resolves.toBe('ok');
    // Without a listener this would be an uncaught exception and fail the run.
    body.emit('error', new Error('late'));
  });
});
