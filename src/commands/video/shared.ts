/** Helpers shared by the `gw video` verbs and `gw history`: time formatting, record rows. */
import { shellWord } from '../shared/job-output.js';
import type { Cell } from '../../ui/output.js';
import { videoError, videoExpiresAt, videoResultUrl } from '../../contract/video.js';

// The one date format lives with the output (ui/output.ts); re-exported for the verbs that print dates.
export { formatLocalTime, formatRelative } from '../../ui/output.js';

/** The command that resumes a wait (printed on timeout and Ctrl-C). */
export function resumeCommand(id: string, download?: string): string {
  return `gw video wait ${id}${download !== undefined ? ` --download ${shellWord(download)}` : ''}`;
}

/** `key: value` rows of a video record: state, result URL, times as `time` prints them (`ctx.out.time`). */
export function videoRows(
  record: Record<string, unknown>,
  requestId: string | undefined,
  time: (d: Date) => string,
  now: number = Date.now(),
): Array<[string, Cell]> {
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
    ['created', created ? time(created) : undefined],
    ['result_url', videoResultUrl(record)],
    ['expires_at', expires ? `${time(expires)}${expires.getTime() <= now ? ' EXPIRED' : ''}` : undefined],
    [
      'error',
      err.code !== undefined || err.message !== undefined
        ? [err.code, err.message].filter(Boolean).join(': ')
        : undefined,
    ],
    ['request_id', requestId],
  ];
}
