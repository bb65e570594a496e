import type { Context } from '../context.js';
import type { Flags } from '../verb.js';
import type { batchRunFlags } from './run.js';

/** Runs (or resumes) a batch. */
export default async function run(
  ctx: Context,
  opts: Flags<typeof batchRunFlags>,
  file: string,
): Promise<number> {
  const { runSession, checkBatchDir } = await import('../../batch/session.js');
  await checkBatchDir(opts.out, '--out');
  return runSession(ctx, { input: file, dir: opts.out, flags: opts });
}
