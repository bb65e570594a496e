/** Reading answers with a size cap: whatever the other side sends, memory stays bounded. */
import type { Readable } from 'node:stream';

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

/**
 * Reads a whole body as UTF-8 text, at most `limit` bytes. Past the limit: `truncate` returns what was read and
 * drops the rest (error bodies: only the message matters), otherwise the body is destroyed and a
 * BodyTooLargeError thrown (JSON answers: a cut JSON document is no answer).
 */
export async function readText(body: Readable, limit: number, truncate = false): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = chunk as Buffer;
    if (size + buf.length > limit) {
      body.destroy();
      if (!truncate) throw new BodyTooLargeError(limit);
      chunks.push(buf.subarray(0, limit - size));
      size = limit;
      break;
    }
    chunks.push(buf);
    size += buf.length;
  }
  return Buffer.concat(chunks, size).toString('utf8');
}
