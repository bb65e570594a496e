/** Reading answers with a size cap: whatever the other side sends, memory stays bounded. */
import { pipeline, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

/** An answer body larger than the cap the client reads into memory. */
export class BodyTooLargeError extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(`the answer is larger than ${formatBytes(limit)}`);
    this.name = 'BodyTooLargeError';
    this.limit = limit;
  }
}

/** `1048576` → `1 MiB`. */
export function formatBytes(n: number): string {
  if (n >= 1 << 30 && n % (1 << 30) === 0) return `${n / (1 << 30)} GiB`;
  if (n >= 1 << 20 && n % (1 << 20) === 0) return `${n / (1 << 20)} MiB`;
  if (n >= 1 << 10 && n % (1 << 10) === 0) return `${n / (1 << 10)} KiB`;
  return `${n} bytes`;
}

const ignore = (): void => {};

/** What `for await` over a body that closed before its end throws (Node's own code and message). */
const prematureClose = (): Error =>
  Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });

/**
 * Reads a whole body as UTF-8 text, at most `limit` bytes. Past the limit: `truncate` returns what was read and
 * drops the rest (error bodies: only the message matters), otherwise the body is destroyed and a
 * BodyTooLargeError thrown (JSON answers: a cut JSON document is no answer). A body that closes before its end
 * rejects (ERR_STREAM_PREMATURE_CLOSE), as `for await` over it would; data events instead of an async iterator,
 * because a batch reads thousands of small answers a second and the iterator's machinery was a visible part of it.
 */
export function readText(body: Readable, limit: number, truncate = false): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (err: Error | undefined, text?: string): void => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      body.off('close', onClose);
      // An error emitted after this (a late socket error) must not become an uncaught exception.
      body.on('error', ignore);
      if (err !== undefined) reject(err);
      else resolve(text ?? '');
    };
    const whole = (): string => Buffer.concat(chunks, size).toString('utf8');
    const onData = (chunk: Buffer): void => {
      if (size + chunk.length > limit) {
        if (truncate) {
          chunks.push(chunk.subarray(0, limit - size));
          size = limit;
          settle(undefined, whole());
        } else settle(new BodyTooLargeError(limit));
        body.destroy();
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    };
    const onEnd = (): void => settle(undefined, whole());
    const onError = (e: Error): void => settle(e);
    const onClose = (): void => settle(prematureClose());
    if (body.readableEnded) {
      resolve('');
      return;
    }
    if (body.destroyed) {
      reject(body.errored ?? prematureClose());
      return;
    }
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('error', onError);
    body.once('close', onClose);
  });
}

/**
 * The body decoded as its Content-Encoding says (gzip, deflate, br; several in order), or itself when identity.
 * gw does not ask for compression (no Accept-Encoding), but some gateways compress anyway, and a user may ask with
 * `--header 'Accept-Encoding: gzip'`. The readers after this bound the decoded size, so a small bomb stays small.
 * An encoding zlib has no decoder for is undefined: the caller reports it.
 */
export function decodedBody(body: Readable, encoding: string | undefined): Readable | undefined {
  if (encoding === undefined) return body; // nearly every answer: nothing to parse
  const codings = encoding
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  let out = body;
  // Applied in the order listed, so decoded in reverse.
  for (const c of codings.reverse()) {
    const d =
      c === 'gzip' || c === 'x-gzip'
        ? createGunzip()
        : c === 'deflate'
          ? createInflate()
          : c === 'br'
            ? createBrotliDecompress()
            : undefined;
    if (d === undefined) return undefined;
    // pipeline: an error on either side ends both (a cut body fails the reader, as it does undecoded).
    out = pipeline(out, d, () => undefined);
  }
  return out;
}
