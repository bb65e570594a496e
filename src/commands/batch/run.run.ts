import type { Context } from '../../cli/context.js';
import type { Flags } from '../../cli/verb.js';
import type { batchRunFlags } from './run.js';

/** Runs (or resumes) a batch. */
export default async function run(
  ctx: Context,
  opts: Flags<typeof batchRunFlags>,
  file: string,
): Promise<number> {
  const [{ runSession }, { checkSaveDir }] = await Promise.all([
    import('../../batch/session.js'),
    import('../../core/download.js'),
  ]);
  // The batch directory (created by the run when missing) is checked before anything is read or sent.
  checkSaveDir(opts.out, '--out');
  return runSession(ctx, { input: file, dir: opts.out, flags: opts });
}
