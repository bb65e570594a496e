import type { GatewayClient } from '../../../client/gateway-client.js';
import type { BetaTask } from '../../../contract/beta.js';
import { formatDuration } from '../../../core/duration.js';
import { InterruptedError, TaskNotSucceededError, TimeLimitError } from '../../../core/errors.js';
import type { Context } from '../../../cli/context.js';
import type { Flags } from '../../../cli/verb.js';
import type { taskWaitFlags } from './wait.js';
import { isTimeout, isInterrupted } from '../../../core/error-map.js';
import { clockOf } from '../../../ui/io.js';
import { printWaitOutcome } from '../../shared/job-output.js';
import * as tasks from '../../../client/resources/beta-tasks.js';

/** The command that resumes a wait (printed on timeout and Ctrl-C). */
export function resumeCommand(ctx: Context, id: string): string {
  const profile = ctx.globals.profile !== undefined ? ` --profile ${ctx.globals.profile}` : '';
  return `gw beta task wait ${id}${profile}`;
}

/**
 * Follows a task to a terminal status (§3) and returns its final record, whatever it is. Throws TimeLimitError
 * (exit 4) or InterruptedError (exit 130) carrying the resume command. The journal keeps the last state seen.
 */
export async function followTask(
  ctx: Context,
  client: GatewayClient,
  id: string,
  o: { timeoutMs: number | undefined; resume?: string | undefined },
): Promise<BetaTask> {
  const spin = await ctx.progress.spinner(`task ${id}: waiting`);
  let last: BetaTask | undefined;
  let task: BetaTask;
  try {
    task = await tasks.wait(client, id, {
      timeoutMs: o.timeoutMs,
      requestTimeoutMs: ctx.settings().timeoutMs,
      signal: ctx.signal,
      onUpdate: (t) => {
        last = t;
        spin.update(`task ${id}: ${t.status}`);
      },
      onTransient: (e, ms) => spin.update(`task ${id}: ${e.message}; retrying in ${formatDuration(ms)}`),
      ...clockOf(ctx.io),
    });
  } catch (e) {
    spin.stop();
    if (last !== undefined) ctx.journal().update('beta-task', id, last.status);
    const hint = `resume with: ${o.resume ?? resumeCommand(ctx, id)}`;
    if (isTimeout(e)) {
      throw new TimeLimitError(`task ${id} is still ${last?.status ?? 'unfinished'}: ${e.message}`, {
        hint,
        requestId: e.requestId,
      });
    }
    if (isInterrupted(e)) throw new InterruptedError(`interrupted while waiting for task ${id}`, { hint });
    throw e;
  }
  ctx.journal().update('beta-task', id, task.status);
  if (task.status === 'succeeded') spin.succeed(`task ${id}: succeeded`);
  else spin.fail(`task ${id}: ${task.status}`);
  return task;
}

/** Exit 1 (TaskNotSucceededError) unless the task `succeeded`: failed, expired and cancelled are not successes (§3). */
export function assertSucceeded(task: BetaTask): void {
  if (task.status === 'succeeded') return;
  const why =
    task.error?.message !== undefined ? `: ${task.error.code ?? 'error'}: ${task.error.message}` : '';
  throw new TaskNotSucceededError(`task ${task.id} ended ${task.status}${why}`, {
    state: task.status,
    taskId: task.id,
    hint:
      task.status === 'expired'
        ? 'the task passed execution_expires_after before it finished; create it again'
        : task.status === 'cancelled'
          ? 'the task was cancelled; create it again if needed'
          : 'failed tasks are not billed as successes; check the prompt and references and create it again',
  });
}

/** Waits for one task: its final state on stderr, the final record with --json (printWaitOutcome). */
export default async function run(
  ctx: Context,
  opts: Flags<typeof taskWaitFlags>,
  id: string,
): Promise<void> {
  const timeoutMs = ctx.waitLimitMs(opts.timeout);
  const client = await ctx.client();
  const task = await followTask(ctx, client, id, { timeoutMs });
  printWaitOutcome(ctx, id, task.status);
  ctx.out.jsonOnly(task);
  assertSucceeded(task);
}
