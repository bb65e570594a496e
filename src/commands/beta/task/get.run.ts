import type { BetaTask } from '../../../contract/beta.js';
import type { Cell } from '../../../ui/output.js';
import type { Context } from '../../../cli/context.js';
import { formatLocalTime } from '../../video/shared.js';
import * as tasks from '../../../client/resources/beta-tasks.js';

function time(s: number | undefined): string | undefined {
  return s !== undefined ? formatLocalTime(new Date(s * 1000)) : undefined;
}

/** A task record (§2.5) as aligned key-value rows. */
export function taskRows(t: BetaTask): Array<[string, Cell]> {
  const usage =
    t.usage !== undefined && t.usage !== null
      ? `${t.usage.completion_tokens ?? '?'} completion / ${t.usage.total_tokens ?? '?'} total tokens`
      : undefined;
  return [
    ['id', t.id],
    ['model', t.model],
    ['status', t.status],
    ['resolution', t.resolution],
    ['ratio', t.ratio],
    ['duration', t.duration !== undefined ? `${t.duration}s` : undefined],
    ['fps', t.framespersecond],
    ['seed', t.seed],
    ['usage', usage],
    ['service_tier', t.service_tier],
    ['priority', t.priority],
    ['generate_audio', t.generate_audio],
    ['draft', t.draft],
    ['expires_after', t.execution_expires_after !== undefined ? `${t.execution_expires_after}s` : undefined],
    ['safety_id', t.safety_identifier],
    ['created', time(t.created_at)],
    ['updated', time(t.updated_at)],
    ['video_url', t.content?.video_url],
    ['last_frame_url', t.content?.last_frame_url],
    ['error', t.error ? `${t.error.code ?? 'error'}: ${t.error.message ?? ''}` : undefined],
  ];
}

/** Shows one task. */
export default async function run(ctx: Context, _flags: unknown, id: string): Promise<void> {
  const client = await ctx.client();
  const res = await tasks.retrieve(client, id, { signal: ctx.signal });
  await ctx.out.result(res.data, (t) => {
    ctx.out.keyValue(taskRows(t));
    if (t.content?.video_url !== undefined) {
      ctx.out.tip(`the result URL stays valid about 24 hours: gw beta task download ${id}`);
    }
  });
}
