/**
 * What a `.part` file belongs to, and who is writing it. A download keeps `<file>.part` (the bytes so far),
 * `<file>.part.json` (the download's id and URL, and the server's validator: ETag / Last-Modified) and, while it
 * runs, `<file>.part.lock` (core/lock.ts: the writer's pid and host). A part is resumed only by the same download,
 * with `If-Range`, and never by two processes at once.
 */
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { GwError } from './errors.js';
import { fsError } from './fs-errors.js';
import { describeOwner, tryLock } from './lock.js';

/** What a partial download is a part of. */
export interface PartIdentity {
  /** The task or video id (or any stable name of the thing downloaded). */
  id?: string | undefined;
  /** The URL (or gateway path) the bytes come from. */
  url?: string | undefined;
}

/** The sidecar of a `.part`: identity and the server's validators. */
export interface PartMeta extends PartIdentity {
  etag?: string | undefined;
  lastModified?: string | undefined;
}

export function metaPath(part: string): string {
  return `${part}.json`;
}

export function lockPath(part: string): string {
  return `${part}.lock`;
}

/** Reads the sidecar; undefined when missing or unreadable (the part then cannot be trusted). */
export function readMeta(part: string): PartMeta | undefined {
  try {
    const doc: unknown = JSON.parse(readFileSync(metaPath(part), 'utf8'));
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return undefined;
    const d = doc as Record<string, unknown>;
    const s = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
    return { id: s(d.id), url: s(d.url), etag: s(d.etag), lastModified: s(d.lastModified) };
  } catch {
    return undefined;
  }
}

export function writeMeta(part: string, meta: PartMeta): void {
  try {
    writeFileSync(metaPath(part), `${JSON.stringify(meta)}\n`, { mode: 0o644 });
  } catch (e) {
    throw fsError(e, { path: metaPath(part), action: 'write' });
  }
}

export function removeMeta(part: string): void {
  try {
    unlinkSync(metaPath(part));
  } catch {
    // already gone
  }
}

/**
 * The `If-Range` value that lets `part` continue, or undefined when it must start over: the sidecar must name
 * the same id and URL, and hold a strong ETag or a Last-Modified date.
 */
export function resumeValidator(meta: PartMeta | undefined, identity: PartIdentity): string | undefined {
  if (meta === undefined) return undefined;
  if (identity.id !== undefined && meta.id !== identity.id) return undefined;
  if (identity.url !== undefined && meta.url !== identity.url) return undefined;
  if (meta.etag !== undefined && !meta.etag.startsWith('W/')) return meta.etag;
  return meta.lastModified;
}

/**
 * Takes the exclusive lock of `part` (`<part>.lock`, through core/lock.ts: a lock left by a process that no longer
 * runs, or by a zombie, is taken over; a live one is a clear error). Returns the release function.
 */
export function lockPart(part: string, file: string): () => void {
  const lock = lockPath(part);
  const a = tryLock(lock);
  if ('release' in a) return a.release;
  throw new GwError(`${describeOwner(a.held)} is downloading to ${file}`, {
    code: 'download_locked',
    hint: `wait for it to finish; if no gw is running, remove ${lock}`,
  });
}
