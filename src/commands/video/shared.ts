/** Helpers shared by the `gw video` verbs and `gw history`: time formatting, record rows. */
import { shellWord } from '../shared/job-output.js';
import type { Cell } from '../../ui/output.js';

/** `2026-11-22 14:03:05 +01:00` in the machine's time zone. */
export function formatLocalTime(d: Date): string {
  const p = (n: number): string => String(Math.abs(n)).padStart(2, '0');
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  return (
    `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ` +
    `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())} ${sign}${p(Math.trunc(off / 60))}:${p(off % 60)}`
  );
}

/** `in 23 h`, `in 5 min`, `in 40 s`, `in 3 d`, or `2 h ago` for the past. */
export function formatRelative(deltaMs: number): string {
  const abs = Math.abs(deltaMs);
  if (abs < 1000) return 'just now';
  let text: string;
  if (abs < 60_000) text = `${Math.round(abs / 1000)} s`;
  else if (abs < 3_600_000) text = `${Math.round(abs / 60_000)} min`;
  else if (abs < 48 * 3_600_000) text = `${Math.round(abs / 3_600_000)} h`;
  else text = `${Math.round(abs / 86_400_000)} d`;
  return deltaMs >= 0 ? `in ${text}` : `${text} ago`;
}

/** A point in time as `local time (in 23 h)`. */
export function timeWithRelative(d: Date, now: number = Date.now()): string {
  return `${formatLocalTime(d)} (${formatRelative(d.getTime() - now)})`;
}

/** The command that resumes a wait (printed on timeout and Ctrl-C). */
export function resumeCommand(id: string, download?: string): string {
  return `gw video wait ${id}${download !== undefined ? ` --download ${shellWord(download)}` : ''}`;
}

/** `key: value` rows of a video record: state, result URL, expires_at as local time and relative. */
export async function videoRows(
  record: Record<string, unknown>,
  requestId: string | undefined,
  now: number = Date.now(),
): Promise<Array<[string, Cell]>> {
  const { videoError, videoExpiresAt, videoResultUrl } = await import('../../contract/video.js');
  const str = (v: unknown): string | undefined =>
    typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
  const expires = videoExpiresAt(record);
  const created = typeof record.created_at === 'number' ? new Date(record.created_at * 1000) : undefined;
  const err = videoError(record);
  const progress = typeof record.progress === 'number' ? `${record.progress}%` : undefined;
  return [
    ['video_id', str(record.video_id) ?? str(record.id)],
    ['state', str(record.status)],
    ['model', str(record.model)],
    ['progress', progress],
    ['seconds', str(record.seconds)],
    ['resolution', str(record.resolution)],
    ['created', created ? timeWithRelative(created, now) : undefined],
    ['result_url', videoResultUrl(record)],
    [
      'expires_at',
      expires ? `${timeWithRelative(expires, now)}${expires.getTime() <= now ? ' EXPIRED' : ''}` : undefined,
    ],
    [
      'error',
      err.code !== undefined || err.message !== undefined
        ? [err.code, err.message].filter(Boolean).join(': ')
        : undefined,
    ],
    ['request_id', requestId],
  ];
}
